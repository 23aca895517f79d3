package vrp

import (
	"math"
	"testing"
	"time"
)

// TestRecreateFillsARouteInUseBeforeOpeningOne: above granularFrom stops
// a stop is first offered to its nearest stops' routes. Here those are
// full, and a route far from them has room; the stop must go into that
// route (cheaper than a route of its own: 1,618 against 2,000) rather
// than open a route because its neighbours' routes could not take it.
func TestRecreateFillsARouteInUseBeforeOpeningOne(t *testing.T) {
	inf := math.Inf(1)
	p := &Problem{Planar: true}
	for range 20 {
		p.Vehicles = append(p.Vehicles, Vehicle{CapWeight: 100, CapVolume: inf, CapPackages: inf, ShiftEnd: inf, MaxMinutes: inf, MaxKm: inf})
	}
	stop := func(x, y float64) int32 {
		p.Stops = append(p.Stops, Stop{Lat: x, Lon: y, Weight: 10, Late: inf, Priority: 1})
		return int32(len(p.Stops) - 1)
	}
	// 16 full routes of 10 stops 1,000 east of the depot, one more stop
	// among them, and a route of 5 stops 500 north with room for 5 more.
	full := make([][]int32, 16)
	for k := range full {
		for i := range 10 {
			full[k] = append(full[k], stop(1000+float64(i), float64(k)))
		}
	}
	c := stop(1005, 8)
	var north []int32
	for i := range 5 {
		north = append(north, stop(float64(i), 500))
	}
	if len(p.Stops) <= granularFrom {
		t.Fatalf("%d stops: the granular pass needs more than %d", len(p.Stops), granularFrom)
	}
	tb := newTables(p)
	w := newWorker(tb, 0, 1, time.Now().Add(time.Hour))
	s := &solution{routes: append([]*route(nil), tb.empty...), where: make([]int32, tb.n)}
	for i := range s.where {
		s.where[i] = -1
	}
	for v, stops := range append(full, north) {
		s.routes[v] = tb.newRoute(int32(v), stops)
		for _, x := range stops {
			s.where[x] = int32(v)
		}
		s.used++
	}
	w.gen++
	w.recreate(s, []int32{c}, true)
	if s.where[c] != 16 || s.used != 17 || len(s.absent) != 0 {
		t.Fatalf("the stop went to vehicle %d (the route with room is 16), %d routes in use (17 before), %d absent", s.where[c], s.used, len(s.absent))
	}
}
