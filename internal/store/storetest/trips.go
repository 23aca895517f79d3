package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// newTrip returns an active trip of scope sc with every field set, version 1.
func newTrip(sc store.Scope, id, vehicle string, start time.Time) store.Trip {
	return store.Trip{
		ID:              id,
		Org:             sc.Org,
		Env:             sc.Env,
		VehicleID:       vehicle,
		DriverID:        "drv_" + vehicle,
		Status:          store.TripActive,
		StartTime:       start,
		StartLocation:   &store.Place{Latitude: 39.961176, Longitude: -82.998794, Address: "1 Main St, Columbus"},
		Metadata:        []byte(`{"route":"north","stops":[1,2,3],"cargo":{"kind":"cold","temp_c":-18.5}}`),
		MetadataHistory: []byte(`[{"timestamp":"2025-03-14T10:09:26Z","changes":{"added":["route"]}}]`),
		State:           []byte(`{"analytics":{"distance_m":0},"paused":false}`),
		Totals:          store.TripTotals{SafetyScore: 100, EcoScore: 100},
		Version:         1,
		CreatedAt:       start.Add(1500 * time.Microsecond),
		UpdatedAt:       start.Add(1500 * time.Microsecond),
	}
}

// storedTrip is what a backend returns for t: times at millisecond
// precision in UTC, absent JSON columns as their empty values.
func storedTrip(t store.Trip) store.Trip {
	t.StartTime, t.EndTime = storedTime(t.StartTime), storedTime(t.EndTime)
	t.CreatedAt, t.UpdatedAt = storedTime(t.CreatedAt), storedTime(t.UpdatedAt)
	if len(t.Metadata) == 0 {
		t.Metadata = []byte("{}")
	}
	if len(t.MetadataHistory) == 0 {
		t.MetadataHistory = []byte("[]")
	}
	if len(t.State) == 0 {
		t.State = []byte("{}")
	}
	return t
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// namedTime is a time read back and the one expected.
type namedTime struct {
	name      string
	got, want time.Time
}

// diffTimes appends to d how the named times differ, in instant or zone.
func diffTimes(d []string, ts ...namedTime) []string {
	for _, c := range ts {
		switch {
		case !c.got.Equal(c.want):
			d = append(d, fmt.Sprintf("%s = %v, want %v", c.name, c.got, c.want))
		case c.got.Location() != time.UTC:
			d = append(d, fmt.Sprintf("%s = %v, want it in UTC", c.name, c.got))
		}
	}
	return d
}

// diffTrip describes how got differs from want, "" when it does not.
func diffTrip(got, want store.Trip) string {
	var d []string
	field := func(name string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			d = append(d, fmt.Sprintf("%s = %+v, want %+v", name, g, w))
		}
	}
	field("ID", got.ID, want.ID)
	field("Org", got.Org, want.Org)
	field("Env", got.Env, want.Env)
	field("VehicleID", got.VehicleID, want.VehicleID)
	field("DriverID", got.DriverID, want.DriverID)
	field("Status", got.Status, want.Status)
	field("StartLocation", got.StartLocation, want.StartLocation)
	field("EndLocation", got.EndLocation, want.EndLocation)
	field("Totals", got.Totals, want.Totals)
	field("Version", got.Version, want.Version)
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"Metadata", got.Metadata, want.Metadata},
		{"MetadataHistory", got.MetadataHistory, want.MetadataHistory},
		{"State", got.State, want.State},
	} {
		if !sameJSON(c.got, c.want) {
			d = append(d, fmt.Sprintf("%s = %s, want %s", c.name, c.got, c.want))
		}
	}
	d = diffTimes(d,
		namedTime{"StartTime", got.StartTime, want.StartTime},
		namedTime{"EndTime", got.EndTime, want.EndTime},
		namedTime{"CreatedAt", got.CreatedAt, want.CreatedAt},
		namedTime{"UpdatedAt", got.UpdatedAt, want.UpdatedAt},
	)
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprint(d)
}

func checkTrip(t *testing.T, what string, got, want store.Trip) {
	t.Helper()
	if d := diffTrip(got, want); d != "" {
		t.Errorf("%s: %s", what, d)
	}
}

