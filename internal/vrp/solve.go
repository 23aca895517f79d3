package vrp

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Options bound and seed a Solve.
type Options struct {
	// TimeLimit bounds the search in wall-clock time; 0 means 2 s.
	TimeLimit time.Duration
	// Seed picks the random streams: the same Problem, Options and Seed
	// give the same routes unless the deadline cuts the search short
	// (Solution.Cut).
	Seed uint64
	// Workers is how many searches run at once, each on its own stream;
	// the best plan wins. 0 means 2.
	Workers int
	// Work, when not 0, is each worker's budget in work units instead of
	// TimeLimit × WorkPerSecond: with a generous TimeLimit the plan then
	// depends on the Problem and the Seed alone, however busy the machine.
	Work int64
	// Alternatives is how many runner-up plans to return
	// (Solution.Alternatives); 0 keeps none.
	Alternatives int
	// inOrder keeps the matrices' own order of locations (no renumbering
	// for locality), so that the tests can compare plans with and without.
	inOrder bool
	// noBreed leaves out the crossover but not its share of the work, so
	// that the tests can compare plans with and without it.
	noBreed bool
}

// WorkPerSecond is how much search work a worker is given per second of
// TimeLimit (see the package documentation for the units): about 87 % of
// what one core of the project's machine did in a second when last
// measured (33 to 35 million units on Solomon's instances, 2026-11-29).
const WorkPerSecond = 30_000_000

// ItersPerStop bounds a worker's iterations by the number of stops, so
// that small problems end long before their time limit: Solomon's
// 100-customer instances took about 150,000 iterations per worker at
// 160 million units (2 s at 80 million units a second).
const ItersPerStop = 5000

// Solution is the solver's answer.
type Solution struct {
	// Routes holds, per vehicle in Problem order, its stops (indexes
	// into Problem.Stops) in visiting order; an idle vehicle has none.
	Routes [][]int
	// Unassigned maps each stop no vehicle could take to the constraint
	// that refused it.
	Unassigned map[int]Reason
	// InitialKm is the distance of the first plan, built by insertion
	// before the search, over every vehicle; Initial its routes, as
	// Routes.
	InitialKm float64
	Initial   [][]int
	// Cut reports that the deadline stopped a search before its work was
	// done; the plan is then the best found so far, and may differ from
	// one run to the next.
	Cut bool
	// Agreement is the share of the searches (Options.Workers, each with
	// its own seed) whose best plan costs within 0.1 % of the one kept,
	// counting it: 1 when every search found it again.
	Agreement float64
	// RouteAgreement is, per vehicle with stops, the share of the
	// searches whose best plan has a route of the same stops, in any
	// order and on any vehicle; 0 for an idle vehicle.
	RouteAgreement []float64
	// Alternatives are up to Options.Alternatives runner-up plans,
	// cheapest first: the cheapest distinct plans the searches met (their
	// best plans along the way, the annealing's candidates, the other
	// searches' best plans), each different from Routes.
	Alternatives []Alternative
}

