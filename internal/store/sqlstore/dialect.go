package sqlstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
)

// Dialect is what differs between the SQL of PostgreSQL and of SQLite.
// Everything else in this package is written once, in the SQL both run:
// ? placeholders (rewritten to $n for PostgreSQL), INSERT … ON CONFLICT,
// UPDATE … RETURNING, UPDATE … FROM, MATERIALIZED common table
// expressions, row values.
type Dialect struct {
	// Name prefixes the backend's errors.
	Name string
	// numbered: placeholders are $1, $2… rather than ?.
	numbered bool
	// types maps the schema's type tokens (schema.go) to column types.
	types *strings.Replacer
	// skipLocked ends the sub-select of a claim: PostgreSQL locks the rows
	// it picks and skips those another claim holds; SQLite's one writer
	// already keeps claims apart.
	skipLocked string
	// forUpdate ends the sub-select of an update that locks its rows in
	// an order of its own first (byID): PostgreSQL locks rows one at a
	// time as a statement meets them; SQLite's one writer takes none.
	forUpdate string
	// arrays: a list of values is bound as one array parameter; without,
	// as one placeholder per value, at most inChunk in one statement.
	arrays  bool
	inChunk int
	// strpos is the function returning the position of a substring.
	strpos string
	// lockMigrations, when set, is run first in the migration
	// transaction, so that nodes starting at once migrate one at a time.
	lockMigrations string

	// rebound remembers the queries rebind rewrote, by their text: most
	// are a few constants, run again and again.
	mu      sync.RWMutex
	rebound map[string]string
}

// maxRebound bounds Dialect.rebound: texts built per call (a listing's
// filters and limit) are few in practice, but not bounded.
const maxRebound = 1024

// Postgres is PostgreSQL through pgx.
var Postgres = &Dialect{
	Name:     "postgres",
	numbered: true,
	types: strings.NewReplacer(
		"{int64}", "BIGINT",
		"{float}", "DOUBLE PRECISION",
		"{bytes}", "BYTEA",
		// ids compared in byte order, whatever the database's collation
		"{key}", `TEXT COLLATE "C"`,
		"{serial}", "BIGSERIAL PRIMARY KEY",
		"{without rowid}", "",
	),
	skipLocked: " FOR UPDATE SKIP LOCKED",
	forUpdate:  " FOR UPDATE",
	arrays:     true,
	strpos:     "strpos",
	// the first eight bytes of "fleethub" read as an int64
	lockMigrations: `SELECT pg_advisory_xact_lock(7380385375772505442)`,
}

// SQLite is SQLite through database/sql (modernc.org/sqlite).
var SQLite = &Dialect{
	Name: "sqlite",
	types: strings.NewReplacer(
		"{int64}", "INTEGER",
		"{float}", "REAL",
		"{bytes}", "BLOB",
		"{key}", "TEXT", // SQLite compares text in byte order (BINARY)
		"{serial}", "INTEGER PRIMARY KEY AUTOINCREMENT",
		"{without rowid}", " WITHOUT ROWID",
	),
	inChunk: 500, // far below SQLite's limit of bound variables
	strpos:  "instr",
}

// Rebind returns query, written with ? placeholders, in the dialect's:
// on PostgreSQL the n-th ? outside quotes becomes $n.
func (d *Dialect) Rebind(query string) string {
	if !d.numbered || strings.IndexByte(query, '?') < 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 32)
	n := 0
	for {
		i := strings.IndexAny(query, `?'"`)
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		b.WriteString(query[:i])
		if c := query[i]; c != '?' {
			// a quoted literal or name, copied whole
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			query = query[i+end+2:]
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

// In is the condition "col is one of vals" and its arguments. vals must
// not be empty, nor longer than a chunk (see chunks).
func (d *Dialect) In(col string, vals []string) (string, []any) {
	if d.arrays {
		return col + " = ANY(?::text[])", []any{vals}
	}
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	return col + " IN (" + strings.TrimSuffix(strings.Repeat("?,", len(vals)), ",") + ")", args
}

// chunks calls f with successive parts of vals, each small enough for In:
// all of vals at once when the dialect binds arrays.
func (d *Dialect) chunks(vals []string, f func([]string) error) error {
	for len(vals) > 0 {
		n := len(vals)
		if d.inChunk > 0 {
			n = min(n, d.inChunk)
		}
		if err := f(vals[:n]); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// Contains is the condition "col contains the text bound to ?".
func (d *Dialect) Contains(col string) string {
	return d.strpos + "(" + col + ", ?) > 0"
}

// rebind is Rebind, remembered.
func (d *Dialect) rebind(query string) string {
	d.mu.RLock()
	r, ok := d.rebound[query]
	d.mu.RUnlock()
	if ok {
		return r
	}
	r = d.Rebind(query)
	d.mu.Lock()
	if len(d.rebound) < maxRebound {
		if d.rebound == nil {
			d.rebound = make(map[string]string)
		}
		d.rebound[query] = r
	}
	d.mu.Unlock()
	return r
}

// bind returns q running queries written with ? placeholders.
func (d *Dialect) bind(q Querier) Querier {
	if !d.numbered {
		return q
	}
	return rebound{q: q, d: d}
}

// rebound rewrites the placeholders of every query it runs.
type rebound struct {
	q Querier
	d *Dialect
}

func (r rebound) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return r.q.Exec(ctx, r.d.rebind(query), args...)
}

func (r rebound) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return r.q.Query(ctx, r.d.rebind(query), args...)
}

func (r rebound) QueryRow(ctx context.Context, query string, args ...any) Row {
	return r.q.QueryRow(ctx, r.d.rebind(query), args...)
}
