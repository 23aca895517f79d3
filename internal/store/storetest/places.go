package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// devices is the contract of store.Devices.
func devices(t *testing.T, open Opener) {
	t.Run("VersionsAndScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		if _, err := s.GetDeviceSettings(ctx, sc, "d1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing device: %v", err)
		}
		at := time.UnixMilli(1_800_000_000_123).UTC()
		d := store.DeviceSettings{Org: sc.Org, Env: sc.Env, DeviceID: "d1", Settings: []byte(`{"a":1}`), Record: []byte(`{"v":1}`), AppliedAt: at}
		if err := s.PutDeviceSettings(ctx, d, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDeviceSettings(ctx, d, 0); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second create: %v", err)
		}
		d.Settings = []byte(`{"a":2}`)
		if err := s.PutDeviceSettings(ctx, d, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.PutDeviceSettings(ctx, d, 1); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale version: %v", err)
		}
		got, err := s.GetDeviceSettings(ctx, sc, "d1")
		if err != nil || got.Version != 2 || string(got.Settings) != `{"a":2}` || !got.AppliedAt.Equal(at) {
			t.Fatalf("got %+v %v", got, err)
		}
		if _, err := s.GetDeviceSettings(ctx, store.Scope{Org: "o2", Env: "test"}, "d1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another org: %v", err)
		}
		if _, err := s.GetDeviceSettings(ctx, store.Scope{Org: "o1", Env: "live"}, "d1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another env: %v", err)
		}
	})
}

// geofences is the contract of store.Geofences.
func geofences(t *testing.T, open Opener) {
	t.Run("CRUDAndScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		now := time.UnixMilli(1_800_000_000_000).UTC()
		g := store.Geofence{ID: "gf1", Org: sc.Org, Env: sc.Env, Name: "Depot", Type: "circle", Area: []byte(`{"radius_m":5}`), Metadata: []byte(`{}`), CreatedAt: now, UpdatedAt: now}
		if err := s.CreateGeofence(ctx, g); err != nil {
			t.Fatal(err)
		}
		g2 := g
		g2.ID, g2.CreatedAt = "gf2", now.Add(time.Second)
		if err := s.CreateGeofence(ctx, g2); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListGeofences(ctx, sc)
		if err != nil || len(list) != 2 || list[0].ID != "gf1" {
			t.Fatalf("list %v %v", list, err)
		}
		if l, err := s.ListGeofences(ctx, store.Scope{Org: "o2", Env: "test"}); err != nil || len(l) != 0 {
			t.Fatalf("another org lists %d", len(l))
		}
		g.Name, g.UpdatedAt = "Depot 2", now.Add(time.Minute)
		if err := s.UpdateGeofence(ctx, g); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetGeofence(ctx, sc, "gf1")
		if err != nil || got.Name != "Depot 2" || !got.UpdatedAt.Equal(g.UpdatedAt) || string(got.Area) != `{"radius_m":5}` {
			t.Fatalf("get %+v %v", got, err)
		}
		other := g
		other.Org = "o2"
		if err := s.UpdateGeofence(ctx, other); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign update: %v", err)
		}
		if err := s.DeleteGeofence(ctx, store.Scope{Org: "o2", Env: "test"}, "gf1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("foreign delete: %v", err)
		}
		if err := s.DeleteGeofence(ctx, sc, "gf1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetGeofence(ctx, sc, "gf1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after delete: %v", err)
		}
	})
}

