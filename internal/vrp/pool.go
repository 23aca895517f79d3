package vrp

import (
	"math/bits"
	"slices"
	"time"
)

// column is a route a search's plans held, as a candidate of the set
// partitioning (recombine): its stops in order, its vehicles' class, its
// price (its arcs and the price of a route) and its stops as a bit set.
type column struct {
	stops []int32
	class int32
	cost  float64
	set   []uint64
}

// pool holds the routes of a search's best plans, each set of stops
// once per class of vehicle, in the cheapest order seen.
type pool struct {
	cols  []column
	index map[poolKey]int32
	keys  []uint64 // per stop: a random key; a set's key is their sum
	prev  []*route // the routes last recorded, per vehicle
}

// poolKey names a set of stops on a class of vehicles.
type poolKey struct {
	hash  uint64
	class int32
	n     int32
}

func newPool(n, vehicles int) *pool {
	p := &pool{index: map[poolKey]int32{}, keys: make([]uint64, n), prev: make([]*route, vehicles)}
	for i := range p.keys {
		p.keys[i] = splitmix(uint64(i) * 0x9e3779b97f4a7c15)
	}
	return p
}

// record adds the routes of s to w's pool, when it keeps one. It counts
// no work: it changes nothing the search does.
func (w *worker) record(s *solution) {
	w.runner(s)
	p := w.pool
	if p == nil {
		return
	}
	for v, r := range s.routes {
		if len(r.stops) == 0 || p.prev[v] == r {
			continue
		}
		p.prev[v] = r
		w.t.add(p, r, r.cost+w.t.vehicleCost)
	}
}

// recordNear is how far above the best plan's arcs, as a share of them,
// a candidate of the annealing may be for its new routes to go into the
// pool.
const recordNear = 0.01

// recordNew adds the routes s built in this iteration to w's pool, when
// it keeps one. It counts no work.
func (w *worker) recordNew(s *solution) {
	for _, r := range s.routes {
		if len(r.stops) > 0 && r.gen == w.gen {
			w.t.add(w.pool, r, r.cost+w.t.vehicleCost)
		}
	}
}

// add puts route r, of price cost, into p unless p holds its stops in an
// order as cheap.
func (t *tables) add(p *pool, r *route, cost float64) {
	h := uint64(0)
	for _, c := range r.stops {
		h += p.keys[c]
	}
	k := poolKey{h, t.class[r.v], int32(len(r.stops))}
	if i, ok := p.index[k]; ok {
		if cost < p.cols[i].cost-tol {
			p.cols[i].stops, p.cols[i].cost = slices.Clone(r.stops), cost
		}
		return
	}
	p.index[k] = int32(len(p.cols))
	p.cols = append(p.cols, column{stops: slices.Clone(r.stops), class: t.class[r.v], cost: cost})
}

// merge is the columns of every pool, in order, each set of stops and
// class once in its cheapest order (the first of equal ones).
func merge(pools []*pool) []column {
	if len(pools) == 0 {
		return nil
	}
	index := map[poolKey]int{}
	var out []column
	for _, p := range pools {
		for _, c := range p.cols {
			h := uint64(0)
			for _, x := range c.stops {
				h += pools[0].keys[x]
			}
			k := poolKey{h, c.class, int32(len(c.stops))}
			if i, ok := index[k]; ok {
				if c.cost < out[i].cost-tol {
					out[i] = c
				}
				continue
			}
			index[k] = len(out)
			out = append(out, c)
		}
	}
	return out
}

// recombineShare is the share of a search's work the set partitioning
// may spend; recombineRoutes is the most routes of the plan it replaces
// at once, and recombineMaxRoutes the most routes a plan may have for it
// to run.
const (
	recombineShare     = 0.01
	recombineRoutes    = 3
	recombineMaxRoutes = 64
)

