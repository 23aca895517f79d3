package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// alertList is the listing contract of store.Alerts: newest first, by
// status (with expiry at the filter's time), keyset pages, one scope.
func alertList(t *testing.T, open Opener) {
	t.Parallel()
	s := open(t)
	ctx := t.Context()
	sc := store.Scope{Org: "o1", Env: "test"}
	base := time.UnixMilli(1_800_000_000_000).UTC()
	add := func(id string, sc store.Scope, status string, created time.Time, expires time.Time) {
		t.Helper()
		a := store.Alert{ID: id, Org: sc.Org, Env: sc.Env, Status: status, Doc: []byte(`{"id":"` + id + `"}`), Version: 1,
			CreatedAt: created, UpdatedAt: created, ExpiresAt: expires}
		if err := s.CreateAlert(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	later := base.Add(time.Hour)
	add("al_a", sc, "active", base, later)
	add("al_b", sc, "cancelled", base.Add(time.Minute), later)
	add("al_c", sc, "active", base.Add(2*time.Minute), base.Add(3*time.Minute)) // expired at now
	add("al_d", sc, "active", base.Add(4*time.Minute), later)
	add("al_e", sc, "active", base.Add(4*time.Minute), later) // same time as al_d: id breaks the tie
	add("al_x", store.Scope{Org: "o2", Env: "test"}, "active", base, later)
	add("al_y", store.Scope{Org: "o1", Env: "live"}, "active", base, later)
	now := base.Add(10 * time.Minute)
	ids := func(as []store.Alert) []string {
		out := []string{}
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	list := func(f store.AlertFilter) []store.Alert {
		t.Helper()
		f.Scope, f.Now = sc, now
		as, err := s.ListAlerts(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	all := list(store.AlertFilter{})
	if got, want := ids(all), []string{"al_e", "al_d", "al_c", "al_b", "al_a"}; !slices.Equal(got, want) {
		t.Fatalf("all: %v, want %v", got, want)
	}
	if a := all[2]; a.Org != sc.Org || a.Env != sc.Env || a.Status != "active" || a.Version != 1 || string(a.Doc) != `{"id":"al_c"}` ||
		!a.CreatedAt.Equal(base.Add(2*time.Minute)) || !a.ExpiresAt.Equal(base.Add(3*time.Minute)) {
		t.Fatalf("row %+v", a)
	}
	for status, want := range map[string][]string{"active": {"al_e", "al_d", "al_a"}, "expired": {"al_c"}, "cancelled": {"al_b"}} {
		if got := ids(list(store.AlertFilter{Status: status})); !slices.Equal(got, want) {
			t.Errorf("status %s: %v, want %v", status, got, want)
		}
	}
	var pages [][]string
	f := store.AlertFilter{Limit: 2}
	for range 5 {
		p := list(f)
		if len(p) == 0 {
			break
		}
		pages = append(pages, ids(p))
		last := p[len(p)-1]
		f.BeforeTime, f.BeforeID = last.CreatedAt, last.ID
	}
	if got := slices.Concat(pages...); len(pages) != 3 || !slices.Equal(got, ids(all)) {
		t.Fatalf("pages %v", pages)
	}
	if got := ids(list(store.AlertFilter{Status: "active", Limit: 1, BeforeTime: base.Add(4 * time.Minute), BeforeID: "al_d"})); !slices.Equal(got, []string{"al_a"}) {
		t.Fatalf("active after al_d: %v", got)
	}
}
