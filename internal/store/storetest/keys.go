package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// base is a time with sub-millisecond digits in a zone other than UTC, so
// round trips show both truncation to milliseconds and conversion to UTC.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535_897_932, time.FixedZone("UTC+5", 5*3600))

// newKey returns a key of scope sc whose id and hash derive from id.
func newKey(sc store.Scope, id string, created time.Time) store.APIKey {
	return store.APIKey{
		ID:          id,
		Name:        "key " + id,
		Org:         sc.Org,
		Env:         sc.Env,
		Permissions: []string{"points:write", "streams:read"},
		Plan:        "professional",
		RPM:         1200,
		Hash:        "hash-" + id,
		Hint:        id[max(0, len(id)-4):],
		CreatedAt:   created,
	}
}

func mustCreate(t *testing.T, s store.Backend, ks ...store.APIKey) {
	t.Helper()
	for _, k := range ks {
		if err := s.CreateKey(t.Context(), k); err != nil {
			t.Fatalf("CreateKey(%s): %v", k.ID, err)
		}
	}
}

// stored is what a backend returns for k: times at millisecond precision
// in UTC, zero times zero.
func stored(k store.APIKey) store.APIKey {
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = storedTime(k.CreatedAt), storedTime(k.LastUsedAt), storedTime(k.RevokedAt)
	return k
}

func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Truncate(time.Millisecond).UTC()
}

// diffKey describes how got differs from want, "" when it does not.
// Nil and empty permissions are equal; times must be equal instants in UTC.
func diffKey(got, want store.APIKey) string {
	var d []string
	field := func(name string, g, w any) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("Name", got.Name, want.Name)
	field("Org", got.Org, want.Org)
	field("Env", got.Env, want.Env)
	field("Plan", got.Plan, want.Plan)
	field("RPM", got.RPM, want.RPM)
	field("Hash", got.Hash, want.Hash)
	field("Hint", got.Hint, want.Hint)
	if !slices.Equal(got.Permissions, want.Permissions) {
		d = append(d, fmt.Sprintf("Permissions = %q, want %q", got.Permissions, want.Permissions))
	}
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{
		{"CreatedAt", got.CreatedAt, want.CreatedAt},
		{"LastUsedAt", got.LastUsedAt, want.LastUsedAt},
		{"RevokedAt", got.RevokedAt, want.RevokedAt},
	} {
		switch {
		case !c.got.Equal(c.want):
			d = append(d, fmt.Sprintf("%s = %v, want %v", c.name, c.got, c.want))
		case c.got.Location() != time.UTC:
			d = append(d, fmt.Sprintf("%s = %v, want it in UTC", c.name, c.got))
		}
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprint(d)
}

func checkKey(t *testing.T, what string, got, want store.APIKey) {
	t.Helper()
	if d := diffKey(got, want); d != "" {
		t.Errorf("%s: %s", what, d)
	}
}

func keyByHash(t *testing.T, s store.Backend, hash string) store.APIKey {
	t.Helper()
	k, err := s.KeyByHash(t.Context(), hash)
	if err != nil {
		t.Fatalf("KeyByHash(%s): %v", hash, err)
	}
	return k
}

func ids(ks []store.APIKey) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.ID
	}
	return out
}

