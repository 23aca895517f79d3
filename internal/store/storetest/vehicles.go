package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// vehicles is the contract of store.Vehicles.
func vehicles(t *testing.T, open Opener) {
	t.Run("PutKeepsCreationTime", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		t0 := time.UnixMilli(1_800_000_000_000).UTC()
		got, err := s.PutVehicle(ctx, store.Vehicle{ID: "v1", Org: sc.Org, Env: sc.Env, FleetID: "f1", Doc: []byte(`{"a":1}`), CreatedAt: t0, UpdatedAt: t0})
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(t0) || got.FleetID != "f1" || string(got.Doc) != `{"a":1}` {
			t.Fatalf("created: %+v", got)
		}
		t1 := t0.Add(time.Minute)
		got, err = s.PutVehicle(ctx, store.Vehicle{ID: "v1", Org: sc.Org, Env: sc.Env, FleetID: "", Doc: []byte(`{"a":2}`), CreatedAt: t1, UpdatedAt: t1})
		if err != nil {
			t.Fatal(err)
		}
		if !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t1) || got.FleetID != "" || string(got.Doc) != `{"a":2}` {
			t.Fatalf("replaced: %+v, want created %v, updated %v, no fleet, the new doc", got, t0, t1)
		}
		read, err := s.GetVehicle(ctx, sc, "v1")
		if err != nil {
			t.Fatal(err)
		}
		if !read.CreatedAt.Equal(t0) || !read.UpdatedAt.Equal(t1) || string(read.Doc) != `{"a":2}` || read.Org != sc.Org || read.Env != sc.Env {
			t.Fatalf("read back: %+v", read)
		}
	})
	t.Run("ListFleetCursorScopeDelete", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		at := time.UnixMilli(1_800_000_000_000).UTC()
		put := func(sc store.Scope, id, fleet string) {
			t.Helper()
			if _, err := s.PutVehicle(ctx, store.Vehicle{ID: id, Org: sc.Org, Env: sc.Env, FleetID: fleet, Doc: []byte(`{}`), CreatedAt: at, UpdatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		// ids sort in byte order: "V" before "a"
		for _, v := range [][2]string{{"b", "north"}, {"a", "south"}, {"c", "north"}, {"V", ""}} {
			put(sc, v[0], v[1])
		}
		put(store.Scope{Org: "o2", Env: "test"}, "a", "north")
		put(store.Scope{Org: "o1", Env: "live"}, "d", "north")
		ids := func(f store.VehicleFilter) []string {
			t.Helper()
			l, err := s.ListVehicles(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, v := range l {
				out = append(out, v.ID)
			}
			return out
		}
		for _, tc := range []struct {
			f    store.VehicleFilter
			want []string
		}{
			{store.VehicleFilter{Scope: sc}, []string{"V", "a", "b", "c"}},
			{store.VehicleFilter{Scope: sc, FleetID: "north"}, []string{"b", "c"}},
			{store.VehicleFilter{Scope: sc, FleetID: "nort"}, []string{}},
			{store.VehicleFilter{Scope: sc, Limit: 2}, []string{"V", "a"}},
			{store.VehicleFilter{Scope: sc, AfterID: "a", Limit: 2}, []string{"b", "c"}},
			{store.VehicleFilter{Scope: sc, FleetID: "north", AfterID: "b"}, []string{"c"}},
			{store.VehicleFilter{Scope: store.Scope{Org: "o1", Env: "live"}}, []string{"d"}},
		} {
			if got := ids(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("ListVehicles(%+v) = %v, want %v", tc.f, got, tc.want)
			}
		}
		if _, err := s.GetVehicle(ctx, store.Scope{Org: "o2", Env: "test"}, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another organization's vehicle: %v, want ErrNotFound", err)
		}
		if err := s.DeleteVehicle(ctx, store.Scope{Org: "o2", Env: "test"}, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete in another organization: %v, want ErrNotFound", err)
		}
		if err := s.DeleteVehicle(ctx, sc, "b"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteVehicle(ctx, sc, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete twice: %v, want ErrNotFound", err)
		}
		if _, err := s.GetVehicle(ctx, sc, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted vehicle: %v, want ErrNotFound", err)
		}
		if got := ids(store.VehicleFilter{Scope: store.Scope{Org: "o2", Env: "test"}}); !slices.Equal(got, []string{"a"}) {
			t.Errorf("the other organization's vehicles after the delete: %v", got)
		}
	})
	t.Run("ListVehicleFleets", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		t0 := time.UnixMilli(1_800_000_000_000).UTC()
		for _, v := range []store.Vehicle{
			{ID: "v1", Org: "o1", Env: "test", FleetID: "north"},
			{ID: "v2", Org: "o1", Env: "test"},
			{ID: "v1", Org: "o2", Env: "live", FleetID: "south"},
			{ID: "v3", Org: "o1", Env: "test", FleetID: "north"},
		} {
			v.Doc, v.CreatedAt, v.UpdatedAt = []byte(`{}`), t0, t0
			if _, err := s.PutVehicle(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.ListVehicleFleets(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, v := range got {
			keys = append(keys, v.Org+"/"+v.Env+"/"+v.ID+"="+v.FleetID)
		}
		slices.Sort(keys)
		if want := []string{"o1/test/v1=north", "o1/test/v3=north", "o2/live/v1=south"}; !slices.Equal(keys, want) {
			t.Errorf("ListVehicleFleets = %v, want %v (a profile without a fleet left out)", keys, want)
		}
		if got, err := s.ListVehicleFleets(ctx, 2); err != nil || len(got) != 2 {
			t.Errorf("ListVehicleFleets(limit 2): %d, %v", len(got), err)
		}
	})
}
