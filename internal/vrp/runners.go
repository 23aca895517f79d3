package vrp

import (
	"slices"
	"sort"
)

// Alternative is a runner-up plan: one of the cheapest plans the
// searches met (their best plans along the way, the annealing's
// candidates, the other searches' best plans), different from the plan
// kept.
type Alternative struct {
	// Routes holds, per vehicle in Problem order, its stops in visiting
	// order, as Solution.Routes.
	Routes [][]int
	// Unassigned counts the stops it leaves out.
	Unassigned int
	// Cost is what the search minimises (travel priced by the goals,
	// the vehicles used with MinimizeVehicles, left-out stops), in the
	// solver's units: only differences between plans mean something.
	Cost float64
}

// runners keeps a worker's cheapest distinct plans, up to max.
type runners struct {
	max   int
	plans []runner
}

type runner struct {
	key  uint64
	cost float64
	alt  Alternative
}

// runner notes s as a candidate runner-up plan when the worker keeps
// them. It counts no work and draws no random numbers, so the search
// plans what it plans without it.
func (w *worker) runner(s *solution) {
	rs := w.runners
	if rs == nil || rs.max == 0 {
		return
	}
	if len(rs.plans) == rs.max && s.cost >= rs.plans[len(rs.plans)-1].cost {
		return
	}
	key := w.t.planKey(s)
	for _, p := range rs.plans {
		if p.key == key {
			return
		}
	}
	rs.plans = append(rs.plans, runner{key: key, cost: s.cost, alt: snapshot(s)})
	sort.SliceStable(rs.plans, func(i, j int) bool { return rs.plans[i].cost < rs.plans[j].cost })
	if len(rs.plans) > rs.max {
		rs.plans = rs.plans[:rs.max]
	}
}

// planKey identifies a plan by its routes, each the stops in order and
// its vehicle's class: the same routes on other vehicles of the same
// classes are the same plan.
func (t *tables) planKey(s *solution) uint64 {
	var key uint64
	for _, r := range s.routes {
		if len(r.stops) == 0 {
			continue
		}
		h := uint64(14695981039346656037)
		mix := func(x uint64) {
			h ^= x
			h *= 1099511628211
		}
		mix(uint64(t.class[r.v]) + 1<<40)
		for _, c := range r.stops {
			mix(uint64(c))
		}
		key += h ^ h>>29
	}
	return key
}

func snapshot(s *solution) Alternative {
	a := Alternative{Routes: make([][]int, len(s.routes)), Unassigned: len(s.absent), Cost: s.cost}
	for v, r := range s.routes {
		for _, c := range r.stops {
			a.Routes[v] = append(a.Routes[v], int(c))
		}
	}
	return a
}

// runnersUp merges the workers' runner-up plans and their best plans,
// leaves out the plan kept, and returns the n cheapest, cheapest first.
func (t *tables) runnersUp(kept *solution, lists []*runners, bests []*solution, n int) []Alternative {
	if n <= 0 {
		return nil
	}
	all := runners{max: n + 1}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, p := range l.plans {
			all.add(p)
		}
	}
	for _, b := range bests {
		all.add(runner{key: t.planKey(b), cost: b.cost, alt: snapshot(b)})
	}
	kk := t.planKey(kept)
	out := make([]Alternative, 0, n)
	for _, p := range all.plans {
		if p.key != kk && len(out) < n {
			t.align(kept, &p.alt)
			out = append(out, p.alt)
		}
	}
	return out
}

// align moves a's routes between vehicles of the same class (alike in
// every attribute, so the plan is the same) so that a route a shares
// with kept is on kept's vehicle, and the others stay on their own
// vehicle where it is free: the vehicles whose routes differ are then
// the ones the plans really differ on.
func (t *tables) align(kept *solution, a *Alternative) {
	nv := len(a.Routes)
	out := make([][]int, nv)
	taken := make([]bool, nv) // out[v] is set
	moved := make([]bool, nv) // a.Routes[u] is placed
	same := func(r []int, stops []int32) bool {
		if len(r) != len(stops) {
			return false
		}
		for i, c := range stops {
			if r[i] != int(c) {
				return false
			}
		}
		return true
	}
	for v, r := range kept.routes {
		if len(r.stops) == 0 {
			continue
		}
		for u, ar := range a.Routes {
			if !moved[u] && t.class[u] == t.class[v] && same(ar, r.stops) {
				out[v], taken[v], moved[u] = ar, true, true
				break
			}
		}
	}
	for u, ar := range a.Routes {
		if !moved[u] && len(ar) > 0 && !taken[u] {
			out[u], taken[u], moved[u] = ar, true, true
		}
	}
	for u, ar := range a.Routes {
		if moved[u] || len(ar) == 0 {
			continue
		}
		for w := range out {
			if !taken[w] && t.class[w] == t.class[u] {
				out[w], taken[w], moved[u] = ar, true, true
				break
			}
		}
		if !moved[u] {
			return // no free vehicle of its class (never: a has as many): leave a as it is
		}
	}
	a.Routes = out
}

func (rs *runners) add(p runner) {
	if slices.ContainsFunc(rs.plans, func(q runner) bool { return q.key == p.key }) {
		return
	}
	rs.plans = append(rs.plans, p)
	sort.SliceStable(rs.plans, func(i, j int) bool { return rs.plans[i].cost < rs.plans[j].cost })
	if len(rs.plans) > rs.max {
		rs.plans = rs.plans[:rs.max]
	}
}
