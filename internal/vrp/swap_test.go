package vrp

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestSwapSaves: every swap the local search makes lowers the plan's
// price, trades exactly two stops between two routes and leaves both
// feasible by Eval; over random instances some swaps are found.
func TestSwapSaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	swaps := 0
	for round := 0; round < 60; round++ {
		p := randomProblem(rng, 40)
		p.Vehicles = append(p.Vehicles, p.Vehicles...)
		if round%2 == 1 {
			p = profiled(rng, p, 3)
		}
		p.Goal = Goal(rng.IntN(3))
		tb := newTables(p)
		w := newWorker(tb, round, uint64(round), time.Now().Add(time.Hour))
		s := w.construct()
		w.gen++
		for k := 0; k < 5; k++ {
			w.recreate(s, w.ruin(s), true)
		}
		w.total(s)
		s = w.fork(s)
		pos := make([]int32, tb.n)
		index := func(v int32) {
			for k, c := range s.routes[v].stops {
				pos[c] = int32(k)
			}
		}
		for v := range s.routes {
			index(int32(v))
		}
		for c := int32(0); c < int32(tb.n); c++ {
			if s.where[c] < 0 {
				continue
			}
			before, where := s.cost, append([]int32(nil), s.where...)
			if !w.swap(s, c, pos, index) {
				continue
			}
			swaps++
			w.total(s)
			if s.cost >= before-tol {
				t.Fatalf("round %d: swap of %d: price %v, was %v", round, c, s.cost, before)
			}
			moved := 0
			for x := range where {
				if where[x] != s.where[x] {
					moved++
				}
			}
			if moved != 2 {
				t.Fatalf("round %d: swap of %d moved %d stops", round, c, moved)
			}
			for v, r := range s.routes {
				if len(r.stops) == 0 {
					continue
				}
				if ev := p.Eval(v, ints(r.stops)); !ev.OK {
					t.Fatalf("round %d vehicle %d: %v infeasible: %s", round, v, r.stops, ev.Why)
				}
				for _, x := range r.stops {
					if s.where[x] != int32(v) {
						t.Fatalf("round %d: stop %d on vehicle %d, where says %d", round, x, v, s.where[x])
					}
				}
			}
		}
	}
	if swaps == 0 {
		t.Fatal("no swap found in any round")
	}
	t.Logf("%d swaps", swaps)
}
