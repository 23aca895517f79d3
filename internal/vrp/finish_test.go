package vrp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFinishKeepsFeasible: the final local search never makes a plan
// dearer nor adds a route, keeps every route feasible by Eval and each
// route's figures equal to a route built from scratch, and spends at most
// its share of the budget beyond one move; on the plans of the polish
// test (polished first, so that what it finds is beyond polish), it
// finds a saving on some.
func TestFinishKeepsFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	saved, rounds := 0, seeds(100)
	for round := range rounds {
		w, s := searchedPlan(rng, round, 20)
		tb, p := w.t, w.t.p
		s = w.polish(s)
		limit := budget{work: w.work + 2_000_000, fromWork: w.work}
		from := w.work
		fs := w.finish(s, limit)
		if fs.cost > s.cost+tol || fs.used > s.used || len(fs.absent) != len(s.absent) {
			t.Fatalf("round %d: finish %v with %d routes, was %v with %d", round, fs.cost, fs.used, s.cost, s.used)
		}
		if fs.cost < s.cost-tol {
			saved++
		}
		if spent := w.work - from; spent > int64(finishShare*2_000_000)+int64(10*len(p.Stops)*len(p.Stops)) {
			t.Fatalf("round %d: finish spent %d units", round, spent)
		}
		seen := map[int32]bool{}
		used := 0
		for v, r := range fs.routes {
			if len(r.stops) == 0 {
				continue
			}
			used++
			if ev := p.Eval(v, ints(r.stops)); !ev.OK {
				t.Fatalf("round %d vehicle %d: %v infeasible: %s", round, v, r.stops, ev.Why)
			}
			if want := tb.newRoute(int32(v), r.stops); math.Abs(want.cost-r.cost) > 1e-6 || math.Abs(want.km-r.km) > 1e-6 {
				t.Fatalf("round %d vehicle %d: cost %v km %v, want %v %v", round, v, r.cost, r.km, want.cost, want.km)
			}
			for _, c := range r.stops {
				if seen[c] || fs.where[c] != int32(v) {
					t.Fatalf("round %d: stop %d twice or misplaced", round, c)
				}
				seen[c] = true
			}
		}
		if used != fs.used || len(seen)+len(fs.absent) != len(p.Stops) {
			t.Fatalf("round %d: %d routes (counted %d), %d served, %d absent, of %d", round, used, fs.used, len(seen), len(fs.absent), len(p.Stops))
		}
	}
	if saved*10 < rounds {
		t.Fatalf("finish saved on %d plans of %d: too few to tell", saved, rounds)
	}
	t.Logf("finish saved on %d plans of %d", saved, rounds)
}