// incidents is the contract of store.Incidents.
func incidents(t *testing.T, open Opener) {
	t.Run("CRUDFilterPage", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		base := time.UnixMilli(1_800_000_000_000).UTC()
		for i := 0; i < 5; i++ {
			in := store.Incident{ID: "inc" + string(rune('a'+i)), Org: sc.Org, Env: sc.Env, Status: "active", Severity: "high", EventType: "crash",
				FleetID: "f1", DriverID: "d1", Doc: []byte(`{"n":1}`), Version: 1, CreatedAt: base.Add(time.Duration(i) * time.Minute), UpdatedAt: base}
			if i%2 == 1 {
				in.EventType = "breakdown"
			}
			if err := s.CreateIncident(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		page, total, err := s.ListIncidents(ctx, store.IncidentFilter{Scope: sc, Limit: 2, Offset: 1})
		if err != nil || total != 5 || len(page) != 2 || page[0].ID != "incd" {
			t.Fatalf("page %v total %d err %v", page, total, err)
		}
		if _, total, err := s.ListIncidents(ctx, store.IncidentFilter{Scope: sc, EventType: "breakdown", Limit: 10}); err != nil || total != 2 {
			t.Fatalf("filtered total %d", total)
		}
		if _, total, err := s.ListIncidents(ctx, store.IncidentFilter{Scope: sc, From: base.Add(2 * time.Minute), Limit: 10}); err != nil || total != 3 {
			t.Fatalf("from total %d", total)
		}
		if _, total, err := s.ListIncidents(ctx, store.IncidentFilter{Scope: store.Scope{Org: "o2", Env: "test"}, Limit: 10}); err != nil || total != 0 {
			t.Fatalf("another org total %d", total)
		}
		in, err := s.GetIncident(ctx, sc, "inca")
		if err != nil {
			t.Fatal(err)
		}
		in.Status, in.Version, in.Doc = "resolved", 2, []byte(`{"n":2}`)
		if err := s.UpdateIncident(ctx, in, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateIncident(ctx, in, 1); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale update: %v", err)
		}
		got, err := s.GetIncident(ctx, sc, "inca")
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "resolved" || string(got.Doc) != `{"n":2}` || got.Version != 2 {
			t.Fatalf("after update %+v", got)
		}
		if _, err := s.GetIncident(ctx, store.Scope{Org: "o1", Env: "live"}, "inca"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another env: %v", err)
		}
	})
}

// alerts is the contract of store.Alerts.
func alerts(t *testing.T, open Opener) {
	t.Run("VersionsAndScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		now := time.UnixMilli(1_800_000_000_000).UTC()
		a := store.Alert{ID: "al1", Org: sc.Org, Env: sc.Env, Status: "active", Doc: []byte(`{"x":1}`), Version: 1, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := s.CreateAlert(ctx, a); err != nil {
			t.Fatal(err)
		}
		a.Status, a.Version = "cancelled", 2
		if err := s.UpdateAlert(ctx, a, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateAlert(ctx, a, 1); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale: %v", err)
		}
		got, err := s.GetAlert(ctx, sc, "al1")
		if err != nil || got.Status != "cancelled" || got.Version != 2 || !got.ExpiresAt.Equal(a.ExpiresAt) {
			t.Fatalf("got %+v %v", got, err)
		}
		if _, err := s.GetAlert(ctx, store.Scope{Org: "o2", Env: "test"}, "al1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another org: %v", err)
		}
	})
	t.Run("List", func(t *testing.T) { alertList(t, open) })
}

// optimizations is the contract of store.Optimizations.
func optimizations(t *testing.T, open Opener) {
	t.Run("VersionsAndScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		sc := store.Scope{Org: "o1", Env: "test"}
		now := time.UnixMilli(1_800_000_000_000).UTC()
		o := store.Optimization{ID: "op1", Org: sc.Org, Env: sc.Env, Status: "completed", Doc: []byte(`{"a":1}`), Version: 1, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateOptimization(ctx, o); err != nil {
			t.Fatal(err)
		}
		o.Status, o.Version = "applied", 2
		if err := s.UpdateOptimization(ctx, o, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateOptimization(ctx, o, 1); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("stale: %v", err)
		}
		got, err := s.GetOptimization(ctx, sc, "op1")
		if err != nil || got.Status != "applied" || got.Version != 2 || !got.CreatedAt.Equal(now) {
			t.Fatalf("got %+v %v", got, err)
		}
		if _, err := s.GetOptimization(ctx, store.Scope{Org: "o1", Env: "live"}, "op1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another env: %v", err)
		}
	})
}