// Solve plans the routes: cheapest insertion, then (with
// MinimizeVehicles) route minimisation, then ruin and recreate under
// simulated annealing, in Options.Workers searches at once; then a
// crossover of their best plans (crossover.go) and a set partitioning
// over the routes they all found (pool.go). It returns within about
// TimeLimit.
func (p *Problem) Solve(o Options) Solution {
	if o.TimeLimit <= 0 {
		o.TimeLimit = 2 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	start := time.Now()
	if len(p.Stops) == 0 || len(p.Vehicles) == 0 {
		sol := Solution{Routes: make([][]int, len(p.Vehicles)), Unassigned: map[int]Reason{}}
		for i := range p.Stops {
			sol.Unassigned[i] = ReasonCapacity
		}
		return sol
	}
	t := buildTables(p, !o.inOrder)
	deadline := start.Add(o.TimeLimit * 97 / 100)
	// The searches' phases end endShare of the time before the
	// deadline, so that their final local searches and the set
	// partitioning have the time of the work they may spend beyond the
	// budget when the clock, not the work, ends the searches.
	until := start.Add(time.Duration(float64(deadline.Sub(start)) * (1 - endShare)))
	limit := budget{work: int64(o.TimeLimit.Seconds() * WorkPerSecond), iters: ItersPerStop * len(p.Stops), until: until}
	if o.Work > 0 {
		limit.work = o.Work
	}
	// The crossover's share of the work and of the time, taken from the
	// searches.
	work := limit.work
	cross := crossBudget(t, work)
	// As the searches' (ItersPerStop), its iterations are bounded by the
	// problem's size, so that a small problem's breeding ends long before
	// its time limit.
	crossLimit := budget{work: cross, iters: ItersPerStop * len(p.Stops), until: until}
	crossFrom := crossUntil(start, until, cross, work)
	type result struct {
		first, best *solution
		cut         bool
		pool        *pool
		runners     *runners
		elites      *elites
		bred        bool // it left work to the crossover
	}
	res := make([]result, o.Workers)
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(t, i, splitmix(o.Seed+uint64(i)), deadline)
			if !t.extras {
				w.pool = newPool(t.n, len(p.Vehicles))
			}
			if cross > 0 {
				w.elites = &elites{}
				w.crossWork, w.crossFrom = cross, crossFrom
			}
			if o.Alternatives > 0 {
				w.runners = &runners{max: o.Alternatives + 1}
			}
			first, best := w.search(limit)
			res[i] = result{first, best, w.cut, w.pool, w.runners, w.elites, w.crossWork > 0}
		}()
	}
	wg.Wait()
	win := 0
	for i := range res {
		if better(res[i].best, res[win].best) {
			win = i
		}
	}
	best := res[win].best
	cut := false
	var bred []*pool
	streams := 0
	for _, r := range res {
		if r.bred {
			streams++
		}
	}
	if streams > 0 && !o.noBreed {
		// As many streams breed as searches left work to it.
		var all []*elites
		for _, r := range res {
			all = append(all, r.elites)
		}
		b, pools, bredCut := t.breedAll(all, streams, o.Seed, deadline, crossLimit)
		if b != nil && better(b, best) {
			best = b
		}
		bred, cut = pools, bredCut
	}
	if res[win].pool != nil {
		// The set partitioning over every search's routes, and the
		// final local search again on a plan it changed.
		pools := make([]*pool, len(res))
		for i := range res {
			pools[i] = res[i].pool
		}
		pools = append(pools, bred...)
		w := newWorker(t, len(res), splitmix(o.Seed+uint64(len(res))), deadline)
		if r := w.recombine(best, merge(pools), int64(recombineShare*float64(work))); better(r, best) {
			best = w.finish(r, budget{work: w.work + work, fromWork: w.work, until: deadline})
		}
		cut = cut || w.cut
	}
	sol := Solution{Routes: make([][]int, len(p.Vehicles)), Unassigned: map[int]Reason{}}
	for v, r := range best.routes {
		for _, c := range r.stops {
			sol.Routes[v] = append(sol.Routes[v], int(c))
		}
	}
	for _, c := range best.absent {
		sol.Unassigned[int(c)] = t.reason(best, c)
	}
	sol.Initial = make([][]int, len(p.Vehicles))
	for v, r := range res[0].first.routes {
		sol.InitialKm += r.km
		for _, c := range r.stops {
			sol.Initial[v] = append(sol.Initial[v], int(c))
		}
	}
	sol.Cut = cut
	for _, r := range res {
		sol.Cut = sol.Cut || r.cut
	}
	bests := make([]*solution, len(res))
	for i := range res {
		bests[i] = res[i].best
	}
	sol.Agreement, sol.RouteAgreement = agreement(best, bests)
	if o.Alternatives > 0 {
		lists := make([]*runners, len(res))
		for i := range res {
			lists[i] = res[i].runners
		}
		sol.Alternatives = t.runnersUp(best, lists, bests, o.Alternatives)
	}
	return sol
}

// endShare is the share of a Solve's time kept for the steps after the
// searches' phases: the final local search (finishShare of the work
// beyond the budget) and the set partitioning (recombineShare).
const endShare = finishShare + recombineShare

