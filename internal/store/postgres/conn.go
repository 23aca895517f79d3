package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// conn is the guarded pool (guard.go) as sqlstore runs it: reads and
// writes alike go to the pool.
type conn struct{ d *db }

var _ sqlstore.Conn = conn{}

func (c conn) Reader() sqlstore.Querier { return querier{c.d} }
func (c conn) Writer() sqlstore.Querier { return querier{c.d} }
func (c conn) Err(err error) error      { return classify(err) }

func (c conn) Begin(ctx context.Context) (sqlstore.Tx, error) {
	t, err := c.d.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx{querier{t}, t}, nil
}

// pgxQuerier is what the pool and a transaction have in common.
type pgxQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type querier struct{ x pgxQuerier }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := q.x.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.x.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return closer{rows}, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.x.QueryRow(ctx, query, args...)
}

// closer is pgx.Rows with the Close of sqlstore.Rows.
type closer struct{ pgx.Rows }

func (r closer) Close() error {
	r.Rows.Close()
	return nil
}

type tx struct {
	querier
	t pgx.Tx
}

func (t tx) Commit(ctx context.Context) error   { return t.t.Commit(ctx) }
func (t tx) Rollback(ctx context.Context) error { return t.t.Rollback(ctx) }

// uniqueViolation is the SQLSTATE of unique_violation.
const uniqueViolation = "23505"

// classify maps err onto the store's errors: no rows is
// store.ErrNotFound, a unique violation store.ErrConflict, a database
// that did not answer (guard.go) wraps store.ErrUnavailable.
func classify(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrNotFound
	case errors.As(err, &pgErr) && pgErr.Code == uniqueViolation:
		return fmt.Errorf("%w (constraint %s)", store.ErrConflict, pgErr.ConstraintName)
	case unavailable(err):
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	default:
		return err
	}
}

// wrap maps err to the store's errors and prefixes the operation; nil
// stays nil.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("postgres: %s: %w", op, classify(err))
}
