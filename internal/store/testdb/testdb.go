// Package testdb opens real stores for tests outside internal/store: an
// embedded SQLite store in a temporary directory, and a PostgreSQL store
// in a fresh schema of the server named by FLEETHUB_TEST_DATABASE_URL.
// Without that variable the PostgreSQL tests skip, except under CI=true,
// where they fail.
//
// Its functions may be called from parallel tests: every store they open
// is the calling test's own, in a directory or schema of its own, unless
// the test opens a second one on the same place (SQLiteIn, PostgreSQLAt)
// to play a restart or a second node. The stores it opens are safe for
// concurrent use like any store.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// Opener opens an empty store that t closes.
type Opener func(t *testing.T) store.Backend

// Each runs fn once per backend, as the subtests "sqlite" and
// "postgresql".
func Each(t *testing.T, fn func(t *testing.T, open Opener)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) })
	t.Run("postgresql", func(t *testing.T) {
		URL(t)
		fn(t, PostgreSQL)
	})
}

// SQLite opens an embedded store in a temporary directory.
func SQLite(t *testing.T) store.Backend {
	t.Helper()
	return SQLiteIn(t, t.TempDir())
}

// SQLiteIn opens the embedded store in dir, so a test can open it again.
func SQLiteIn(t testing.TB, dir string) store.Backend {
	t.Helper()
	s, err := sqlite.Open(t.Context(), sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// URL is FLEETHUB_TEST_DATABASE_URL; the test skips without it, or fails
// under CI=true.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("FLEETHUB_TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETHUB_TEST_DATABASE_URL not set: PostgreSQL tests are required in CI")
		}
		t.Skip("FLEETHUB_TEST_DATABASE_URL not set: skipping PostgreSQL tests")
	}
	return u
}

// PostgreSQL opens a store in a fresh schema dropped at cleanup.
func PostgreSQL(t *testing.T) store.Backend {
	t.Helper()
	return PostgreSQLAt(t, Schema(t))
}

// Schema creates a schema with a random name, dropped at cleanup, and
// answers a connection string whose search_path is that schema; every
// store opened on it shares the schema (two nodes of one database).
func Schema(t *testing.T) string {
	t.Helper()
	base := URL(t)
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	name := "fleethub_test_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	exec(t, t.Context(), base, "CREATE SCHEMA "+ident)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(t, ctx, base, "DROP SCHEMA "+ident+" CASCADE")
	})
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		return base + " search_path=" + name
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("FLEETHUB_TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgreSQLAt opens a store on connString.
func PostgreSQLAt(t *testing.T, connString string) store.Backend {
	t.Helper()
	s, err := postgres.Open(t.Context(), postgres.Config{URL: connString, MaxConns: 4})
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func exec(t testing.TB, ctx context.Context, connString, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
