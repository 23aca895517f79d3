package vrp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSwapStarSaves: every exchange SWAP* makes lowers the plan's price,
// trades exactly two stops between two routes, leaves both feasible by
// Eval and their figures equal to routes built from scratch; over random
// instances some exchanges are found.
func TestSwapStarSaves(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	swaps := 0
	for round := range seeds(60) {
		w, s := searchedPlan(rng, round, 5)
		tb, p := w.t, w.t.p
		s = w.fork(s)
		index := func(int32) {}
		for v1 := range s.routes {
			for v2 := v1 + 1; v2 < len(s.routes); v2++ {
				before, where := s.cost, append([]int32(nil), s.where...)
				if !w.swapStar(s, int32(v1), int32(v2), index) {
					continue
				}
				swaps++
				w.total(s)
				if s.cost >= before-tol {
					t.Fatalf("round %d: SWAP* of %d and %d: price %v, was %v", round, v1, v2, s.cost, before)
				}
				moved := 0
				for x := range where {
					if where[x] != s.where[x] {
						moved++
					}
				}
				if moved != 2 {
					t.Fatalf("round %d: SWAP* of %d and %d moved %d stops", round, v1, v2, moved)
				}
				for v, r := range s.routes {
					if len(r.stops) == 0 {
						continue
					}
					if ev := p.Eval(v, ints(r.stops)); !ev.OK {
						t.Fatalf("round %d vehicle %d: %v infeasible: %s", round, v, r.stops, ev.Why)
					}
					if want := tb.newRoute(int32(v), r.stops); math.Abs(want.cost-r.cost) > 1e-6 {
						t.Fatalf("round %d vehicle %d: cost %v, want %v", round, v, r.cost, want.cost)
					}
					for _, x := range r.stops {
						if s.where[x] != int32(v) {
							t.Fatalf("round %d: stop %d on vehicle %d, where says %d", round, x, v, s.where[x])
						}
					}
				}
			}
		}
	}
	if swaps == 0 {
		t.Fatal("no exchange found in any round")
	}
	t.Logf("%d exchanges", swaps)
}

// TestSwappedPlaces: swapped takes the stop at index k out and puts x
// before index gap, or in k's place when gap is k.
func TestSwappedPlaces(t *testing.T) {
	stops := []int32{10, 11, 12, 13}
	for _, c := range []struct {
		k, gap int
		want   []int32
	}{
		{1, 1, []int32{10, 99, 12, 13}},
		{1, 0, []int32{99, 10, 12, 13}},
		{1, 4, []int32{10, 12, 13, 99}},
		{3, 2, []int32{10, 11, 99, 12}},
		{0, 3, []int32{11, 12, 99, 13}},
	} {
		got := swapped(stops, c.k, 99, c.gap)
		if len(got) != len(c.want) {
			t.Fatalf("k %d gap %d: %v, want %v", c.k, c.gap, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("k %d gap %d: %v, want %v", c.k, c.gap, got, c.want)
			}
		}
	}
}
