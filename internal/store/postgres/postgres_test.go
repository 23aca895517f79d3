package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
	"github.com/fleethub/fleethub/internal/store/storetest"
)

// databaseURL is the server the tests use. Without it the tests skip,
// except in CI, where a missing database is a failure.
func databaseURL(t testing.TB) string {
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

// freshSchema creates a schema with a random name, dropped at cleanup, and
// returns a connection string whose search_path is that schema, so test
// runs and subtests never see each other's tables.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := databaseURL(t)
	name := "fleethub_test_" + hex.EncodeToString(randomBytes(8))
	ident := pgx.Identifier{name}.Sanitize()
	exec(t, t.Context(), base, "CREATE SCHEMA "+ident)
	t.Cleanup(func() {
		// t.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(t, ctx, base, "DROP SCHEMA "+ident+" CASCADE")
	})
	return withSearchPath(t, base, name)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
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

// withSearchPath sets the search_path runtime parameter of a URL or of a
// keyword/value connection string.
func withSearchPath(t testing.TB, connString, schema string) string {
	t.Helper()
	if !strings.HasPrefix(connString, "postgres://") && !strings.HasPrefix(connString, "postgresql://") {
		return connString + " search_path=" + schema
	}
	u, err := url.Parse(connString)
	if err != nil {
		t.Fatalf("FLEETHUB_TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func open(t testing.TB, connString string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), postgres.Config{URL: connString, MaxConns: 4})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	databaseURL(t)
	storetest.Run(t, func(t *testing.T) store.Backend { return open(t, freshSchema(t)) })
}

func TestStats(t *testing.T) {
	s := open(t, freshSchema(t))
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	st := s.Stats()
	if st.Driver != "postgresql" {
		t.Errorf("Driver = %q, want postgresql", st.Driver)
	}
	if st.OpenConnections < 1 || st.OpenConnections > 4 || st.InUse != 0 {
		t.Errorf("Stats() = %+v, want 1 to 4 open connections, none in use", st)
	}
}

type migration struct {
	version   int
	appliedAt int64
}

func migrations(t *testing.T, connString string) []migration {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(t.Context())
	rows, err := conn.Query(t.Context(), `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("schema_migrations: %v", err)
	}
	var out []migration
	for rows.Next() {
		var m migration
		if err := rows.Scan(&m.version, &m.appliedAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenConcurrent starts several nodes at once on an empty schema: the
// advisory lock lets one migrate while the others wait, then find nothing
// to do. Without it, they race on CREATE TABLE and all but one fail.
func TestOpenConcurrent(t *testing.T) {
	cs := freshSchema(t)
	const nodes = 4
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		stores [nodes]*postgres.Store
		errs   [nodes]error
	)
	for i := range nodes {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), postgres.Config{URL: cs, MaxConns: 2})
		})
	}
	close(start)
	wg.Wait()
	for i := range nodes {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		stores[i].Close()
	}
	if t.Failed() {
		return
	}

	applied := migrations(t, cs)
	versions := make([]int, len(applied))
	for i, m := range applied {
		versions[i] = m.version
	}
	if len(versions) == 0 || versions[0] != 1 || versions[len(versions)-1] != len(versions) {
		t.Fatalf("schema_migrations versions = %v, want 1 to n once each", versions)
	}

	// A later start applies nothing again.
	open(t, cs).Close()
	if again := migrations(t, cs); !slices.Equal(again, applied) {
		t.Errorf("schema_migrations after reopening = %v, want unchanged %v", again, applied)
	}
}
