package vrp

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRecombineKeepsFeasible: the set partitioning over the routes of two
// short searches never makes the better plan dearer, leaves no stop out
// that it served, never adds a route when routes are priced
// (MinimizeVehicles), serves every stop once, keeps every route feasible
// by Eval and priced as one built from scratch, and spends about its
// share of work; on some of the random problems it saves.
func TestRecombineKeepsFeasible(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	saved := 0
	rounds := seeds(60)
	for round := range rounds {
		// Short routes on a fleet mostly of one class, the other class
		// beside it.
		p := randomProblem(rng, 50)
		a, b := p.Vehicles[0], p.Vehicles[1]
		a.CapWeight = 30
		p.Vehicles = []Vehicle{a, a, a, a, a, a, a, a, b, b}
		if round%2 == 1 {
			p = profiled(rng, p, 3)
		}
		p.Goal = Goal(rng.IntN(3))
		p.MinimizeVehicles = round%3 == 0
		tb := newTables(p)
		var pools []*pool
		var best *solution
		for i := 0; i < 2; i++ {
			w := newWorker(tb, i, uint64(100*round+i), time.Now().Add(time.Hour))
			w.pool = newPool(tb.n, len(p.Vehicles))
			s := w.construct()
			s = w.anneal(s, budget{work: w.work + 300_000, iters: 1 << 30, until: time.Now().Add(time.Hour), fromWork: w.work}, true)
			w.record(s)
			pools = append(pools, w.pool)
			if best == nil || better(s, best) {
				best = s
			}
		}
		w := newWorker(tb, 2, uint64(round), time.Now().Add(time.Hour))
		r := w.recombine(best, merge(pools), w.work+200_000)
		if w.work > 200_000+int64(10*len(p.Stops)*len(p.Stops)) {
			t.Fatalf("round %d: recombine spent %d units", round, w.work)
		}
		if r.cost > best.cost+tol || len(r.absent) != len(best.absent) {
			t.Fatalf("round %d: recombined %v with %d absent, was %v with %d", round, r.cost, len(r.absent), best.cost, len(best.absent))
		}
		if r.cost < best.cost-tol {
			saved++
		}
		seen := map[int32]bool{}
		used := 0
		for v, rt := range r.routes {
			if len(rt.stops) == 0 {
				continue
			}
			used++
			if ev := p.Eval(v, ints(rt.stops)); !ev.OK {
				t.Fatalf("round %d vehicle %d: %v infeasible: %s", round, v, rt.stops, ev.Why)
			}
			if want := tb.newRoute(int32(v), rt.stops); math.Abs(want.cost-rt.cost) > 1e-6 || math.Abs(want.km-rt.km) > 1e-6 {
				t.Fatalf("round %d vehicle %d: cost %v km %v, want %v %v", round, v, rt.cost, rt.km, want.cost, want.km)
			}
			for _, c := range rt.stops {
				if seen[c] || r.where[c] != int32(v) {
					t.Fatalf("round %d: stop %d twice or misplaced", round, c)
				}
				seen[c] = true
			}
		}
		if used != r.used || len(seen)+len(r.absent) != len(p.Stops) {
			t.Fatalf("round %d: %d routes (counted %d), %d served, %d absent, of %d", round, used, r.used, len(seen), len(r.absent), len(p.Stops))
		}
		if p.MinimizeVehicles && r.used > best.used {
			t.Fatalf("round %d: %d routes, was %d", round, r.used, best.used)
		}
	}
	if saved == 0 && !raceOn { // 4 of 60 save: the rounds under the race detector may have none
		t.Fatalf("recombine saved on no plan of %d", rounds)
	}
	t.Logf("recombine saved on %d plans of %d", saved, rounds)
}
