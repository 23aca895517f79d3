package storetest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// sortKeys are the sort keys of store.TripFilter.
var sortKeys = []string{"start_time", "end_time", "distance", "duration", "safety_score"}

// fleet returns n trips of scope sc, ids starting with prefix, whose sort columns tie often, so that
// listings depend on the id tie-break. Ids mix cases: byte order ("trip_A"
// before "trip_a") differs from most collations' order.
func fleet(sc store.Scope, prefix string, n int) []store.Trip {
	out := make([]store.Trip, n)
	for i := range n {
		start := base.Add(time.Duration((i*5)%11) * time.Minute)
		tr := newTrip(sc, fmt.Sprintf("%s%c%02d", prefix, "aBbA"[i%4], (i*7)%n), fmt.Sprintf("veh_%02d", i), start)
		tr.DriverID = fmt.Sprintf("drv_%d", i%3)
		switch i % 6 {
		case 0:
			// active: no end time
		case 3:
			tr.Status, tr.EndTime = store.TripCancelled, start.Add(time.Duration((i*3)%7)*10*time.Minute)
		default:
			tr.Status, tr.EndTime = store.TripCompleted, start.Add(time.Duration((i*3)%7)*10*time.Minute)
		}
		tr.Totals.DistanceKm = float64((i*3)%8) * 1.25
		tr.Totals.DurationMinutes = float64((i*7)%5) * 10.5
		tr.Totals.SafetyScore = 100 - float64(i%4)*2.5
		tr.Totals.EcoScore = 90 + float64(i%3)
		if i%5 != 4 { // every fifth trip has no location, so no score
			tr.Totals.LocationsCount = 10 + i
		}
		out[i] = tr
	}
	return out
}

// sortValue is t's value of the sort key, as a Keyset holds it: times in
// unix milliseconds, 0 when unset; the safety score of a trip without
// locations store.NoScore.
func sortValue(key string, t store.Trip) float64 {
	msOf := func(at time.Time) float64 {
		if at.IsZero() {
			return 0
		}
		return float64(at.UnixMilli())
	}
	switch key {
	case "end_time":
		return msOf(t.EndTime)
	case "distance":
		return t.Totals.DistanceKm
	case "duration":
		return t.Totals.DurationMinutes
	case "safety_score":
		if t.Totals.LocationsCount == 0 {
			return store.NoScore
		}
		return t.Totals.SafetyScore
	default:
		return msOf(t.StartTime)
	}
}

func keysetOf(key string, t store.Trip) *store.Keyset {
	return &store.Keyset{Value: sortValue(key, t), ID: t.ID}
}

// listingOrder compares trips as a listing by key orders them: by the
// key's value, ties by id in byte order, all reversed when desc.
func listingOrder(key string, desc bool) func(a, b store.Trip) int {
	return func(a, b store.Trip) int {
		c := cmp.Or(cmp.Compare(sortValue(key, a), sortValue(key, b)), strings.Compare(a.ID, b.ID))
		if desc {
			return -c
		}
		return c
	}
}

// listed is the ids of ts in the order of a listing by key.
func listed(ts []store.Trip, key string, desc bool) []string {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, listingOrder(key, desc))
	return tripIDs(ts)
}

func listTrips(t *testing.T, s store.Backend, f store.TripFilter) []store.Trip {
	t.Helper()
	ts, err := s.ListTrips(t.Context(), f)
	if err != nil {
		t.Fatalf("ListTrips(%s): %v", describe(f), err)
	}
	return ts
}

// describe prints a filter with its keysets' contents.
func describe(f store.TripFilter) string {
	s := fmt.Sprintf("%+v", f)
	if f.After != nil {
		s += fmt.Sprintf(" after %+v", *f.After)
	}
	if f.Before != nil {
		s += fmt.Sprintf(" before %+v", *f.Before)
	}
	return s
}

