package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver "sqlite"

	"github.com/fleethub/fleethub/internal/store"
)

// sqlConn is a Conn over one database/sql pool, enough to migrate a
// SQLite file and run the statements a test needs.
type sqlConn struct{ db *sql.DB }

type sqlQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type sqlQ struct{ x sqlQuerier }

func (q sqlQ) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.x.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQ) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return q.x.QueryContext(ctx, query, args...)
}

func (q sqlQ) QueryRow(ctx context.Context, query string, args ...any) Row {
	return q.x.QueryRowContext(ctx, query, args...)
}

type sqlTx struct {
	sqlQ
	tx *sql.Tx
}

func (t sqlTx) Commit(context.Context) error   { return t.tx.Commit() }
func (t sqlTx) Rollback(context.Context) error { return t.tx.Rollback() }

func (c sqlConn) Reader() Querier { return sqlQ{c.db} }
func (c sqlConn) Writer() Querier { return sqlQ{c.db} }
func (c sqlConn) Begin(ctx context.Context) (Tx, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqlTx{sqlQ{tx}, tx}, nil
}
func (c sqlConn) Err(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	return err
}

// TestAlertStepsMigration: the alert steps a database held before they
// were keyed by channel (migration 13) are kept, with their claims and
// their done marks, and taken as before.
func TestAlertStepsMigration(t *testing.T) {
	ctx := t.Context()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fleethub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	c := sqlConn{db}
	t0 := time.UnixMilli(1_800_000_000_000).UTC()
	if err := migrate(ctx, c, SQLite, time.Now, 12); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		id, kind, owner string
		level           int
		lease, done     time.Time
	}{
		{"a1", store.AlertDueEscalation, "", 1, time.Time{}, time.Time{}},
		{"a1", store.AlertDueExpiry, "", 0, time.Time{}, time.Time{}},
		{"a2", store.AlertDueEscalation, "n1", 1, t0.Add(time.Hour), time.Time{}}, // claimed by a live node
		{"a3", store.AlertDueEscalation, "n1", 1, t0, t0},                         // done
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO alert_schedule(alert_id, org, env, kind, level, due_at, owner, lease_until, done_at)
			VALUES (?, 'o1', 'test', ?, ?, ?, ?, ?, ?)`, r.id, r.kind, r.level, MS(t0), r.owner, MS(r.lease), MS(r.done)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Migrate(ctx, c, SQLite, time.Now); err != nil {
		t.Fatal(err)
	}
	s := New(c, SQLite)
	now := t0.Add(time.Minute)
	got, err := s.ClaimDueAlerts(ctx, "n2", now, now.Add(time.Minute), 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("claimed %+v %v, want a1's two steps", got, err)
	}
	for _, d := range got {
		if d.AlertID != "a1" || d.Org != "o1" || d.Channel != "" || !d.DueAt.Equal(t0) {
			t.Errorf("step %+v", d)
		}
		if err := s.FinishAlertDue(ctx, "n2", d, now); err != nil {
			t.Errorf("finish %+v: %v", d, err)
		}
	}
	later := t0.Add(time.Hour)
	if got, err := s.ClaimDueAlerts(ctx, "n2", later, later.Add(time.Minute), 10); err != nil || len(got) != 1 || got[0].AlertID != "a2" {
		t.Errorf("after n1's claim lapsed: %+v %v, want a2's step", got, err)
	}
}