// recombine is s improved by the routes of cols (the searches' pools):
// for every set of at most recombineRoutes of its routes that some
// routes of cols lie within, the cheapest partition of their stops into
// routes of cols and of s (exact, by depth-first search, unless the work
// runs out), taken when it is cheaper than the routes it replaces; until
// no such set saves or w has reached capWork units. A plan that leaves a
// stop out, or is priced beyond its arcs, is returned as it is. The
// routes of cols are feasible for their class of vehicle, so a partition
// is feasible whenever its routes find vehicles of their class; each is
// built and checked again. It never adds a route to s where that costs
// more, and returns s itself when nothing saves.
func (w *worker) recombine(s *solution, cols []column, capWork int64) *solution {
	tb := w.t
	if tb.extras || len(s.absent) > 0 || s.used < 1 || s.used > recombineMaxRoutes || len(cols) == 0 {
		return s
	}
	words := (tb.n + 63) / 64
	for i := range cols {
		if cols[i].set == nil {
			cols[i].set = make([]uint64, words)
			for _, c := range cols[i].stops {
				cols[i].set[c/64] |= 1 << (c % 64)
			}
			w.work += int64(len(cols[i].stops))
		}
	}
	rc := &recombiner{w: w, cap: capWork, words: words}
	for !rc.done() {
		next := rc.pass(s, cols)
		if next == nil {
			break
		}
		s = next
	}
	return s
}

// recombiner is recombine's state.
type recombiner struct {
	w     *worker
	cap   int64
	words int
	// the current set's candidates, its stops, and the search's state
	cands            []*column
	want, covered    []uint64
	pick, bestPick   []int
	bestCost         float64
	low, lows        []float64 // per stop its least price per stop; per candidate their sum
	perClass         []int
	incumbent        []column
	routeOf          []int32 // per route index of the plan: its vehicle
	groups           []group
	byTouch          map[uint64]int // a group per set of routes
	classFree, idleC []int
}

// group is the columns of cols whose stops lie in the same set of the
// plan's routes (touch, a bit per route index).
type group struct {
	touch uint64
	cols  []int
}

func (rc *recombiner) done() bool {
	w := rc.w
	if w.work >= rc.cap {
		return true
	}
	if !time.Now().Before(w.deadline) {
		w.cut = true
		return true
	}
	return false
}

// pass looks for a set of routes of s whose stops the columns partition
// more cheaply, and returns s with that partition in their place, or nil.
func (rc *recombiner) pass(s *solution, cols []column) *solution {
	w, tb := rc.w, rc.w.t
	// The plan's routes, by index.
	idx := make([]int32, len(s.routes))
	rc.routeOf = rc.routeOf[:0]
	rc.incumbent = rc.incumbent[:0]
	for v, r := range s.routes {
		idx[v] = -1
		if len(r.stops) == 0 {
			continue
		}
		idx[v] = int32(len(rc.routeOf))
		rc.routeOf = append(rc.routeOf, int32(v))
		c := column{stops: r.stops, class: tb.class[v], cost: r.cost + tb.vehicleCost, set: make([]uint64, rc.words)}
		for _, x := range r.stops {
			c.set[x/64] |= 1 << (x % 64)
		}
		rc.incumbent = append(rc.incumbent, c)
	}
	m := len(rc.routeOf)
	// Each column's routes of s; those that touch more than
	// recombineRoutes, and those that are a route of s no cheaper, are
	// of no use.
	rc.byTouch = map[uint64]int{}
	byTouch := rc.byTouch
	rc.groups = rc.groups[:0]
	for i := range cols {
		c := &cols[i]
		touch := uint64(0)
		for _, x := range c.stops {
			v := s.where[x]
			if v < 0 {
				touch = ^uint64(0)
				break
			}
			touch |= 1 << idx[v]
		}
		w.work += int64(len(c.stops))
		if bits.OnesCount64(touch) > recombineRoutes {
			continue
		}
		if bits.OnesCount64(touch) == 1 {
			j := bits.TrailingZeros64(touch)
			if len(c.stops) == len(rc.incumbent[j].stops) && (c.cost >= rc.incumbent[j].cost-tol || c.class != rc.incumbent[j].class) {
				continue
			}
		}
		g, ok := byTouch[touch]
		if !ok {
			g = len(rc.groups)
			byTouch[touch] = g
			rc.groups = append(rc.groups, group{touch: touch})
		}
		rc.groups[g].cols = append(rc.groups[g].cols, i)
	}
	if len(rc.groups) == 0 {
		return nil
	}
	// Idle vehicles per class.
	rc.idleC = make([]int, tb.classes)
	for v, r := range s.routes {
		if len(r.stops) == 0 {
			rc.idleC[tb.class[v]]++
		}
	}
	// Every set of up to recombineRoutes routes that the groups within it
	// cover whole, in order of size.
	var sub []int
	var try func(from, k int, mask uint64) *solution
	try = func(from, k int, mask uint64) *solution {
		if rc.done() {
			return nil
		}
		if len(sub) == k {
			return rc.trySet(s, cols, mask)
		}
		for j := from; j < m; j++ {
			sub = append(sub, j)
			if r := try(j+1, k, mask|1<<j); r != nil {
				return r
			}
			sub = sub[:len(sub)-1]
		}
		return nil
	}
	for k := 1; k <= recombineRoutes && k <= m; k++ {
		sub = sub[:0]
		if r := try(0, k, 0); r != nil {
			return r
		}
	}
	return nil
}

