package vrp

import (
	"math"
	"slices"
	"sync"
	"time"
)

// The crossover of whole plans (HGS, Vidal et al. 2012): after the
// searches, a small population of their best plans breeds children by an
// ordered crossover of giant tours (OX) and a split of the child's tour
// into routes; a child is repaired by insertion, polished by the local
// search, offered to the set partitioning's pool, and replaces the
// dearest plan of the population when it is cheaper and not already in
// it. The searches' annealings give crossShare of the searches' work to
// it (route minimisation keeps its share), so the work of a Solve is the
// same; as many streams breed at once as searches gave work to it. Plans
// of long routes (longRoute stops a route or more on average after route
// minimisation: Solomon's C2, R2 and RC2) breed too since 2026-12-02: at
// the work a 2 s request gets on the project's machine (80 million units
// a search), over seeds 0 to 5, with both searches annealing twice
// (minRestart), R2's and RC2's mean gap fell from +1.57 % to +1.33 %;
// at 170 million units a search, over seeds 0 to 2, breeding had lowered
// R2's (+0.89 to +0.61 %) and raised RC2's (+0.70 to +1.73 %).
const (
	// crossShare is the share of each search's work spent breeding
	// instead; crossMin the least work that makes breeding worth its
	// share (below it the searches keep their whole budget).
	crossShare = 0.1
	crossMin   = 5_000_000
	// crossPop is the most plans of the population; crossElite the most
	// distinct plans each search offers it (its best plans at its kicks
	// and its best one).
	crossPop   = 8
	crossElite = 4
	// crossRepair is the most ruin and recreate iterations spent on
	// bringing back the stops a child's split and insertion leave out.
	crossRepair = 50
)

// crossable reports whether the plans of t can be bred: a fleet of one
// class of vehicle without breaks, priced by its arcs alone, so that any
// split of a tour into routes can go on any vehicles.
func (t *tables) crossable() bool {
	return !t.extras && t.classes == 1 && len(t.brks[0]) == 0
}

// elite notes s among w's distinct cheapest plans, up to crossElite, when
// it keeps them. It counts no work and draws no random numbers.
func (w *worker) elite(s *solution) {
	if w.elites == nil || s.used == 0 {
		return
	}
	key := w.t.planKey(s)
	for _, e := range w.elites.plans {
		if e.key == key {
			return
		}
	}
	w.elites.plans = append(w.elites.plans, elite{key, s})
	slices.SortStableFunc(w.elites.plans, func(a, b elite) int { return cmpCost(a.s, b.s) })
	if len(w.elites.plans) > crossElite {
		w.elites.plans = w.elites.plans[:crossElite]
	}
}

// elites is a search's distinct cheapest plans.
type elites struct{ plans []elite }

type elite struct {
	key uint64
	s   *solution
}

func cmpCost(a, b *solution) int {
	switch {
	case a.cost < b.cost:
		return -1
	case a.cost > b.cost:
		return 1
	}
	return 0
}

// breed runs the crossover on the population pop (distinct plans, each
// serving every stop it can) until w has spent limit: each child from two
// plans drawn at random. It returns the cheapest plan met; the routes of
// the children go into w's pool.
func (w *worker) breed(pop []elite, limit budget) *solution {
	pop = slices.Clone(pop)
	best := pop[0].s
	for _, e := range pop {
		if better(e.s, best) {
			best = e.s
		}
	}
	if len(pop) < 2 {
		return best
	}
	for !w.out(&limit) {
		i := w.rng.IntN(len(pop))
		j := w.rng.IntN(len(pop) - 1)
		if j >= i {
			j++
		}
		child := w.cross(pop[i].s, pop[j].s)
		if child == nil {
			continue
		}
		child = w.polish(child)
		w.record(child)
		if better(child, best) {
			best = child
		}
		key := w.t.planKey(child)
		worst := 0
		dup := false
		for k, e := range pop {
			if e.key == key {
				dup = true
			}
			if e.s.cost > pop[worst].s.cost {
				worst = k
			}
		}
		if dup {
			continue
		}
		if len(pop) < crossPop {
			pop = append(pop, elite{key, child})
		} else if child.cost < pop[worst].s.cost-tol {
			pop[worst] = elite{key, child}
		}
	}
	return best
}

// tour is s's giant tour: its routes' stops one after the other, the
// routes in a random order.
func (w *worker) tour(s *solution) []int32 {
	var vs []int
	for v, r := range s.routes {
		if len(r.stops) > 0 {
			vs = append(vs, v)
		}
	}
	w.rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	out := make([]int32, 0, w.t.n)
	for _, v := range vs {
		out = append(out, s.routes[v].stops...)
	}
	return out
}

