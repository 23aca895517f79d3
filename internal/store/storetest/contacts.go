package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// contacts is the contract of store.Contacts.
func contacts(t *testing.T, open Opener) {
	t.Run("CRUDFiltersCursorsAndScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		now := time.UnixMilli(1_800_000_000_000).UTC()
		mk := func(id, key string, at time.Time, roles, links []string) store.Contact {
			return store.Contact{ID: id, Org: sc.Org, Env: sc.Env, Name: id, Roles: roles, Links: links, Key: key, Doc: []byte(`{"id":"` + id + `"}`), CreatedAt: at, UpdatedAt: at}
		}
		for _, c := range []store.Contact{
			mk("c1", "k1", now, []string{"dispatcher"}, nil),
			mk("c2", "k2", now, []string{"field_personnel", "supervisor"}, []string{"vehicle:v1"}),
			mk("c3", "k3", now.Add(time.Second), []string{"emergency_contact"}, []string{"for:d1", "for:d10"}),
		} {
			if err := s.CreateContact(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.CreateContact(ctx, mk("c4", "k1", now, nil, nil)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate key: %v", err)
		}
		other := mk("c5", "k1", now, []string{"dispatcher"}, nil)
		other.Org = "o2"
		if err := s.CreateContact(ctx, other); err != nil {
			t.Fatalf("same key in another org: %v", err)
		}
		ids := func(f store.ContactFilter) []string {
			t.Helper()
			l, err := s.ListContacts(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, c := range l {
				out = append(out, c.ID)
			}
			return out
		}
		for _, tc := range []struct {
			f    store.ContactFilter
			want []string
		}{
			{store.ContactFilter{Scope: sc}, []string{"c1", "c2", "c3"}},
			{store.ContactFilter{Scope: sc, Role: "supervisor"}, []string{"c2"}},
			{store.ContactFilter{Scope: sc, Role: "super"}, []string{}},
			{store.ContactFilter{Scope: sc, Link: "for:d1"}, []string{"c3"}},
			{store.ContactFilter{Scope: sc, Link: "for:d"}, []string{}},
			{store.ContactFilter{Scope: sc, Limit: 2}, []string{"c1", "c2"}},
			{store.ContactFilter{Scope: sc, AfterTime: now, AfterID: "c1"}, []string{"c2", "c3"}},
			{store.ContactFilter{Scope: sc, AfterTime: now, AfterID: "c2"}, []string{"c3"}},
			{store.ContactFilter{Scope: store.Scope{Org: "o1", Env: "live"}}, []string{}},
		} {
			if got := ids(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%+v: %v, want %v", tc.f, got, tc.want)
			}
		}
		got, err := s.GetContact(ctx, sc, "c3")
		if err != nil || !slices.Equal(got.Links, []string{"for:d1", "for:d10"}) || !got.CreatedAt.Equal(now.Add(time.Second)) || string(got.Doc) != `{"id":"c3"}` {
			t.Fatalf("get %+v %v", got, err)
		}
		if _, err := s.GetContact(ctx, store.Scope{Org: "o2", Env: "test"}, "c3"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another org: %v", err)
		}
		up := mk("c3", "k3b", now, []string{"dispatcher"}, nil)
		up.UpdatedAt = now.Add(time.Hour)
		if err := s.UpdateContact(ctx, up); err != nil {
			t.Fatal(err)
		}
		if got, err = s.GetContact(ctx, sc, "c3"); err != nil {
			t.Fatal(err)
		}
		if got.Key != "k3b" || !slices.Equal(got.Roles, []string{"dispatcher"}) || len(got.Links) != 0 || !got.CreatedAt.Equal(now.Add(time.Second)) {
			t.Fatalf("updated %+v", got)
		}
		up.Key = "k1"
		if err := s.UpdateContact(ctx, up); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("update to a taken key: %v", err)
		}
		up.Org = "o2"
		if err := s.UpdateContact(ctx, up); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("update in another org: %v", err)
		}
		if err := s.DeleteContact(ctx, store.Scope{Org: "o2", Env: "test"}, "c3"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete in another org: %v", err)
		}
		if err := s.DeleteContact(ctx, sc, "c3"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetContact(ctx, sc, "c3"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleted: %v", err)
		}
	})
}
