package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	msqlite "modernc.org/sqlite" // and the driver "sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlstore"
)

// conn is the database as sqlstore runs it: reads on the read pool,
// writes and transactions on the one writer connection, whose
// transactions run the statements of stmts (the Store's writerStmts) as
// prepared at Open.
type conn struct {
	w, r  *sql.DB
	stmts map[string]*sql.Stmt
}

var _ sqlstore.Conn = conn{}

func (c conn) Reader() sqlstore.Querier { return querier{c.r} }
func (c conn) Writer() sqlstore.Querier { return querier{c.w} }
func (c conn) Err(err error) error      { return classify(err) }

func (c conn) Begin(ctx context.Context) (sqlstore.Tx, error) {
	t, err := c.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return tx{querier{txPrepared{t, c.stmts}}, t}, nil
}

// txPrepared is a transaction that runs a statement prepared at Open
// where there is one for the query.
type txPrepared struct {
	*sql.Tx
	stmts map[string]*sql.Stmt
}

func (t txPrepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmts[query]; st != nil {
		return t.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// sqlQuerier is what a pool and a transaction have in common.
type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type querier struct{ x sqlQuerier }

func (q querier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.x.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q querier) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := q.x.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (q querier) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return q.x.QueryRowContext(ctx, query, args...)
}

type tx struct {
	querier
	t *sql.Tx
}

func (t tx) Commit(context.Context) error   { return t.t.Commit() }
func (t tx) Rollback(context.Context) error { return t.t.Rollback() }

// classify maps err onto the store's errors: no rows is
// store.ErrNotFound, a violated unique index or primary key wraps
// store.ErrConflict.
func classify(err error) error {
	var se *msqlite.Error
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	case errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY):
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	default:
		return err
	}
}
