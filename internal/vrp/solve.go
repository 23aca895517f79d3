package vrp

import (
	"math"
	"sort"
	"time"
)

// Solution is the solver's answer.
type Solution struct {
	// Routes holds, per vehicle in Problem order, its stops (indexes
	// into Problem.Stops) in visiting order; an idle vehicle has none.
	Routes [][]int
	// Unassigned maps each stop no vehicle could take to the constraint
	// that refused it last.
	Unassigned map[int]Reason
	// InitialKm is the distance of the first feasible plan, before the
	// local search, over every vehicle.
	InitialKm float64
}

// Solve plans the routes: cheapest feasible insertion in priority and
// deadline order, then 2-opt and relocate moves until none improves or
// budget has passed. The insertion phase always runs to its end; budget
// bounds only the improvement phase, checked between moves.
func (p *Problem) Solve(budget time.Duration) Solution {
	routes := make([][]int, len(p.Vehicles))
	evals := make([]Schedule, len(p.Vehicles))
	for i := range p.Vehicles {
		evals[i] = p.eval(&p.Vehicles[i], nil)
	}
	unassigned := p.insert(routes, evals)
	before := 0.0
	for _, e := range evals {
		before += e.Km
	}
	deadline := time.Now().Add(budget)
	for improved := true; improved && time.Now().Before(deadline); {
		a := p.twoOpt(routes, evals, deadline)
		b := p.relocate(routes, evals, deadline)
		improved = a || b
	}
	return Solution{Routes: routes, Unassigned: unassigned, InitialKm: before}
}

// insert places every stop, most urgent first, at its cheapest feasible
// position in any route; routes and evals are updated in place.
func (p *Problem) insert(routes [][]int, evals []Schedule) map[int]Reason {
	order := make([]int, len(p.Stops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := p.Stops[order[a]], p.Stops[order[b]]
		if sa.Priority != sb.Priority {
			return sa.Priority > sb.Priority
		}
		return sa.Late < sb.Late
	})
	unassigned := map[int]Reason{}
	for _, si := range order {
		bestV, bestPos, bestDelta := -1, -1, math.Inf(1)
		why := ReasonCapacity
		for vi := range p.Vehicles {
			r := routes[vi]
			for pos := 0; pos <= len(r); pos++ {
				cand := make([]int, 0, len(r)+1)
				cand = append(append(append(cand, r[:pos]...), si), r[pos:]...)
				ev := p.eval(&p.Vehicles[vi], cand)
				if !ev.OK {
					why = ev.Why
					continue
				}
				if d := objective(ev) - objective(evals[vi]); d < bestDelta {
					bestV, bestPos, bestDelta = vi, pos, d
				}
			}
		}
		if bestV < 0 {
			unassigned[si] = why
			continue
		}
		r := routes[bestV]
		routes[bestV] = append(append(append([]int{}, r[:bestPos]...), si), r[bestPos:]...)
		evals[bestV] = p.eval(&p.Vehicles[bestV], routes[bestV])
	}
	return unassigned
}

// twoOpt reverses segments inside each route while that helps.
func (p *Problem) twoOpt(routes [][]int, evals []Schedule, deadline time.Time) bool {
	improved := false
	for vi, r := range routes {
		for i := 0; i < len(r)-1 && time.Now().Before(deadline); i++ {
			for j := i + 1; j < len(r); j++ {
				cand := append([]int{}, r...)
				for a, b := i, j; a < b; a, b = a+1, b-1 {
					cand[a], cand[b] = cand[b], cand[a]
				}
				if ev := p.eval(&p.Vehicles[vi], cand); ev.OK && objective(ev) < objective(evals[vi])-1e-9 {
					routes[vi], evals[vi], r, improved = cand, ev, cand, true
				}
			}
		}
	}
	return improved
}

// relocate moves single stops to a better position, in the same route or
// another, taking the first move that helps for each stop.
func (p *Problem) relocate(routes [][]int, evals []Schedule, deadline time.Time) bool {
	improved := false
	for va := range routes {
		for i := 0; i < len(routes[va]) && time.Now().Before(deadline); i++ {
			if p.relocateOne(routes, evals, va, i) {
				improved = true
			}
		}
	}
	return improved
}

// relocateOne tries the stop at position i of route va everywhere else and
// applies the first move that lowers the objective.
func (p *Problem) relocateOne(routes [][]int, evals []Schedule, va, i int) bool {
	si := routes[va][i]
	rest := append(append([]int{}, routes[va][:i]...), routes[va][i+1:]...)
	evRest := p.eval(&p.Vehicles[va], rest)
	if !evRest.OK {
		return false
	}
	gain := objective(evals[va]) - objective(evRest)
	for vb := range routes {
		base := routes[vb]
		baseEv := evals[vb]
		if vb == va {
			base, baseEv = rest, evRest
		}
		for pos := 0; pos <= len(base); pos++ {
			cand := append(append(append([]int{}, base[:pos]...), si), base[pos:]...)
			ev := p.eval(&p.Vehicles[vb], cand)
			if !ev.OK {
				continue
			}
			if add := objective(ev) - objective(baseEv); add < gain-1e-9 {
				if vb == va {
					routes[va], evals[va] = cand, ev
				} else {
					routes[va], evals[va] = rest, evRest
					routes[vb], evals[vb] = cand, ev
				}
				return true
			}
		}
	}
	return false
}
