// Package sqlstore is the SQL both store backends share: the schema and
// its migrations (schema.go), the query text of every aggregate and the
// scanning of its rows, written once with ? placeholders, and the Dialect
// (dialect.go), the one place that holds what differs between PostgreSQL
// and SQLite: placeholders, column types, array binding, row locking.
//
// Store implements the store interfaces over a Conn, which each backend
// provides for its driver (store/postgres over pgx, store/sqlite over
// database/sql) and which maps the driver's errors onto the store's. A
// backend embeds *Store and adds the methods whose mechanics differ
// between the two, EnqueueDeliveries and RecordDeliveries, and replaces
// the ones it runs its own way (PostgreSQL's batched and COPY writes,
// SQLite's parked deliveries).
//
// The table layout: times are unix milliseconds in 64-bit integer columns,
// 0 when unset (MS, FromMS); JSON documents are TEXT, so the bytes written
// are the bytes read; binary data (point blocks, payloads, secrets) is a
// blob; ids sort in byte order on both databases, so keyset listings page
// the same way.
//
// Errors are "<dialect>: <op>: <err>", where err wraps store.ErrNotFound
// for a missing row, store.ErrConflict for a unique violation or a stale
// version, and store.ErrUnavailable for a database that did not answer.
//
// Concurrency: a Store is safe for concurrent use as far as its Conn is
// (both backends' are). A method whose statements must agree runs them in
// one transaction. A claim (deliveries, alert steps, notifications) never
// hands the same row to two callers: on PostgreSQL each skips the rows the
// others have locked, on SQLite the one writer runs claims one at a time.
package sqlstore

import (
	"context"
	"fmt"
	"time"
)

// Row is one result row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result being read; Close may be called more than once.
type Rows interface {
	Row
	Next() bool
	Err() error
	Close() error
}

// Querier runs statements written with the Conn's dialect's placeholders.
type Querier interface {
	// Exec runs a statement and returns the number of rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow's errors, ErrNoRows included, come from Scan.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Tx is a transaction; Rollback after Commit does nothing.
type Tx interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Conn is a backend's database as a Store uses it. Its methods must be
// safe for concurrent use.
type Conn interface {
	// Reader runs reads that need not see the caller's own writes
	// before they commit.
	Reader() Querier
	// Writer runs writes, and reads that must see the latest commit.
	Writer() Querier
	// Begin starts a read-write transaction.
	Begin(ctx context.Context) (Tx, error)
	// Err maps a driver error onto the store's: no rows onto
	// store.ErrNotFound, a unique violation onto store.ErrConflict, a
	// database that did not answer onto store.ErrUnavailable. Other
	// errors are returned as they are.
	Err(err error) error
}

// Store implements the store interfaces in SQL over a Conn.
type Store struct {
	d    *Dialect
	conn Conn
	r, w Querier // conn's reader and writer, in the dialect's placeholders
}

// New returns the Store of conn, a database of dialect d.
func New(conn Conn, d *Dialect) *Store {
	return &Store{d: d, conn: conn, r: d.bind(conn.Reader()), w: d.bind(conn.Writer())}
}

// wrap prefixes err with the dialect and the operation, mapped onto the
// store's errors; nil stays nil.
func (s *Store) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", s.d.Name, op, s.conn.Err(err))
}

// inTx runs f in a transaction, committed when f returns nil.
func (s *Store) inTx(ctx context.Context, op string, f func(tx Querier) error) error {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return s.wrap(op, err)
	}
	defer tx.Rollback(ctx) // nothing to undo after Commit
	if err := f(s.d.bind(tx)); err != nil {
		return s.wrap(op, err)
	}
	return s.wrap(op, tx.Commit(ctx))
}

// collect appends to out every row of rows, read by scan, and closes
// rows. It returns err, the error of the query, when it is not nil.
func collect[T any](out []T, rows Rows, err error, scan func(Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// changed is err, or none when the statement changed no row.
func changed(n int64, err, none error) error {
	if err == nil && n == 0 {
		return none
	}
	return err
}

// MS is the column value of t: unix milliseconds, 0 for the zero time.
func MS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMS is MS's inverse, in UTC.
func FromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// orEmpty is the text of a JSON column, empty when b is.
func orEmpty(b []byte, empty string) string {
	if len(b) == 0 {
		return empty
	}
	return string(b)
}