// trySet solves the partition of the stops of the routes of s in mask
// (bits of route indexes) and returns s with it when it saves, else nil.
func (rc *recombiner) trySet(s *solution, cols []column, mask uint64) *solution {
	w, tb := rc.w, rc.w.t
	// The columns within the set, and whether they touch every route of
	// it (otherwise a smaller set has them all).
	rc.cands = rc.cands[:0]
	cover := uint64(0)
	for sub := mask; sub != 0; sub = (sub - 1) & mask {
		w.work++
		g, ok := rc.byTouch[sub]
		if !ok {
			continue
		}
		cover |= sub
		for _, i := range rc.groups[g].cols {
			rc.cands = append(rc.cands, &cols[i])
		}
	}
	if cover != mask {
		return nil
	}
	have := 0.0
	for j := range rc.incumbent {
		if mask&(1<<j) != 0 {
			rc.cands = append(rc.cands, &rc.incumbent[j])
			have += rc.incumbent[j].cost
		}
	}
	// Cheapest per stop first, so that good partitions come early.
	slices.SortStableFunc(rc.cands, func(a, b *column) int {
		x, y := a.cost/float64(len(a.stops)), b.cost/float64(len(b.stops))
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	w.work += int64(len(rc.cands))
	if rc.want == nil {
		rc.want, rc.covered = make([]uint64, rc.words), make([]uint64, rc.words)
	}
	clear(rc.want)
	clear(rc.covered)
	for j := range rc.incumbent {
		if mask&(1<<j) != 0 {
			for k, b := range rc.incumbent[j].set {
				rc.want[k] |= b
			}
		}
	}
	// Vehicles free per class: those of the set's routes and the idle
	// ones.
	rc.classFree = append(rc.classFree[:0], rc.idleC...)
	for j := range rc.incumbent {
		if mask&(1<<j) != 0 {
			rc.classFree[rc.incumbent[j].class]++
		}
	}
	// A lower bound on what covering the stops left costs: each stop at
	// the lowest price per stop of the candidates that hold it.
	if rc.low == nil {
		rc.low = make([]float64, tb.n)
	}
	for i := len(rc.cands) - 1; i >= 0; i-- {
		c := rc.cands[i]
		r := c.cost / float64(len(c.stops))
		for _, x := range c.stops {
			rc.low[x] = r // sorted by it: the last written is the least
		}
	}
	rc.lows = rc.lows[:0]
	lb := 0.0
	for _, c := range rc.cands {
		l := 0.0
		for _, x := range c.stops {
			l += rc.low[x]
		}
		rc.lows = append(rc.lows, l)
		w.work += int64(len(c.stops))
	}
	for j := range rc.incumbent {
		if mask&(1<<j) != 0 {
			for _, x := range rc.incumbent[j].stops {
				lb += rc.low[x]
			}
		}
	}
	rc.perClass = make([]int, tb.classes)
	rc.bestCost = have - tol*(1+have)
	rc.bestPick = rc.bestPick[:0]
	rc.pick = rc.pick[:0]
	rc.dfs(0, lb)
	if len(rc.bestPick) == 0 {
		return nil
	}
	return rc.apply(s, mask)
}

// dfs extends the partition in rc.pick (indexes into rc.cands) of cost
// cost: the lowest stop of the set not yet covered goes to each
// candidate that holds it and no covered stop, while the partition stays
// cheaper than the best one found.
func (rc *recombiner) dfs(cost, lb float64) {
	w := rc.w
	if w.work >= rc.cap {
		return
	}
	first := -1
	for k := range rc.want {
		if rest := rc.want[k] &^ rc.covered[k]; rest != 0 {
			first = 64*k + bits.TrailingZeros64(rest)
			break
		}
	}
	if first < 0 {
		if cost < rc.bestCost {
			rc.bestCost = cost
			rc.bestPick = append(rc.bestPick[:0], rc.pick...)
		}
		return
	}
	w.work += int64(len(rc.cands))
	word, bit := first/64, uint64(1)<<(first%64)
	for i, c := range rc.cands {
		if c.set[word]&bit == 0 || cost+c.cost+lb-rc.lows[i] >= rc.bestCost-tol || rc.perClass[c.class] >= rc.classFree[c.class] {
			continue
		}
		clash := false
		for k, b := range c.set {
			if b&rc.covered[k] != 0 {
				clash = true
				break
			}
		}
		if clash {
			continue
		}
		for k, b := range c.set {
			rc.covered[k] |= b
		}
		rc.perClass[c.class]++
		rc.pick = append(rc.pick, i)
		rc.dfs(cost+c.cost, lb-rc.lows[i])
		rc.pick = rc.pick[:len(rc.pick)-1]
		rc.perClass[c.class]--
		for k, b := range c.set {
			rc.covered[k] &^= b
		}
	}
}

// apply is s with the routes in mask replaced by the best partition
// found, each on a vehicle of its class (a route of s keeps its own), or
// nil when one does not build.
func (rc *recombiner) apply(s *solution, mask uint64) *solution {
	w, tb := rc.w, rc.w.t
	out := w.fork(s)
	var free []int32
	for j, v := range rc.routeOf {
		if mask&(1<<j) != 0 {
			free = append(free, v)
		}
	}
	for v, r := range s.routes {
		if len(r.stops) == 0 {
			free = append(free, int32(v))
		}
	}
	taken := make([]bool, len(free))
	// Routes of s that stay keep their vehicles.
	var placed []*column
	for _, i := range rc.bestPick {
		c := rc.cands[i]
		for j := range rc.incumbent {
			if c == &rc.incumbent[j] {
				for k, v := range free {
					if v == rc.routeOf[j] {
						taken[k] = true
					}
				}
				c = nil
				break
			}
		}
		if c != nil {
			placed = append(placed, c)
		}
	}
	for j, v := range rc.routeOf {
		if mask&(1<<j) == 0 {
			continue
		}
		keep := false
		for _, i := range rc.bestPick {
			if rc.cands[i] == &rc.incumbent[j] {
				keep = true
			}
		}
		if !keep {
			out.routes[v] = tb.empty[v]
		}
	}
	for _, c := range placed {
		k := -1
		for f, v := range free {
			if !taken[f] && tb.class[v] == c.class {
				k = f
				break
			}
		}
		if k < 0 {
			return nil
		}
		taken[k] = true
		r := w.build(free[k], slices.Clone(c.stops))
		w.work += int64(len(c.stops))
		if r == nil {
			return nil
		}
		w.setHere(out, free[k], r)
	}
	w.total(out)
	if out.cost >= s.cost-tol {
		return nil
	}
	return out
}
