package vrp

import (
	"math"
	"testing"
	"time"
)

// TestCrossServesWhatEitherParentServes: a parent that leaves a stop out
// crossed with one that serves it (either way round, with many streams)
// gives a child that serves every stop, on no more routes than the
// parents, each route feasible, or no child; it once looked forever for
// a free place for the stop the first parent left out.
func TestCrossServesWhatEitherParentServes(t *testing.T) {
	inf := math.Inf(1)
	p := &Problem{Planar: true, MinimizeVehicles: true}
	for range 4 {
		p.Vehicles = append(p.Vehicles, Vehicle{CapWeight: 40, CapVolume: inf, CapPackages: inf, ShiftEnd: inf, MaxMinutes: inf, MaxKm: inf})
	}
	for i := range 12 {
		a := 2 * math.Pi * float64(i) / 12
		p.Stops = append(p.Stops, Stop{Lat: 10 * math.Cos(a), Lon: 10 * math.Sin(a), Weight: 10, Late: inf, Priority: 1})
	}
	tb := newTables(p)
	plan := func(routes ...[]int32) *solution {
		s := &solution{routes: append([]*route(nil), tb.empty...), where: make([]int32, tb.n)}
		for i := range s.where {
			s.where[i] = -1
		}
		for v, stops := range routes {
			s.routes[v] = tb.newRoute(int32(v), stops)
			for _, x := range stops {
				s.where[x] = int32(v)
			}
			s.used++
		}
		for c := range s.where {
			if s.where[c] < 0 {
				s.absent = append(s.absent, int32(c))
			}
		}
		return s
	}
	a := plan([]int32{1, 2, 3}, []int32{4, 5, 6, 7}, []int32{8, 9, 10, 11})
	b := plan([]int32{0, 1, 2, 3}, []int32{4, 5, 6, 7}, []int32{8, 9, 10, 11})
	w := newWorker(tb, 0, 1, time.Now().Add(time.Hour))
	w.total(a)
	w.total(b)
	children := 0
	for seed := uint64(0); seed < 50; seed++ {
		w := newWorker(tb, 0, seed, time.Now().Add(time.Hour))
		for _, pair := range [][2]*solution{{a, b}, {b, a}} {
			c := w.cross(pair[0], pair[1])
			if c == nil {
				continue
			}
			children++
			if len(c.absent) != 0 || c.used > 3 {
				t.Fatalf("seed %d: the child leaves %d stops out on %d routes", seed, len(c.absent), c.used)
			}
			for _, r := range c.routes {
				if len(r.stops) > 0 && w.build(r.v, append([]int32(nil), r.stops...)) == nil {
					t.Fatalf("seed %d: route %v is not feasible", seed, r.stops)
				}
			}
		}
	}
	if children == 0 {
		t.Fatal("no child")
	}
}