// cross is a child of a and b: a's giant tour from a random position to
// another kept in place, the other positions filled with b's stops in b's
// order from after that stretch on (OX), split into routes (split), the
// stops left out inserted again and, if some still find no place, up to
// crossRepair ruins around them; nil when some stop a and b both serve is
// still left out.
func (w *worker) cross(a, b *solution) *solution {
	t := w.t
	ta, tb := w.tour(a), w.tour(b)
	n := len(ta)
	if n < 2 {
		return nil
	}
	w.work += int64(2 * (n + len(tb)))
	from, to := w.rng.IntN(n), w.rng.IntN(n)
	in := make([]bool, t.n)
	child := make([]int32, n)
	placed := make([]bool, n)
	for k := from; ; k = (k + 1) % n {
		child[k], placed[k] = ta[k], true
		in[ta[k]] = true
		if k == to {
			break
		}
	}
	k := (to + 1) % n
	start := 0
	for start < len(tb) && tb[start] != ta[to] {
		start++
	}
	// Stops b serves and a does not, once a's positions are full, go
	// at the end.
	var more []int32
	free := n
	for k := range placed {
		if placed[k] {
			free--
		}
	}
	for d := 1; d <= len(tb); d++ {
		c := tb[(start+d)%len(tb)]
		if in[c] {
			continue
		}
		in[c] = true
		if free == 0 {
			more = append(more, c)
			continue
		}
		for placed[k] {
			k = (k + 1) % n
		}
		child[k], placed[k] = c, true
		free--
	}
	// Positions left empty (a stop a serves and b does not) are dropped.
	giant := make([]int32, 0, n+len(more))
	for k, c := range child {
		if placed[k] {
			giant = append(giant, c)
		}
	}
	giant = append(giant, more...)
	fleet := min(a.used, b.used)
	if !t.p.MinimizeVehicles {
		fleet = max(a.used, b.used)
	}
	s := w.split(giant, min(fleet, len(t.p.Vehicles)))
	want := min(len(a.absent), len(b.absent))
	w.gen++
	w.recreate(s, nil, !t.p.MinimizeVehicles)
	w.total(s)
	for try := 0; try < crossRepair && len(s.absent) > want; try++ {
		cand := w.fork(s)
		w.recreate(cand, w.ruinNear(cand, cand.absent[w.rng.IntN(len(cand.absent))]), !t.p.MinimizeVehicles)
		w.total(cand)
		if len(cand.absent) < len(s.absent) || len(cand.absent) == len(s.absent) && cand.cost < s.cost {
			s = cand
		}
	}
	if len(s.absent) > want {
		return nil
	}
	return s
}

