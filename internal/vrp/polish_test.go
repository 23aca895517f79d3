package vrp

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPolishKeepsFeasible: the local search never makes a plan dearer,
// keeps every route feasible by Eval with the stops it had, and keeps
// each route's figures equal to a route built from scratch, on random
// instances whose vehicles differ in shifts, ends and limits, and in
// every other round in their travel (Vehicle.Profile: vehicles alike but
// for it).
func TestPolishKeepsFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range seeds(100) {
		w, s := searchedPlan(rng, round, 20)
		tb, p := w.t, w.t.p
		ps := w.polish(s)
		if ps.cost > s.cost+tol {
			t.Fatalf("round %d: polish %v, was %v", round, ps.cost, s.cost)
		}
		if len(ps.absent) != len(s.absent) {
			t.Fatalf("round %d: %d absent, was %d", round, len(ps.absent), len(s.absent))
		}
		seen := map[int32]bool{}
		for v, r := range ps.routes {
			if len(r.stops) == 0 {
				continue
			}
			if ev := p.Eval(v, ints(r.stops)); !ev.OK {
				t.Fatalf("round %d vehicle %d: %v infeasible: %s", round, v, r.stops, ev.Why)
			}
			if want := tb.newRoute(int32(v), r.stops); math.Abs(want.cost-r.cost) > 1e-6 || math.Abs(want.km-r.km) > 1e-6 {
				t.Fatalf("round %d vehicle %d: cost %v km %v, want %v %v", round, v, r.cost, r.km, want.cost, want.km)
			}
			for _, c := range r.stops {
				if seen[c] || ps.where[c] != int32(v) {
					t.Fatalf("round %d: stop %d twice or misplaced", round, c)
				}
				seen[c] = true
			}
		}
		if len(seen)+len(ps.absent) != len(p.Stops) {
			t.Fatalf("round %d: %d served, %d absent, of %d", round, len(seen), len(ps.absent), len(p.Stops))
		}
	}
}

// searchedPlan makes a random problem of 40 stops and twice its vehicles
// (every other round with travel-time profiles, a random goal), and a
// worker's plan for it after ruins rounds of ruin and recreate.
func searchedPlan(rng *rand.Rand, round, ruins int) (*worker, *solution) {
	p := randomProblem(rng, 40)
	p.Vehicles = append(p.Vehicles, p.Vehicles...)
	if round%2 == 1 {
		p = profiled(rng, p, 3)
	}
	p.Goal = Goal(rng.IntN(3))
	w := newWorker(newTables(p), round, uint64(round), time.Now().Add(time.Hour))
	s := w.construct()
	w.gen++
	for range ruins {
		w.recreate(s, w.ruin(s), true)
	}
	w.total(s)
	return w, s
}