// keys is the contract of store.Keys.
func keys(t *testing.T, open Opener) {
	live := store.Scope{Org: "org_a", Env: "live"}

	t.Run("CreateAndByHash", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		full := newKey(live, "key_full", base)
		full.LastUsedAt = base.Add(90 * time.Minute)
		full.RevokedAt = base.Add(2 * time.Hour)
		bare := store.APIKey{ID: "key_bare", Org: live.Org, Env: live.Env, Hash: "hash-bare", CreatedAt: base}
		mustCreate(t, s, full, bare)
		for _, k := range []store.APIKey{full, bare} {
			checkKey(t, "KeyByHash("+k.Hash+")", keyByHash(t, s, k.Hash), stored(k))
		}
	})

	t.Run("TimesRoundTripAtMilliseconds", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		times := []time.Time{
			base,
			time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, time.UTC),
			time.Date(1999, 12, 31, 23, 0, 0, 1_000_000, time.FixedZone("PST", -8*3600)),
			time.Date(2031, 7, 1, 0, 0, 0, 0, time.Local),
		}
		for i, at := range times {
			k := newKey(live, fmt.Sprintf("key_time_%d", i), at)
			k.LastUsedAt, k.RevokedAt = at.Add(time.Millisecond), at.Add(1500*time.Microsecond)
			mustCreate(t, s, k)
			got := keyByHash(t, s, k.Hash)
			checkKey(t, "KeyByHash("+k.Hash+")", got, stored(k))
			if want := at.UnixMilli(); got.CreatedAt.UnixMilli() != want {
				t.Errorf("CreatedAt of %v = %d ms, want %d", at, got.CreatedAt.UnixMilli(), want)
			}
		}
	})

	t.Run("DuplicateConflicts", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		k := newKey(live, "key_1", base)
		mustCreate(t, s, k)
		sameHash := newKey(store.Scope{Org: "org_b", Env: "test"}, "key_2", base)
		sameHash.Hash = k.Hash
		if err := s.CreateKey(t.Context(), sameHash); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateKey with a taken hash: %v, want ErrConflict", err)
		}
		sameID := newKey(live, "key_1", base)
		sameID.Hash = "hash-other"
		if err := s.CreateKey(t.Context(), sameID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateKey with a taken id: %v, want ErrConflict", err)
		}
		checkKey(t, "the first key after conflicts", keyByHash(t, s, k.Hash), stored(k))
		if ks, err := s.ListKeys(t.Context(), store.Scope{Org: "org_b", Env: "test"}); err != nil || len(ks) != 0 {
			t.Errorf("ListKeys of the conflicting key's scope = %v, %v; want none", ids(ks), err)
		}
	})

	t.Run("ByHashMissing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		mustCreate(t, s, newKey(live, "key_1", base))
		if _, err := s.KeyByHash(t.Context(), "hash-missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("KeyByHash of a missing hash: %v, want ErrNotFound", err)
		}
	})

	t.Run("ListScopedOldestFirst", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		test := store.Scope{Org: live.Org, Env: "test"}
		other := store.Scope{Org: "org_b", Env: live.Env}
		// Created out of order: the list is by creation time.
		a3 := newKey(live, "key_a3", base.Add(3*time.Second))
		a1 := newKey(live, "key_a1", base.Add(1*time.Second))
		a2 := newKey(live, "key_a2", base.Add(2*time.Second))
		t1 := newKey(test, "key_t1", base)
		b1 := newKey(other, "key_b1", base)
		mustCreate(t, s, a3, t1, a1, b1, a2)
		for _, c := range []struct {
			sc   store.Scope
			want []store.APIKey
		}{
			{live, []store.APIKey{a1, a2, a3}},
			{test, []store.APIKey{t1}},
			{other, []store.APIKey{b1}},
			{store.Scope{Org: other.Org, Env: "test"}, nil},
			{store.Scope{Org: "org_c", Env: live.Env}, nil},
		} {
			got, err := s.ListKeys(t.Context(), c.sc)
			if err != nil {
				t.Fatalf("ListKeys(%+v): %v", c.sc, err)
			}
			if !slices.Equal(ids(got), ids(c.want)) {
				t.Errorf("ListKeys(%+v) = %q, want %q", c.sc, ids(got), ids(c.want))
				continue
			}
			for i := range got {
				checkKey(t, fmt.Sprintf("ListKeys(%+v)[%d]", c.sc, i), got[i], stored(c.want[i]))
			}
		}
	})

	t.Run("Revoke", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		k := newKey(live, "key_1", base)
		mustCreate(t, s, k)
		first := base.Add(time.Hour + 1234567*time.Nanosecond)
		got, err := s.RevokeKey(t.Context(), live, k.ID, first)
		if err != nil {
			t.Fatalf("RevokeKey: %v", err)
		}
		want := k
		want.RevokedAt = first
		checkKey(t, "RevokeKey", got, stored(want))
		checkKey(t, "KeyByHash after RevokeKey", keyByHash(t, s, k.Hash), stored(want))

		got, err = s.RevokeKey(t.Context(), live, k.ID, first.Add(time.Hour))
		if err != nil {
			t.Fatalf("second RevokeKey: %v", err)
		}
		checkKey(t, "second RevokeKey", got, stored(want))
		checkKey(t, "KeyByHash after second RevokeKey", keyByHash(t, s, k.Hash), stored(want))
	})

	t.Run("RevokeOutOfScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		k := newKey(live, "key_1", base)
		mustCreate(t, s, k)
		for _, c := range []struct {
			sc store.Scope
			id string
		}{
			{store.Scope{Org: "org_b", Env: live.Env}, k.ID},
			{store.Scope{Org: live.Org, Env: "test"}, k.ID},
			{live, "key_missing"},
		} {
			if _, err := s.RevokeKey(t.Context(), c.sc, c.id, base.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("RevokeKey(%+v, %s): %v, want ErrNotFound", c.sc, c.id, err)
			}
		}
		checkKey(t, "key after revokes out of scope", keyByHash(t, s, k.Hash), stored(k))
	})

	t.Run("TouchKeepsLatest", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		k1 := newKey(live, "key_1", base)
		k2 := newKey(store.Scope{Org: "org_b", Env: "test"}, "key_2", base)
		k3 := newKey(live, "key_3", base)
		mustCreate(t, s, k1, k2, k3)
		t1, t2, t3 := base.Add(time.Minute), base.Add(2*time.Minute), base.Add(3*time.Minute)

		if err := s.TouchKeys(t.Context(), nil); err != nil {
			t.Fatalf("TouchKeys(nil): %v", err)
		}
		steps := []struct {
			used map[string]time.Time
			want map[string]time.Time // by id; absent means never used
		}{
			{map[string]time.Time{k1.ID: t2, k2.ID: t1, "key_missing": t3}, map[string]time.Time{k1.ID: t2, k2.ID: t1}},
			{map[string]time.Time{k1.ID: t1, k2.ID: t3}, map[string]time.Time{k1.ID: t2, k2.ID: t3}},
			{map[string]time.Time{k1.ID: t3, k2.ID: t2}, map[string]time.Time{k1.ID: t3, k2.ID: t3}},
		}
		for i, st := range steps {
			if err := s.TouchKeys(t.Context(), st.used); err != nil {
				t.Fatalf("step %d: TouchKeys: %v", i, err)
			}
			for _, k := range []store.APIKey{k1, k2, k3} {
				want := k
				want.LastUsedAt = st.want[k.ID]
				checkKey(t, fmt.Sprintf("step %d: %s", i, k.ID), keyByHash(t, s, k.Hash), stored(want))
			}
		}
	})

	// Nodes flush the last-use times of the same keys at once, each in
	// an order of its own: the rows are locked in one order, or two
	// flushes each hold a key the other waits for and one fails
	// (PostgreSQL aborts it as a deadlock).
	t.Run("ConcurrentTouches", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		var ks []store.APIKey
		for i := range 60 {
			k := newKey(live, fmt.Sprintf("key_t%02d", i), base)
			k.Hash = fmt.Sprintf("hash_t%02d", i)
			ks = append(ks, k)
		}
		mustCreate(t, s, ks...)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for round := range 15 {
					used := map[string]time.Time{}
					for _, k := range ks {
						used[k.ID] = base.Add(time.Duration(round*4+w) * time.Second)
					}
					if err := s.TouchKeys(t.Context(), used); err != nil {
						t.Errorf("flush %d of %d: TouchKeys: %v", round, w, err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, k := range ks {
			if got := keyByHash(t, s, k.Hash).LastUsedAt; !got.Equal(storedTime(base.Add(59 * time.Second))) {
				t.Errorf("%s last used %v, want the latest flush's %v", k.ID, got, storedTime(base.Add(59*time.Second)))
			}
		}
	})
}