// split cuts the giant tour into at most fleet routes on the first
// vehicles (all of one class), each route a run of consecutive stops of
// the tour, so that the routes' arcs plus a price for each stop left
// out (twice its price from the depot) are least (a shortest path over the
// tour's positions and the routes used; Prins 2004, with Vidal's
// limited fleet). A stop is left out only where the runs that serve it
// break a window, the capacity or the route's limits.
func (w *worker) split(giant []int32, fleet int) *solution {
	t := w.t
	n := len(giant)
	tr := t.of(0)
	ve := &t.p.Vehicles[0]
	s0, e0 := t.start[0], t.end[0]
	room, zEnd, maxKm := t.room[0], t.zEnd[0], t.maxKm[0]
	inf := math.Inf(1)
	// cost[k*(n+1)+j]: the least price of the tour's first j stops with k
	// routes; pred the start of the last route (or -1: stop j-1 left out).
	cost := make([]float64, (fleet+1)*(n+1))
	pred := make([]int32, (fleet+1)*(n+1))
	for i := range cost {
		cost[i] = inf
	}
	cost[0] = 0
	at := func(k, j int) int { return k*(n+1) + j }
	for i := 0; i < n; i++ {
		skip := 2 * t.fromDepot[giant[i]]
		for k := 0; k <= fleet; k++ {
			if c := cost[at(k, i)] + skip; c < cost[at(k, i+1)] {
				cost[at(k, i+1)], pred[at(k, i+1)] = c, -1
			}
		}
		// The routes from position i: extended while every stop is on
		// time and the loads fit.
		now, prev := ve.ShiftStart, s0
		var load [3]float64
		price, km := 0.0, 0.0
		for j := i; j < n; j++ {
			c := giant[j]
			w.work++
			k := t.arc(prev, c)
			arrive := now + t.service[prev] + tr.minutes[k]
			if arrive > t.late[c]+tol {
				break
			}
			now = fmax(arrive, t.early[c])
			d := t.demand[c]
			load[0], load[1], load[2] = load[0]+d[0], load[1]+d[1], load[2]+d[2]
			if load[0] > room[0]+tol || load[1] > room[1]+tol || load[2] > room[2]+tol {
				break
			}
			price += tr.price(k)
			km += tr.km[k]
			prev = c
			back := t.arc(c, e0)
			if now+t.service[c]+tr.minutes[back] > zEnd+tol || km+tr.km[back] > maxKm+tol {
				continue
			}
			// The fleet is bounded, so a route's own price is left
			// out: with MinimizeVehicles it would outweigh every stop.
			route := price + tr.price(back)
			for r := 0; r < fleet; r++ {
				if c := cost[at(r, i)] + route; c < cost[at(r+1, j+1)] {
					cost[at(r+1, j+1)], pred[at(r+1, j+1)] = c, int32(i)
				}
			}
			w.work += int64(fleet)
		}
	}
	bestK := 0
	for k := 1; k <= fleet; k++ {
		if cost[at(k, n)] < cost[at(bestK, n)] {
			bestK = k
		}
	}
	s := &solution{routes: append([]*route(nil), t.empty...), where: make([]int32, t.n)}
	for i := range s.where {
		s.where[i] = -1
	}
	inTour := make([]bool, t.n)
	for _, c := range giant {
		inTour[c] = true
	}
	for c := range inTour {
		if !inTour[c] {
			s.absent = append(s.absent, int32(c))
		}
	}
	v := int32(0)
	for j, k := n, bestK; j > 0; {
		i := pred[at(k, j)]
		if i < 0 {
			s.absent = append(s.absent, giant[j-1])
			j--
			continue
		}
		stops := slices.Clone(giant[i:j])
		w.work += int64(len(stops))
		if r := w.build(v, stops); r != nil {
			w.setHere(s, v, r)
			s.used++
			v++
		} else {
			s.absent = append(s.absent, stops...)
		}
		j, k = int(i), k-1
	}
	return s
}

// crossBudget is the work of each of the crossover's streams for a Solve
// whose searches each have work units: 0 when the problem's plans cannot
// be bred or the work is too small.
func crossBudget(t *tables, work int64) int64 {
	c := int64(crossShare * float64(work))
	if !t.crossable() || c < crossMin {
		return 0
	}
	return c
}

// crossUntil is the time the searches end at when they give the crossover
// the share cross of their work, the crossover ending at until.
func crossUntil(start, until time.Time, cross, work int64) time.Time {
	if cross == 0 {
		return until
	}
	return start.Add(time.Duration(float64(until.Sub(start)) * (1 - float64(cross)/float64(work))))
}

// breedAll runs the crossover in workers searches at once, each on its
// own stream with the work of limit, from the searches' distinct
// cheapest plans (lists): the cheapest plan met, finished by the final
// local search when it is a child, the routes of the children, and
// whether the clock cut a search short; nil when there are not two
// plans to breed from.
func (t *tables) breedAll(lists []*elites, workers int, seed uint64, deadline time.Time, limit budget) (*solution, []*pool, bool) {
	var pop []elite
	for _, l := range lists {
		for _, e := range l.plans {
			if !slices.ContainsFunc(pop, func(x elite) bool { return x.key == e.key }) {
				pop = append(pop, e)
			}
		}
	}
	slices.SortStableFunc(pop, func(a, b elite) int { return cmpCost(a.s, b.s) })
	if len(pop) < 2 {
		return nil, nil, false
	}
	if len(pop) > crossPop {
		pop = pop[:crossPop]
	}
	type result struct {
		best *solution
		pool *pool
		cut  bool
	}
	res := make([]result, workers)
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker(t, i, splitmix(seed+crossSeed+uint64(i)), deadline)
			// Its routes' generations stay apart from the searches',
			// whose routes the population shares.
			w.gen = uint64(i+1) << 40
			w.pool = newPool(t.n, len(t.p.Vehicles))
			b := budget{work: limit.work, iters: limit.iters, until: limit.until, from: time.Now()}
			best := w.breed(pop, b)
			if best != pop[0].s {
				best = w.finish(best, b)
			}
			res[i] = result{best, w.pool, w.cut}
		}()
	}
	wg.Wait()
	best := pop[0].s
	var pools []*pool
	cut := false
	for _, r := range res {
		if better(r.best, best) {
			best = r.best
		}
		pools = append(pools, r.pool)
		cut = cut || r.cut
	}
	return best, pools, cut
}

// crossSeed sets the crossover's streams apart from the searches'.
const crossSeed = 1 << 20
