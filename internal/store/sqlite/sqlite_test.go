package sqlite_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/store/storetest"
)

func open(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	return openWith(t, sqlite.Config{Dir: dir})
}

func openWith(t *testing.T, cfg sqlite.Config) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", cfg.Dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return open(t, t.TempDir()) })
}

type migration struct {
	version   int
	appliedAt int64
}

// migrationsIn reads schema_migrations of the closed database in dir.
func migrationsIn(t *testing.T, dir string) []migration {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "fleethub.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("schema_migrations: %v", err)
	}
	defer rows.Close()
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

func TestReopenKeepsRecords(t *testing.T) {
	dir := t.TempDir()
	live := store.Scope{Org: "org_a", Env: "live"}
	test := store.Scope{Org: "org_a", Env: "test"}
	at := time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)
	keys := []store.APIKey{
		{ID: "key_1", Name: "one", Org: live.Org, Env: live.Env, Permissions: []string{"points:write"}, Plan: "starter", RPM: 60, Hash: "hash-1", Hint: "abcd", CreatedAt: at},
		{ID: "key_2", Name: "two", Org: test.Org, Env: test.Env, Hash: "hash-2", Hint: "efgh", CreatedAt: at.Add(time.Second)},
	}

	s := open(t, dir)
	for _, k := range keys {
		if err := s.CreateKey(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.TouchKeys(t.Context(), map[string]time.Time{"key_1": at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	keys[0].LastUsedAt = at.Add(time.Minute)
	if _, err := s.RevokeKey(t.Context(), test, "key_2", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	keys[1].RevokedAt = at.Add(time.Hour)
	secret, err := s.Secret(t.Context(), "signing", func() ([]byte, error) { return []byte("s3cret"), nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	before := migrationsIn(t, dir)
	if len(before) == 0 {
		t.Fatal("no rows in schema_migrations after Open")
	}

	// a re-run would record this clock's later applied_at
	later := func() time.Time { return time.Now().Add(time.Hour) }
	s = openWith(t, sqlite.Config{Dir: dir, Now: later})
	for i, sc := range []store.Scope{live, test} {
		got, err := s.ListKeys(t.Context(), sc)
		if err != nil {
			t.Fatalf("ListKeys(%+v) after reopen: %v", sc, err)
		}
		if len(got) != 1 || !equalKey(got[0], keys[i]) {
			t.Errorf("ListKeys(%+v) after reopen = %+v, want [%+v]", sc, got, keys[i])
		}
	}
	got, err := s.Secret(t.Context(), "signing", func() ([]byte, error) {
		t.Error("gen called for a secret stored before reopening")
		return []byte("other"), nil
	})
	if err != nil || !bytes.Equal(got, secret) {
		t.Errorf("Secret after reopen = %q, %v; want %q", got, err, secret)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if after := migrationsIn(t, dir); !slices.Equal(after, before) {
		t.Errorf("schema_migrations after reopen = %v, want unchanged %v", after, before)
	}
}

func equalKey(a, b store.APIKey) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Org == b.Org && a.Env == b.Env &&
		slices.Equal(a.Permissions, b.Permissions) && a.Plan == b.Plan && a.RPM == b.RPM &&
		a.Hash == b.Hash && a.Hint == b.Hint &&
		a.CreatedAt.Equal(b.CreatedAt) && a.LastUsedAt.Equal(b.LastUsedAt) && a.RevokedAt.Equal(b.RevokedAt)
}

// Writes reach the database file without waiting for the WAL to grow to
// the writer's own checkpoint mark: the background checkpoint copies them.
func TestBackgroundCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(t.Context(), sqlite.Config{Dir: dir, CheckpointEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	dbFile := filepath.Join(dir, "fleethub.db")
	size := func() int64 {
		fi, err := os.Stat(dbFile)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// before may or may not hold the migrations' pages yet: they are far
	// fewer than the 1 MB of growth asked for below
	before := size()
	now := time.Now()
	payload := bytes.Repeat([]byte("x"), 4000)
	ds := make([]store.Delivery, 500) // about 2 MB, far below the writer's mark
	for i := range ds {
		ds[i] = store.Delivery{ID: fmt.Sprintf("msg_%d", i), Org: "o", Env: "e", StreamID: "s", Offset: int64(i + 1), Payload: payload,
			NextAttemptAt: now, QueuedAt: now, CreatedAt: now}
	}
	if _, err := s.EnqueueDeliveries(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	// each round of the checkpoint may copy part of the WAL
	deadline := time.After(10 * time.Second)
	for size()-before < 1<<20 {
		select {
		case <-sqlite.CheckpointRound(s):
		case <-deadline:
			t.Fatalf("database file grew by %d bytes after 2 MB of writes; the WAL was not checkpointed", size()-before)
		}
	}
}
