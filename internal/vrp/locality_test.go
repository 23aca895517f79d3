package vrp

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// largeProblem is a random problem of n stops whose locations are
// numbered in no spatial order, its vehicles on two matrices of their
// own (profiled), so that the tables renumber them.
func largeProblem(seed uint64, n int) *Problem {
	rng := rand.New(rand.NewPCG(seed, 11))
	p := randomProblem(rng, n)
	for i := range p.Stops {
		p.Stops[i].Weight = float64(1 + rng.IntN(3))
	}
	return profiled(rng, p, 2)
}

// TestRenumberKeepsEveryArc: renumbering the locations of a large
// problem moves its matrices' rows and columns but every arc between two
// nodes keeps its kilometres, minutes and price (and the price's
// transposed copy), in every travel; and near stops end up with near
// locations, where the request's own numbering put them anywhere.
func TestRenumberKeepsEveryArc(t *testing.T) {
	for _, goal := range []Goal{GoalDistance, GoalTime, GoalCost} {
		p := largeProblem(uint64(goal)+1, 2*localityFrom)
		p.Goal = goal
		a, b := buildTables(p, true), buildTables(p, false)
		if a.size < localityFrom {
			t.Fatalf("matrix of %d locations: below localityFrom (%d), nothing to test", a.size, localityFrom)
		}
		if slices.Equal(a.loc, b.loc) {
			t.Fatalf("goal %v: the locations were not renumbered", goal)
		}
		nodes := int32(len(a.loc))
		for k := range a.tr {
			ta, tb := &a.tr[k], &b.tr[k]
			if (ta.cost == nil) != (tb.cost == nil) {
				t.Fatalf("goal %v, travel %d: priced in one table only", goal, k)
			}
			for x := int32(0); x < nodes; x++ {
				for y := int32(0); y < nodes; y++ {
					ka, kb := a.arc(x, y), b.arc(x, y)
					if ta.km[ka] != tb.km[kb] || ta.minutes[ka] != tb.minutes[kb] {
						t.Fatalf("goal %v, travel %d, arc %d→%d: km %v min %v renumbered, km %v min %v in order",
							goal, k, x, y, ta.km[ka], ta.minutes[ka], tb.km[kb], tb.minutes[kb])
					}
					if ta.cost == nil {
						continue
					}
					if ta.cost[ka] != tb.cost[kb] || ta.into[a.arc(y, x)] != tb.into[b.arc(y, x)] {
						t.Fatalf("goal %v, travel %d, arc %d→%d: prices differ", goal, k, x, y)
					}
				}
			}
		}
		// Each stop's nearest stop: how far apart their locations'
		// numbers are, on average.
		spread := func(tb *tables) float64 {
			sum := 0
			for c := 0; c < tb.n; c++ {
				d := int(tb.loc[c]) - int(tb.loc[tb.adj[c][1]])
				sum += max(d, -d)
			}
			return float64(sum) / float64(tb.n)
		}
		if sa, sb := spread(a), spread(b); sa > sb/10 {
			t.Errorf("goal %v: a stop's nearest stop lies %.1f locations away renumbered, %.1f in order: not a tenth", goal, sa, sb)
		}
	}
}

// TestRenumberSamePlan: the search on renumbered matrices (400 stops)
// makes the same choices as on the request's order, so the plans are the
// same.
func TestRenumberSamePlan(t *testing.T) {
	for seed := uint64(1); seed <= uint64(seeds(2)); seed++ {
		p := largeProblem(seed, 2*localityFrom)
		for len(p.Vehicles) < 24 {
			p.Vehicles = append(p.Vehicles, p.Vehicles[:2]...)
		}
		o := Options{TimeLimit: time.Minute, Work: 2_000_000, Seed: seed}
		got := p.Solve(o)
		o.inOrder = true
		want := p.Solve(o)
		if got.Cut || want.Cut {
			t.Fatalf("seed %d: cut by the clock; the plans need not agree", seed)
		}
		if !slices.EqualFunc(got.Routes, want.Routes, slices.Equal) || len(got.Unassigned) != len(want.Unassigned) {
			t.Errorf("seed %d: renumbered %v (%d left out), in order %v (%d left out)", seed, got.Routes, len(got.Unassigned), want.Routes, len(want.Unassigned))
		}
		served := 0
		for _, r := range got.Routes {
			served += len(r)
		}
		if served == 0 {
			t.Errorf("seed %d: nothing served; the comparison says nothing", seed)
		}
	}
}