// agreement is how often the searches' best plans found best again: the
// share within 0.1 % of its cost, and per route of best the share that
// hold a route of the same stops, in any order.
func agreement(best *solution, all []*solution) (float64, []float64) {
	near := 0
	seqs := make([]map[string]bool, len(all))
	for i, s := range all {
		if math.Abs(s.cost-best.cost) <= 0.001*math.Abs(best.cost)+tol {
			near++
		}
		seqs[i] = map[string]bool{}
		for _, r := range s.routes {
			if len(r.stops) > 0 {
				seqs[i][set(r.stops)] = true
			}
		}
	}
	per := make([]float64, len(best.routes))
	for v, r := range best.routes {
		if len(r.stops) == 0 {
			continue
		}
		key, n := set(r.stops), 0
		for _, m := range seqs {
			if m[key] {
				n++
			}
		}
		per[v] = float64(n) / float64(len(all))
	}
	return float64(near) / float64(len(all)), per
}

// better orders solutions by cost, which holds the penalties of absent
// stops and the vehicle costs.
func better(a, b *solution) bool { return a.cost < b.cost-tol }

// splitmix spreads a seed over 64 bits.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// reason names the constraint that keeps stop c out of s: the one that
// refuses it on a route of its own when no vehicle could take it alone,
// otherwise the one that refused most of its insertions into s. check
// calls an insertion that makes a later position late a window; here
// that is the constraint that sets the later position's latest start
// (limits): a window, a break, the shift's end or the route's limits.
func (t *tables) reason(s *solution, c int32) Reason {
	if ok, why := t.p.Servable(int(c)); !ok {
		return why
	}
	count := map[Reason]int{}
	for _, r := range s.routes {
		if t.needs[c]&^t.has[r.v] != 0 {
			continue
		}
		if !t.fits(r, c) {
			count[ReasonCapacity]++
			continue
		}
		var lim []Reason
		tr := t.of(r.v)
		for i := 0; i <= len(r.stops); i++ {
			_, why := t.check(r, c, i)
			if why == ReasonTimeWindow && t.depart(r, i)+tr.minutes[t.arc(t.node(r, i), c)] <= t.late[c]+tol {
				if lim == nil {
					lim = t.limits(r)
				}
				why = lim[i+1]
			}
			if why != "" {
				count[why]++
			}
		}
	}
	best, n := ReasonCapacity, 0
	for _, why := range []Reason{ReasonCapacity, ReasonTimeWindow, ReasonShiftEnd, ReasonRouteLimits, ReasonBreak} {
		if count[why] > n {
			best, n = why, count[why]
		}
	}
	return best
}

// limits names, per position of r, the constraint that sets its latest
// start (route.z): its own window, a later position's, a break's, or
// the return, by the shift's end or by MaxMinutes, whichever comes
// first. It follows the backward pass that sets z.
func (t *tables) limits(r *route) []Reason {
	m := len(r.stops)
	ve := &t.p.Vehicles[r.v]
	why := make([]Reason, m+2)
	why[m+1] = ReasonShiftEnd
	if ve.ShiftStart+ve.MaxMinutes < ve.ShiftEnd {
		why[m+1] = ReasonRouteLimits
	}
	tr := t.of(r.v)
	z, next := t.zEnd[r.v], t.end[r.v]
	for i := m; i >= 0; i-- {
		cur := t.node(r, i)
		leave, w := z-tr.minutes[t.arc(cur, next)], why[i+1]
		for k := len(r.brk) - 1; k >= 0; k-- {
			if int(r.brk[k]) != i {
				continue
			}
			b := &t.brks[r.v][k]
			if b.End < leave {
				leave, w = b.End, ReasonBreak
			}
			leave -= b.Minutes
			if b.Start > leave+tol {
				leave, w = math.Inf(-1), ReasonBreak
			}
		}
		z = leave - t.service[cur]
		if t.late[cur] < z {
			z, w = t.late[cur], ReasonTimeWindow
		}
		why[i], next = w, cur
	}
	return why
}

// set is a key of stops whatever their order.
func set(stops []int32) string {
	s := slices.Clone(stops)
	slices.Sort(s)
	return fmt.Sprint(s)
}