func mustCreateTrips(t *testing.T, s store.Backend, ts ...store.Trip) {
	t.Helper()
	for _, tr := range ts {
		if err := s.CreateTrip(t.Context(), tr); err != nil {
			t.Fatalf("CreateTrip(%s): %v", tr.ID, err)
		}
	}
}

func getTrip(t *testing.T, s store.Backend, sc store.Scope, id string) store.Trip {
	t.Helper()
	tr, err := s.GetTrip(t.Context(), sc, id)
	if err != nil {
		t.Fatalf("GetTrip(%+v, %s): %v", sc, id, err)
	}
	return tr
}

// next is t changed as the ingest pipeline would between two writes, at
// version t.Version+1.
func next(t store.Trip, at time.Time) store.Trip {
	t.Version++
	t.UpdatedAt = at
	t.Totals.DistanceKm += 1.25
	t.Totals.DurationMinutes += 2.5
	t.Totals.AvgSpeedKmh = 30
	t.Totals.MaxSpeedKmh = max(t.Totals.MaxSpeedKmh, 61.5)
	t.Totals.SafetyScore -= 0.5
	t.Totals.EventsCount++
	t.Totals.LocationsCount += 10
	t.State = fmt.Appendf(nil, `{"version":%d}`, t.Version)
	return t
}

func block(seq int64, firstTS int64) store.PointBlock {
	return store.PointBlock{
		Seq:     seq,
		FirstTS: firstTS,
		LastTS:  firstTS + 9_000,
		Count:   10,
		Data:    fmt.Appendf([]byte{0x00, 0xff, 0x7f}, "block %d", seq),
	}
}

func event(id string, at time.Time, detail string) store.TripEvent {
	return store.TripEvent{ID: id, Type: "harsh_braking", Time: at, Data: fmt.Appendf(nil, `{"id":%q,"detail":%q}`, id, detail)}
}

func readPoints(t *testing.T, s store.Backend, sc store.Scope, tripID string) []store.PointBlock {
	t.Helper()
	bs, err := s.ReadPoints(t.Context(), sc, tripID)
	if err != nil {
		t.Fatalf("ReadPoints(%+v, %s): %v", sc, tripID, err)
	}
	return bs
}

func tripEvents(t *testing.T, s store.Backend, sc store.Scope, tripID string) []store.TripEvent {
	t.Helper()
	es, err := s.TripEvents(t.Context(), sc, tripID)
	if err != nil {
		t.Fatalf("TripEvents(%+v, %s): %v", sc, tripID, err)
	}
	return es
}

func checkBlocks(t *testing.T, what string, got []store.PointBlock, tripID string, want ...store.PointBlock) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d blocks %v, want %d", what, len(got), seqs(got), len(want))
		return
	}
	for i, w := range want {
		w.TripID = tripID
		g := got[i]
		if g.TripID != w.TripID || g.Seq != w.Seq || g.FirstTS != w.FirstTS || g.LastTS != w.LastTS || g.Count != w.Count || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s: block %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func seqs(bs []store.PointBlock) []int64 {
	out := make([]int64, len(bs))
	for i, b := range bs {
		out[i] = b.Seq
	}
	return out
}

func checkEvents(t *testing.T, what string, got []store.TripEvent, tripID string, want ...store.TripEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events, want %d: got %+v", what, len(got), len(want), got)
		return
	}
	for i, w := range want {
		g := got[i]
		var d []string
		if g.ID != w.ID || g.TripID != tripID || g.Type != w.Type {
			d = append(d, fmt.Sprintf("id, trip, type = %s, %s, %s; want %s, %s, %s", g.ID, g.TripID, g.Type, w.ID, tripID, w.Type))
		}
		if !sameJSON(g.Data, w.Data) {
			d = append(d, fmt.Sprintf("Data = %s, want %s", g.Data, w.Data))
		}
		d = diffTimes(d, namedTime{"Time", g.Time, storedTime(w.Time)})
		if len(d) > 0 {
			t.Errorf("%s: event %d: %v", what, i, d)
		}
	}
}