// summaryOf is the summary of ts as the store computes it.
func summaryOf(ts []store.Trip) store.TripSummary {
	var s store.TripSummary
	for _, t := range ts {
		s.Count++
		s.TotalDistanceKm += t.Totals.DistanceKm
		s.TotalDurationMin += t.Totals.DurationMinutes
		if t.Totals.LocationsCount > 0 {
			s.Scored++
			s.AvgSafetyScore += t.Totals.SafetyScore
			s.AvgEcoScore += t.Totals.EcoScore
		}
		switch t.Status {
		case store.TripActive, store.TripPaused:
			s.Active++
		case store.TripCompleted:
			s.Completed++
		}
	}
	if s.Scored > 0 {
		s.AvgSafetyScore /= float64(s.Scored)
		s.AvgEcoScore /= float64(s.Scored)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func sameSummary(a, b store.TripSummary) bool {
	return a.Count == b.Count && a.Scored == b.Scored && a.Active == b.Active && a.Completed == b.Completed &&
		near(a.TotalDistanceKm, b.TotalDistanceKm) && near(a.TotalDurationMin, b.TotalDurationMin) &&
		near(a.AvgSafetyScore, b.AvgSafetyScore) && near(a.AvgEcoScore, b.AvgEcoScore)
}

// tripListing is the contract of ListTrips, SummarizeTrips and
// ActiveTripStats.
func tripListing(t *testing.T, open Opener) {
	live := store.Scope{Org: "org_a", Env: "live"}

	// filtered is a small scope with one trip per filter boundary, and
	// trips of other scopes that no filter of live may return.
	filtered := func(t *testing.T, s store.Backend) map[string]store.Trip {
		t.Helper()
		mk := func(id, vehicle, driver, status string, h int, dist, dur, safety, eco float64) store.Trip {
			tr := newTrip(live, id, vehicle, base.Add(time.Duration(h)*time.Hour))
			tr.DriverID, tr.Status = driver, status
			if status != store.TripActive && status != store.TripPaused {
				tr.EndTime = tr.StartTime.Add(time.Duration(dur) * time.Minute)
			}
			tr.Totals = store.TripTotals{DistanceKm: dist, DurationMinutes: dur, SafetyScore: safety, EcoScore: eco, LocationsCount: int(dur * 60)}
			return tr
		}
		ts := []store.Trip{
			mk("t1", "veh_1", "drv_1", store.TripCompleted, 0, 10, 30, 90, 85),
			mk("t2", "veh_1", "drv_2", store.TripCompleted, 1, 20.5, 45, 80, 95),
			mk("t3", "veh_1", "drv_1", store.TripActive, 2, 5.25, 12.5, 100, 100),
			mk("t4", "veh_2", "drv_1", store.TripPaused, 3, 0, 0, 100, 100),
			mk("t5", "veh_3", "drv_2", store.TripCancelled, 4, 7.75, 20, 70, 60),
			mk("t6", "veh_3", "drv_3", store.TripInterrupted, 5, 1.5, 3, 95, 90),
		}
		o1 := mk("o1", "veh_1", "drv_1", store.TripCompleted, 1, 99, 99, 10, 10)
		o1.Org, o1.Env = live.Org, "test"
		o2 := mk("o2", "veh_1", "drv_1", store.TripActive, 2, 99, 99, 10, 10)
		o2.Org = "org_b"
		mustCreateTrips(t, s, append(ts, o1, o2)...)
		byID := map[string]store.Trip{}
		for _, tr := range ts {
			byID[tr.ID] = tr
		}
		return byID
	}
	pick := func(byID map[string]store.Trip, ids ...string) []store.Trip {
		out := make([]store.Trip, len(ids))
		for i, id := range ids {
			out[i] = byID[id]
		}
		return out
	}
	all := []string{"t1", "t2", "t3", "t4", "t5", "t6"}

	t.Run("ListFilters", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		byID := filtered(t, s)
		at := func(h float64) time.Time { return base.Add(time.Duration(h * float64(time.Hour))) }
		ninety := 90.0
		for _, c := range []struct {
			f    store.TripFilter
			want []string
		}{
			{store.TripFilter{}, all},
			{store.TripFilter{Desc: true}, []string{"t6", "t5", "t4", "t3", "t2", "t1"}},
			{store.TripFilter{Limit: 2}, []string{"t1", "t2"}},
			{store.TripFilter{VehicleID: "veh_1"}, []string{"t1", "t2", "t3"}},
			{store.TripFilter{VehicleID: "veh_9"}, nil},
			{store.TripFilter{DriverID: "drv_1"}, []string{"t1", "t3", "t4"}},
			{store.TripFilter{Statuses: []string{store.TripCompleted}}, []string{"t1", "t2"}},
			{store.TripFilter{Statuses: []string{store.TripActive, store.TripPaused}}, []string{"t3", "t4"}},
			{store.TripFilter{Statuses: []string{store.TripCancelled, store.TripInterrupted, store.TripCompleted}}, []string{"t1", "t2", "t5", "t6"}},
			// Both bounds are strict: a trip starting at the bound is out.
			{store.TripFilter{StartAfter: at(1)}, []string{"t3", "t4", "t5", "t6"}},
			{store.TripFilter{StartBefore: at(4)}, []string{"t1", "t2", "t3", "t4"}},
			{store.TripFilter{StartAfter: at(0.5), StartBefore: at(4.5)}, []string{"t2", "t3", "t4", "t5"}},
			{store.TripFilter{VehicleID: "veh_3", DriverID: "drv_2"}, []string{"t5"}},
			{store.TripFilter{VehicleID: "veh_1", Statuses: []string{store.TripActive}}, []string{"t3"}},
			{store.TripFilter{DriverID: "drv_1", StartAfter: at(0), Sort: "distance", Desc: true}, []string{"t3", "t4"}},
			{store.TripFilter{ExcludeID: "t2"}, []string{"t1", "t3", "t4", "t5", "t6"}},
			{store.TripFilter{WithPoints: true}, []string{"t1", "t2", "t3", "t5", "t6"}},
			// Strictly below: the trip scoring 90 is out.
			{store.TripFilter{SafetyBelow: &ninety}, []string{"t2", "t5"}},
			{store.TripFilter{Statuses: []string{store.TripCompleted}, WithPoints: true, ExcludeID: "t1", SafetyBelow: &ninety}, []string{"t2"}},
		} {
			c.f.Scope = live
			got := listTrips(t, s, c.f)
			if !slices.Equal(tripIDs(got), c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("ListTrips(%s) = %q, want %q", describe(c.f), tripIDs(got), c.want)
				continue
			}
			for _, tr := range got {
				checkTrip(t, fmt.Sprintf("ListTrips(%s): %s", describe(c.f), tr.ID), tr, storedTrip(byID[tr.ID]))
			}
		}
		for _, sc := range []store.Scope{{Org: "org_c", Env: live.Env}, {Org: live.Org, Env: "staging"}} {
			got, err := s.ListTrips(t.Context(), store.TripFilter{Scope: sc})
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("ListTrips of empty scope %+v = %#v, %v; want an empty, non-nil list", sc, got, err)
			}
		}
	})

	t.Run("ListSorted", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ts := fleet(live, "trip_", 23)
		mustCreateTrips(t, s, ts...)
		mustCreateTrips(t, s, fleet(store.Scope{Org: "org_b", Env: live.Env}, "other_", 4)...)
		for _, key := range append(sortKeys, "") {
			for _, desc := range []bool{false, true} {
				f := store.TripFilter{Scope: live, Sort: key, Desc: desc} // default limit 50
				if got, want := tripIDs(listTrips(t, s, f)), listed(ts, key, desc); !slices.Equal(got, want) {
					t.Errorf("ListTrips(sort %q, desc %v) =\n%q\nwant\n%q", key, desc, got, want)
				}
			}
		}
	})

	t.Run("ListPaged", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ts := fleet(live, "trip_", 23)
		mustCreateTrips(t, s, ts...)
		const limit = 5
		for _, key := range sortKeys {
			for _, desc := range []bool{false, true} {
				what := fmt.Sprintf("sort %s, desc %v", key, desc)
				f := store.TripFilter{Scope: live, Sort: key, Desc: desc, Limit: limit}
				var pages [][]store.Trip
				for range 10 {
					page := listTrips(t, s, f)
					if len(page) == 0 {
						break
					}
					pages = append(pages, page)
					f.After = keysetOf(key, page[len(page)-1])
				}
				var visited []string
				var sizes []int
				for _, p := range pages {
					visited, sizes = append(visited, tripIDs(p)...), append(sizes, len(p))
				}
				if want := listed(ts, key, desc); !slices.Equal(visited, want) {
					t.Errorf("%s: pages visit\n%q\nwant\n%q", what, visited, want)
					continue
				}
				if !slices.Equal(sizes, []int{5, 5, 5, 5, 3}) {
					t.Errorf("%s: page sizes %v, want [5 5 5 5 3]", what, sizes)
				}

				// Before the first item of a page is the page before it.
				f.After = nil
				for i, p := range pages {
					f.Before = keysetOf(key, p[0])
					got := tripIDs(listTrips(t, s, f))
					var want []string
					if i > 0 {
						want = tripIDs(pages[i-1])
					}
					if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
						t.Errorf("%s: page before page %d = %q, want %q", what, i, got, want)
					}
				}
				// Before the end, with a larger limit, is the last page
				// and what precedes it, still in listing order.
				last := pages[len(pages)-1]
				f.Before, f.Limit = keysetOf(key, last[len(last)-1]), 4
				want := listed(ts, key, desc)[len(ts)-5 : len(ts)-1]
				if got := tripIDs(listTrips(t, s, f)); !slices.Equal(got, want) {
					t.Errorf("%s: 4 before the last = %q, want %q", what, got, want)
				}
				// An Inclusive position takes itself: the page ending (or
				// starting) at an item.
				f.Before = &store.Keyset{Value: sortValue(key, pages[1][limit-1]), ID: pages[1][limit-1].ID, Inclusive: true}
				f.Limit = limit
				if got := tripIDs(listTrips(t, s, f)); !slices.Equal(got, tripIDs(pages[1])) {
					t.Errorf("%s: up to the last of page 1 = %q, want %q", what, got, tripIDs(pages[1]))
				}
				f.Before, f.After = nil, &store.Keyset{Value: sortValue(key, pages[1][0]), ID: pages[1][0].ID, Inclusive: true}
				if got := tripIDs(listTrips(t, s, f)); !slices.Equal(got, tripIDs(pages[1])) {
					t.Errorf("%s: from the first of page 1 = %q, want %q", what, got, tripIDs(pages[1]))
				}
				f.After = nil
			}
		}
	})

	t.Run("ListPagedWhileInserting", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ts := fleet(live, "trip_", 23)
		mustCreateTrips(t, s, ts...)
		const key, desc, limit = "start_time", true, 5
		order := listingOrder(key, desc)
		f := store.TripFilter{Scope: live, Sort: key, Desc: desc, Limit: limit}
		var visited []store.Trip
		inserted := map[string]bool{} // id: whether paging must still reach it
		for page := 0; page < 20; page++ {
			got := listTrips(t, s, f)
			if len(got) == 0 {
				break
			}
			visited = append(visited, got...)
			cursor := got[len(got)-1]
			f.After = keysetOf(key, cursor)
			if page >= 3 {
				continue
			}
			// New trips on both sides of the cursor, including ties with
			// it on both sides of its id. Ids end in a digit: the cursor's
			// with its last digit lowered sorts before it.
			lower := cursor.ID[:len(cursor.ID)-1] + string(cursor.ID[len(cursor.ID)-1]-1)
			tag := fmt.Sprintf("~new_%d", page)
			for j, c := range []struct {
				start time.Time
				id    string
				ahead bool // sorts after the cursor, so paging must reach it
			}{
				{base.Add(24*time.Hour + time.Duration(page)*time.Minute), "trip_late" + tag, false},
				{base.Add(-24*time.Hour - time.Duration(page)*time.Minute), "trip_early" + tag, true},
				{cursor.StartTime, cursor.ID + tag, false},
				{cursor.StartTime, lower + tag, true},
			} {
				tr := newTrip(live, c.id, fmt.Sprintf("veh_new_%d_%d", page, j), c.start)
				tr.Status, tr.EndTime = store.TripCompleted, c.start.Add(time.Hour)
				mustCreateTrips(t, s, tr)
				if ahead := order(tr, cursor) > 0; ahead != c.ahead {
					t.Fatalf("test data: trip %s sorts after cursor %s: %v, want %v", tr.ID, cursor.ID, ahead, c.ahead)
				}
				inserted[tr.ID] = c.ahead
			}
		}
		seen := map[string]int{}
		var originals []string
		for i, tr := range visited {
			seen[tr.ID]++
			if _, ok := inserted[tr.ID]; !ok {
				originals = append(originals, tr.ID)
			}
			if i > 0 && order(visited[i-1], tr) >= 0 {
				t.Errorf("paging visited %s then %s, out of listing order", visited[i-1].ID, tr.ID)
			}
		}
		if want := listed(ts, key, desc); !slices.Equal(originals, want) {
			t.Errorf("paging while inserting visited the original trips\n%q\nwant each once, in order:\n%q", originals, want)
		}
		for id, ahead := range inserted {
			switch {
			case ahead && seen[id] != 1:
				t.Errorf("trip %s, inserted after the cursor, visited %d times; want once", id, seen[id])
			case !ahead && seen[id] != 0:
				t.Errorf("trip %s, inserted before the cursor, visited %d times; want never", id, seen[id])
			}
		}
	})

	t.Run("Summarize", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		byID := filtered(t, s)
		ninetyFive := 95.0
		for _, c := range []struct {
			f    store.TripFilter
			want []string
		}{
			{store.TripFilter{}, all},
			{store.TripFilter{VehicleID: "veh_1"}, []string{"t1", "t2", "t3"}},
			{store.TripFilter{DriverID: "drv_1", Statuses: []string{store.TripActive, store.TripPaused}}, []string{"t3", "t4"}},
			// Sort and paging do not narrow a summary.
			{store.TripFilter{Statuses: []string{store.TripCompleted}, Sort: "distance", Desc: true, Limit: 1,
				After: &store.Keyset{Value: 15, ID: "t9"}}, []string{"t1", "t2"}},
			{store.TripFilter{StartAfter: base.Add(90 * time.Minute), Before: &store.Keyset{Value: 0, ID: "t0"}}, []string{"t3", "t4", "t5", "t6"}},
			{store.TripFilter{VehicleID: "veh_9"}, nil},
			{store.TripFilter{WithPoints: true, ExcludeID: "t6", SafetyBelow: &ninetyFive}, []string{"t1", "t2", "t5"}},
		} {
			c.f.Scope = live
			got, err := s.SummarizeTrips(t.Context(), c.f)
			if err != nil {
				t.Fatalf("SummarizeTrips(%s): %v", describe(c.f), err)
			}
			if want := summaryOf(pick(byID, c.want...)); !sameSummary(got, want) {
				t.Errorf("SummarizeTrips(%s) = %+v, want %+v (trips %q)", describe(c.f), got, want, c.want)
			}
		}
		got, err := s.SummarizeTrips(t.Context(), store.TripFilter{Scope: store.Scope{Org: "org_c", Env: live.Env}})
		if err != nil || got != (store.TripSummary{}) {
			t.Errorf("SummarizeTrips of an empty scope = %+v, %v; want zeros", got, err)
		}
	})

	t.Run("ActiveTripStats", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		now := base.Add(6 * time.Hour)
		if total, orgs, avg, err := s.ActiveTripStats(t.Context(), store.Scope{}, now); err != nil || total != 0 || orgs != 0 || avg != 0 {
			t.Errorf("ActiveTripStats of an empty store = %d, %d, %v, %v; want zeros", total, orgs, avg, err)
		}
		trip := func(sc store.Scope, id, status string, age time.Duration) store.Trip {
			tr := newTrip(sc, id, "veh_"+id, now.Add(-age))
			tr.Status = status
			if status != store.TripActive && status != store.TripPaused {
				tr.EndTime = now.Add(-time.Minute)
			}
			return tr
		}
		a, b := store.Scope{Org: "org_a", Env: "live"}, store.Scope{Org: "org_b", Env: "live"}
		mustCreateTrips(t, s,
			trip(a, "t1", store.TripActive, 10*time.Minute),
			trip(store.Scope{Org: a.Org, Env: "test"}, "t2", store.TripPaused, 20*time.Minute),
			trip(b, "t3", store.TripActive, 30*time.Minute),
			trip(b, "t4", store.TripCompleted, 5*time.Hour),
			trip(store.Scope{Org: "org_c", Env: "live"}, "t5", store.TripCancelled, 2*time.Hour),
			trip(store.Scope{Org: "org_d", Env: "live"}, "t6", store.TripInterrupted, 3*time.Hour),
		)
		for _, c := range []struct {
			sc          store.Scope
			total, orgs int
			avg         float64
		}{
			{store.Scope{}, 3, 2, 20},
			{a, 1, 1, 10},
			{store.Scope{Org: a.Org, Env: "test"}, 1, 1, 20},
			{b, 1, 1, 30},
			{store.Scope{Org: "org_c", Env: "live"}, 0, 0, 0},
			{store.Scope{Org: "org_b", Env: "test"}, 0, 0, 0},
		} {
			total, orgs, avg, err := s.ActiveTripStats(t.Context(), c.sc, now)
			if err != nil {
				t.Fatalf("ActiveTripStats(%+v): %v", c.sc, err)
			}
			if total != c.total || orgs != c.orgs || !near(avg, c.avg) {
				t.Errorf("ActiveTripStats(%+v) = %d trips, %d orgs, %v min on average; want %d, %d, %v", c.sc, total, orgs, avg, c.total, c.orgs, c.avg)
			}
		}
	})
}