// trips is the contract of store.Trips.
func trips(t *testing.T, open Opener) {
	live := store.Scope{Org: "org_a", Env: "live"}

	t.Run("CreateAndGet", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		full := newTrip(live, "trip_full", "veh_1", base)
		full.Status = store.TripCompleted
		full.EndTime = base.Add(47*time.Minute + 123456*time.Microsecond)
		full.EndLocation = &store.Place{Latitude: -33.868820, Longitude: 151.209296}
		full.Totals = store.TripTotals{DistanceKm: 42.125, DurationMinutes: 47.5, AvgSpeedKmh: 53.25, MaxSpeedKmh: 112.75,
			SafetyScore: 87.5, EcoScore: 91.25, EventsCount: 3, LocationsCount: 2851}
		full.Version = 7
		full.UpdatedAt = full.EndTime.Add(time.Second)
		bare := store.Trip{ID: "trip_bare", Org: live.Org, Env: live.Env, VehicleID: "veh_2", Status: store.TripActive,
			StartTime: time.Date(2031, 7, 1, 0, 0, 0, 999_999, time.Local), Version: 1, CreatedAt: base, UpdatedAt: base}
		mustCreateTrips(t, s, full, bare)
		for _, tr := range []store.Trip{full, bare} {
			got := getTrip(t, s, live, tr.ID)
			checkTrip(t, "GetTrip("+tr.ID+")", got, storedTrip(tr))
			if want := tr.StartTime.UnixMilli(); got.StartTime.UnixMilli() != want {
				t.Errorf("StartTime of %s = %d ms, want %d", tr.ID, got.StartTime.UnixMilli(), want)
			}
		}
		if got := getTrip(t, s, live, bare.ID); !got.EndTime.IsZero() || got.StartLocation != nil || got.EndLocation != nil {
			t.Errorf("GetTrip(%s): EndTime %v, locations %v and %v; want zero and nil", bare.ID, got.EndTime, got.StartLocation, got.EndLocation)
		}
		if _, err := s.GetTrip(t.Context(), live, "trip_missing"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("GetTrip of a missing id: %v, want ErrNotFound", err)
		}
	})

	t.Run("OneOpenTripPerVehicle", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		first := newTrip(live, "trip_1", "veh_1", base)
		mustCreateTrips(t, s, first)
		paused := newTrip(live, "trip_2", "veh_1", base.Add(time.Minute))
		paused.Status = store.TripPaused
		for _, tr := range []store.Trip{newTrip(live, "trip_2", "veh_1", base.Add(time.Minute)), paused} {
			if err := s.CreateTrip(t.Context(), tr); !errors.Is(err, store.ErrConflict) {
				t.Errorf("CreateTrip of a second %s trip for the vehicle: %v, want ErrConflict", tr.Status, err)
			}
		}
		sameID := newTrip(store.Scope{Org: "org_b", Env: "test"}, first.ID, "veh_9", base)
		if err := s.CreateTrip(t.Context(), sameID); !errors.Is(err, store.ErrConflict) {
			t.Errorf("CreateTrip with a taken id: %v, want ErrConflict", err)
		}
		done := newTrip(live, "trip_done", "veh_1", base.Add(-time.Hour))
		done.Status, done.EndTime = store.TripCompleted, base.Add(-time.Minute)
		mustCreateTrips(t, s,
			newTrip(store.Scope{Org: live.Org, Env: "test"}, "trip_test_env", "veh_1", base),
			newTrip(store.Scope{Org: "org_b", Env: live.Env}, "trip_other_org", "veh_1", base),
			newTrip(live, "trip_other_vehicle", "veh_2", base),
			done,
		)
		checkTrip(t, "first trip after conflicts", getTrip(t, s, live, first.ID), storedTrip(first))

		// Once the first is completed, the vehicle may start another.
		stopped := next(first, base.Add(time.Hour))
		stopped.Status, stopped.EndTime = store.TripCompleted, base.Add(time.Hour)
		if err := s.UpdateTrip(t.Context(), stopped, first.Version); err != nil {
			t.Fatalf("UpdateTrip completing the first trip: %v", err)
		}
		again := paused
		again.ID = "trip_3"
		mustCreateTrips(t, s, again)

		// Reopening the first would give the vehicle two open trips.
		reopened := next(stopped, base.Add(2*time.Hour))
		reopened.Status, reopened.EndTime = store.TripActive, time.Time{}
		if err := s.UpdateTrip(t.Context(), reopened, stopped.Version); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateTrip reopening a trip while another is open: %v, want ErrConflict", err)
		}
		checkTrip(t, "first trip after a refused reopening", getTrip(t, s, live, first.ID), storedTrip(stopped))
	})

	t.Run("OutOfScope", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		tr := newTrip(live, "trip_1", "veh_1", base)
		mustCreateTrips(t, s, tr)
		v2 := next(tr, base.Add(time.Minute))
		if err := s.AppendPoints(t.Context(), v2, tr.Version, []store.PointBlock{block(1, base.UnixMilli())},
			[]store.TripEvent{event("evt_1", base.Add(time.Second), "x")}, false); err != nil {
			t.Fatalf("AppendPoints: %v", err)
		}
		for _, sc := range []store.Scope{{Org: live.Org, Env: "test"}, {Org: "org_b", Env: live.Env}} {
			if _, err := s.GetTrip(t.Context(), sc, tr.ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetTrip(%+v, %s): %v, want ErrNotFound", sc, tr.ID, err)
			}
			if bs := readPoints(t, s, sc, tr.ID); len(bs) != 0 {
				t.Errorf("ReadPoints(%+v, %s) = %d blocks, want none", sc, tr.ID, len(bs))
			}
			if es := tripEvents(t, s, sc, tr.ID); len(es) != 0 {
				t.Errorf("TripEvents(%+v, %s) = %d events, want none", sc, tr.ID, len(es))
			}
			if ts, err := s.ListTrips(t.Context(), store.TripFilter{Scope: sc}); err != nil || len(ts) != 0 {
				t.Errorf("ListTrips(%+v) = %v, %v; want none", sc, tripIDs(ts), err)
			}
			moved := next(v2, base.Add(time.Hour))
			moved.Org, moved.Env = sc.Org, sc.Env
			if err := s.UpdateTrip(t.Context(), moved, v2.Version); err == nil {
				t.Errorf("UpdateTrip of trip %s as scope %+v succeeded, want an error", tr.ID, sc)
			}
		}
		checkTrip(t, "trip after updates from other scopes", getTrip(t, s, live, tr.ID), storedTrip(v2))
	})

	t.Run("UpdateComparesVersion", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		tr := newTrip(live, "trip_1", "veh_1", base)
		mustCreateTrips(t, s, tr)
		v2 := next(tr, base.Add(30*time.Minute))
		v2.DriverID = "drv_other"
		v2.Status = store.TripCompleted
		v2.EndTime = base.Add(30*time.Minute + 250*time.Microsecond)
		v2.EndLocation = &store.Place{Latitude: 40.1, Longitude: -83.2, Address: "depot"}
		v2.Metadata = []byte(`{"route":"south"}`)
		v2.MetadataHistory = []byte(`[{"changes":{"modified":["route"]}},{"changes":{"removed":["stops","cargo"]}}]`)
		if err := s.UpdateTrip(t.Context(), v2, tr.Version); err != nil {
			t.Fatalf("UpdateTrip: %v", err)
		}
		checkTrip(t, "GetTrip after UpdateTrip", getTrip(t, s, live, tr.ID), storedTrip(v2))

		stale := next(tr, base.Add(time.Hour))
		stale.DriverID = "drv_stale"
		if err := s.UpdateTrip(t.Context(), stale, tr.Version); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateTrip at a stale version: %v, want ErrConflict", err)
		}
		missing := next(tr, base.Add(time.Hour))
		missing.ID = "trip_missing"
		if err := s.UpdateTrip(t.Context(), missing, tr.Version); !errors.Is(err, store.ErrConflict) {
			t.Errorf("UpdateTrip of a missing trip: %v, want ErrConflict", err)
		}
		checkTrip(t, "GetTrip after refused updates", getTrip(t, s, live, tr.ID), storedTrip(v2))
	})

	t.Run("AppendPoints", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		tr := newTrip(live, "trip_1", "veh_1", base)
		other := newTrip(live, "trip_2", "veh_2", base)
		mustCreateTrips(t, s, tr, other)
		ms0 := base.UnixMilli()
		b1, b2, b3, b4 := block(1, ms0), block(2, ms0+10_000), block(3, ms0+20_000), block(4, ms0+30_000)
		e1 := event("evt_1", base.Add(5*time.Second), "first")
		e2 := event("evt_2", base.Add(15*time.Second+700*time.Microsecond), "second")
		e3 := event("evt_3", base.Add(25*time.Second), "third")

		v2 := next(tr, base.Add(time.Minute))
		if err := s.AppendPoints(t.Context(), v2, tr.Version, []store.PointBlock{b1, b2}, []store.TripEvent{e2, e1}, false); err != nil {
			t.Fatalf("first AppendPoints: %v", err)
		}
		checkBlocks(t, "after the first append", readPoints(t, s, live, tr.ID), tr.ID, b1, b2)
		checkEvents(t, "after the first append", tripEvents(t, s, live, tr.ID), tr.ID, e1, e2)
		checkTrip(t, "trip after the first append", getTrip(t, s, live, tr.ID), storedTrip(v2))

		// Blocks out of order read back in order; an event written again
		// (the same id, details refined) is kept once, as last written.
		v3 := next(v2, base.Add(2*time.Minute))
		e2b := event(e2.ID, e2.Time.Add(time.Second), "second, refined")
		if err := s.AppendPoints(t.Context(), v3, v2.Version, []store.PointBlock{b4, b3}, []store.TripEvent{e2b, e3, e2b}, false); err != nil {
			t.Fatalf("second AppendPoints: %v", err)
		}
		checkBlocks(t, "after the second append", readPoints(t, s, live, tr.ID), tr.ID, b1, b2, b3, b4)
		checkEvents(t, "after the second append", tripEvents(t, s, live, tr.ID), tr.ID, e1, e2b, e3)
		checkTrip(t, "trip after the second append", getTrip(t, s, live, tr.ID), storedTrip(v3))

		// An append with no blocks still updates the trip; replaceEvents
		// replaces the trip's events, and only that trip's.
		oe := event("evt_other", base, "other trip")
		ov2 := next(other, base.Add(time.Minute))
		if err := s.AppendPoints(t.Context(), ov2, other.Version, nil, []store.TripEvent{oe}, false); err != nil {
			t.Fatalf("AppendPoints of the other trip: %v", err)
		}
		e4 := event("evt_4", base.Add(time.Second), "recomputed")
		v4 := next(v3, base.Add(3*time.Minute))
		if err := s.AppendPoints(t.Context(), v4, v3.Version, nil, []store.TripEvent{e4, e3}, true); err != nil {
			t.Fatalf("AppendPoints replacing events: %v", err)
		}
		checkEvents(t, "after replacing events", tripEvents(t, s, live, tr.ID), tr.ID, e4, e3)
		checkBlocks(t, "after replacing events", readPoints(t, s, live, tr.ID), tr.ID, b1, b2, b3, b4)
		checkTrip(t, "trip after replacing events", getTrip(t, s, live, tr.ID), storedTrip(v4))
		checkEvents(t, "other trip after replacing events", tripEvents(t, s, live, other.ID), other.ID, oe)

		v5 := next(v4, base.Add(4*time.Minute))
		if err := s.AppendPoints(t.Context(), v5, v4.Version, nil, nil, true); err != nil {
			t.Fatalf("AppendPoints replacing events with none: %v", err)
		}
		checkEvents(t, "after replacing events with none", tripEvents(t, s, live, tr.ID), tr.ID)

		// An append that changes the status writes it (paused, then
		// active again), and a stale one that would changes nothing.
		v6 := next(v5, base.Add(5*time.Minute))
		v6.Status = "paused"
		if err := s.AppendPoints(t.Context(), v6, v5.Version, nil, nil, false); err != nil {
			t.Fatalf("AppendPoints pausing: %v", err)
		}
		checkTrip(t, "trip after an append that paused it", getTrip(t, s, live, tr.ID), storedTrip(v6))
		stale := next(v5, base.Add(6*time.Minute))
		if err := s.AppendPoints(t.Context(), stale, v5.Version, nil, nil, false); !errors.Is(err, store.ErrConflict) {
			t.Errorf("stale AppendPoints resuming: %v, want ErrConflict", err)
		}
		checkTrip(t, "trip after a stale append", getTrip(t, s, live, tr.ID), storedTrip(v6))
		v7 := next(v6, base.Add(7*time.Minute))
		v7.Status = tr.Status
		if err := s.AppendPoints(t.Context(), v7, v6.Version, nil, nil, false); err != nil {
			t.Fatalf("AppendPoints resuming: %v", err)
		}
		checkTrip(t, "trip after an append that resumed it", getTrip(t, s, live, tr.ID), storedTrip(v7))
		if bs := readPoints(t, s, live, "trip_missing"); len(bs) != 0 {
			t.Errorf("ReadPoints of a missing trip = %d blocks, want none", len(bs))
		}
	})

	t.Run("FailedAppendWritesNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		tr := newTrip(live, "trip_1", "veh_1", base)
		mustCreateTrips(t, s, tr)
		b1, e1 := block(1, base.UnixMilli()), event("evt_1", base.Add(time.Second), "first")
		v2 := next(tr, base.Add(time.Minute))
		if err := s.AppendPoints(t.Context(), v2, tr.Version, []store.PointBlock{b1}, []store.TripEvent{e1}, false); err != nil {
			t.Fatalf("AppendPoints: %v", err)
		}
		check := func(what string) {
			t.Helper()
			checkBlocks(t, what, readPoints(t, s, live, tr.ID), tr.ID, b1)
			checkEvents(t, what, tripEvents(t, s, live, tr.ID), tr.ID, e1)
			checkTrip(t, what, getTrip(t, s, live, tr.ID), storedTrip(v2))
		}

		stale := next(tr, base.Add(2*time.Minute))
		e1b := event(e1.ID, e1.Time, "overwritten")
		more := []store.TripEvent{e1b, event("evt_2", base.Add(2*time.Second), "second")}
		for _, replace := range []bool{false, true} {
			err := s.AppendPoints(t.Context(), stale, tr.Version, []store.PointBlock{block(2, base.UnixMilli()+10_000)}, more, replace)
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("AppendPoints at a stale version, replaceEvents %v: %v, want ErrConflict", replace, err)
			}
			check(fmt.Sprintf("after a stale append, replaceEvents %v", replace))
		}

		// A block already stored fails the append after the trip's update
		// succeeded: the update is rolled back with the rest.
		v3 := next(v2, base.Add(3*time.Minute))
		dup := []store.PointBlock{block(2, base.UnixMilli()+10_000), b1}
		if err := s.AppendPoints(t.Context(), v3, v2.Version, dup, more, true); err == nil {
			t.Error("AppendPoints of a stored block succeeded, want an error")
		}
		check("after an append of a stored block")
	})

	t.Run("AppendManyBlocks", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		tr := newTrip(live, "trip_1", "veh_1", base)
		mustCreateTrips(t, s, tr)
		const n = 200
		all := make([]store.PointBlock, n)
		for i := range all {
			all[i] = block(int64(i+1), base.UnixMilli()+int64(i)*10_000)
		}
		// Enough blocks per append for a backend to write them otherwise
		// than a few (PostgreSQL copies them). Given newest first, they
		// read back oldest first.
		first := slices.Clone(all[:100])
		slices.Reverse(first)
		v2 := next(tr, base.Add(time.Minute))
		if err := s.AppendPoints(t.Context(), v2, tr.Version, first, nil, false); err != nil {
			t.Fatalf("AppendPoints of 100 blocks: %v", err)
		}
		checkBlocks(t, "after appending 100 blocks", readPoints(t, s, live, tr.ID), tr.ID, all[:100]...)

		// The rest, with a block already stored among them, fails whole;
		// so does the rest at a stale version.
		v3 := next(v2, base.Add(2*time.Minute))
		withDup := append(slices.Clone(all[100:]), all[99])
		if err := s.AppendPoints(t.Context(), v3, v2.Version, withDup, nil, false); err == nil {
			t.Error("AppendPoints of 101 blocks, one already stored, succeeded; want an error")
		}
		if err := s.AppendPoints(t.Context(), v3, tr.Version, all[100:], nil, false); !errors.Is(err, store.ErrConflict) {
			t.Errorf("AppendPoints of 100 blocks at a stale version: %v, want ErrConflict", err)
		}
		checkBlocks(t, "after failed appends", readPoints(t, s, live, tr.ID), tr.ID, all[:100]...)
		checkTrip(t, "trip after failed appends", getTrip(t, s, live, tr.ID), storedTrip(v2))

		if err := s.AppendPoints(t.Context(), v3, v2.Version, all[100:], nil, false); err != nil {
			t.Fatalf("AppendPoints of the last 100 blocks: %v", err)
		}
		checkBlocks(t, "after appending all", readPoints(t, s, live, tr.ID), tr.ID, all...)
	})

	tripListing(t, open)
}

func tripIDs(ts []store.Trip) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
