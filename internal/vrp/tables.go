package vrp

import (
	"fmt"
	"math"
	"sort"
)

// tables are the solver's view of a Problem. Nodes 0..n-1 are the stops;
// each vehicle's start and end are nodes after them, one per distinct
// place. Travel between nodes is read from matrices over locations (loc
// maps a node to its row): the caller's, one per profile of the fleet, or
// one built from the coordinates once per Solve.
type tables struct {
	p       *Problem
	n       int       // stops
	tr      []travel  // per profile of the fleet; the first vehicle's is tr[0]
	prof    []int32   // per vehicle: its index in tr
	size    int       // the matrices' Size
	loc     []int32   // per node
	early   []float64 // per node; -Inf at vehicle ends
	late    []float64 // per node; +Inf at vehicle ends and when AllowLate
	service []float64 // per node; 0 at vehicle ends
	demand  [][3]float64
	needs   []uint64 // per stop: capabilities its vehicle must have

	start, end []int32      // per vehicle: its nodes
	capacity   [][3]float64 // per vehicle
	room       [][3]float64 // per vehicle: the capacity with Problem.Overload
	zEnd       []float64    // per vehicle: latest return, min(ShiftEnd, ShiftStart+MaxMinutes)
	maxKm      []float64    // per vehicle
	has        []uint64     // per vehicle: its capabilities
	brks       [][]Break    // per vehicle: its breaks, in order
	class      []int32      // per vehicle: vehicles alike in every attribute share one
	classes    int
	empty      []*route // per vehicle: its route with no stop
	// extras: the plan's price has more than arcs, vehicles and
	// penalties (Problem.Balance, Quality or Overload).
	extras bool
	qw     []float64 // per stop: Quality times its QualityWeight

	penalty     []float64 // per stop: the price of leaving it out
	vehicleCost float64   // the price of a route, with MinimizeVehicles
	scale       float64   // the mean price of a return trip to a stop, for the temperatures
	adj         [][]int32 // per stop: itself, then the nearest stops
	fromDepot   []float64 // per stop: price from the first vehicle's start
	minRoutes   int       // a lower bound on the routes that can carry every demand
}

// travel is one profile's arcs: Km and Minutes of its Matrix, and the
// goal's price of each arc for one cost model, kept for the first
// maxPriced travels of a fleet and computed as perKm × km + perMinute ×
// minutes for the others (cost nil), so that a fleet of many cost models
// holds at most maxPriced priced matrices.
type travel struct {
	km, minutes, cost []float64
	// into is cost transposed (into[c*size+p] is the price of the arc
	// from p to c), so that the insertion loop reads the prices into and
	// out of a stop from two rows; cost itself when it is symmetric.
	into []float64
	// kmSym and minutesSym say km and minutes are symmetric, so that the
	// insertion loop reads the arc from p to c in c's row, beside the
	// others it reads: on a large matrix a column read is a cache miss.
	kmSym, minutesSym bool
	perKm, perMinute  float64
}

// maxPriced is how many travels keep the price of every arc.
const maxPriced = 4

// price is the goal's price of arc k.
func (tr *travel) price(k int) float64 {
	if tr.cost != nil {
		return tr.cost[k]
	}
	return tr.perKm*tr.km[k] + tr.perMinute*tr.minutes[k]
}

// of is vehicle v's travel.
func (t *tables) of(v int32) *travel { return &t.tr[t.prof[v]] }

// neighbours is how many nearest stops each stop's adjacency list holds.
const neighbours = 100

// newTables builds the solver's view of p: its nodes and their
// locations, travel per profile, time windows and demands, the
// vehicles' limits and classes, and the prices and neighbours the search
// reads.
func newTables(p *Problem) *tables { return buildTables(p, true) }

// buildTables is newTables, with the locations renumbered for locality
// (renumber) when asked.
func buildTables(p *Problem, renumber bool) *tables {
	t := &tables{p: p, n: len(p.Stops)}
	places := t.locate()
	t.travels(places)
	if renumber {
		t.renumber()
	}
	t.windows()
	t.vehicles()
	t.empty = make([]*route, len(p.Vehicles))
	for v := range t.empty {
		t.empty[v] = t.newRoute(int32(v), nil)
	}
	t.prices()
	t.neighbours()
	t.minRoutes = t.fleetBound()
	return t
}

// locate sets every node's location and the vehicles' start and end
// nodes, one node per distinct place. Without a matrix the locations are
// indexes into the places it returns, from which one is built.
func (t *tables) locate() []place {
	p := t.p
	var places []place
	t.loc = make([]int32, 0, t.n+2)
	if p.Matrix != nil {
		for i := range p.Stops {
			t.loc = append(t.loc, int32(p.Stops[i].Loc))
		}
	} else {
		for i := range p.Stops {
			places = append(places, p.Stops[i].place())
			t.loc = append(t.loc, int32(i))
		}
	}
	// Vehicle ends, one node per distinct place.
	ends := map[place]int32{}
	endNode := func(pl place) int32 {
		key := pl
		if p.Matrix != nil {
			key = place{loc: pl.loc}
		}
		if id, ok := ends[key]; ok {
			return id
		}
		id := int32(len(t.loc))
		ends[key] = id
		if p.Matrix != nil {
			t.loc = append(t.loc, int32(pl.loc))
		} else {
			t.loc = append(t.loc, int32(len(places)))
			places = append(places, pl)
		}
		return id
	}
	nv := len(p.Vehicles)
	t.start, t.end = make([]int32, nv), make([]int32, nv)
	for v := range p.Vehicles {
		t.start[v] = endNode(p.Vehicles[v].start())
		t.end[v] = endNode(p.Vehicles[v].finish())
	}
	return places
}

// travels sets one travel per distinct matrix and cost model of the
// vehicles, in vehicle order, and each vehicle's; without a matrix, the
// matrix is built from places.
func (t *tables) travels(places []place) {
	p := t.p
	t.prof = make([]int32, len(p.Vehicles))
	built := p.Matrix
	if built == nil {
		built = p.buildMatrix(places)
	}
	t.size = built.Size
	type kind struct {
		m *Matrix
		c Costs
	}
	seen := map[kind]int32{}
	for v := range p.Vehicles {
		m := built
		if p.Matrix != nil {
			m = p.travel(&p.Vehicles[v])
		}
		c := p.Vehicles[v].costs()
		k, ok := seen[kind{m, c}]
		if !ok {
			k = int32(len(t.tr))
			seen[kind{m, c}] = k
			t.tr = append(t.tr, t.travelOf(m, c, len(t.tr) < maxPriced))
		}
		t.prof[v] = k
	}
	if len(t.tr) == 0 {
		t.tr = []travel{t.travelOf(built, DefaultCosts(), true)}
	}
}

// windows sets every node's time window and service time, and every
// stop's demand.
func (t *tables) windows() {
	p := t.p
	nodes := len(t.loc)
	t.early, t.late, t.service = make([]float64, nodes), make([]float64, nodes), make([]float64, nodes)
	for i := range t.early {
		t.early[i], t.late[i] = math.Inf(-1), math.Inf(1)
	}
	t.demand = make([][3]float64, t.n)
	t.needs = make([]uint64, t.n)
	for i := range p.Stops {
		s := &p.Stops[i]
		t.needs[i] = s.Needs
		t.early[i], t.service[i] = s.Early, s.Service
		if !p.AllowLate {
			t.late[i] = s.Late
		}
		t.demand[i] = [3]float64{s.Weight, s.Volume, s.Packages}
	}
}

// vehicles sets every vehicle's capacity, latest return and distance
// limit, and its class: vehicles alike in every attribute that counts
// (their travel rather than their Profile number, and their coordinates
// or their rows, whichever the travel is read by) share one.
func (t *tables) vehicles() {
	p := t.p
	nv := len(p.Vehicles)
	t.capacity, t.zEnd, t.maxKm, t.class = make([][3]float64, nv), make([]float64, nv), make([]float64, nv), make([]int32, nv)
	t.has, t.brks, t.room = make([]uint64, nv), make([][]Break, nv), make([][3]float64, nv)
	kinds := map[string]int32{}
	for v := range p.Vehicles {
		ve := p.Vehicles[v]
		t.has[v] = ve.Has
		t.brks[v] = ve.Breaks
		t.capacity[v] = [3]float64{ve.CapWeight, ve.CapVolume, ve.CapPackages}
		for d, c := range t.capacity[v] {
			t.room[v][d] = c
			if p.Overload > 0 {
				t.room[v][d] = c * (1 + p.Overload)
			}
		}
		t.zEnd[v] = math.Min(ve.ShiftEnd, ve.ShiftStart+ve.MaxMinutes)
		t.maxKm[v] = ve.MaxKm
		ve.Profile = int(t.prof[v])
		if p.Matrix == nil { // coordinates decide, not rows
			ve.StartLoc, ve.EndLoc = 0, 0
		} else {
			ve.StartLat, ve.StartLon, ve.EndLat, ve.EndLon = 0, 0, 0, 0
		}
		// The travel stands for the matrix and the cost model; %v
		// prints every number so that it reads back the same.
		ve.Costs = nil
		key := fmt.Sprintf("%v", ve)
		c, ok := kinds[key]
		if !ok {
			c = int32(len(kinds))
			kinds[key] = c
		}
		t.class[v] = c
	}
	t.classes = len(kinds)
	t.extras = p.Balance > 0 || p.Quality > 0 || p.Overload > 0 || p.Efficiency > 0
	t.qw = make([]float64, t.n)
	for i := range t.qw {
		if p.Quality > 0 {
			t.qw[i] = p.Quality * QualityWeight(p.Stops[i].Priority)
		}
	}
}

// travelOf is m's arcs with the goal's price of each for cost model c,
// kept when priced.
func (t *tables) travelOf(m *Matrix, c Costs, priced bool) travel {
	tr := travel{km: m.Km, minutes: m.Minutes, kmSym: symmetric(m.Km, m.Size), minutesSym: symmetric(m.Minutes, m.Size)}
	tr.perKm, tr.perMinute = t.p.linear(c)
	if priced {
		tr.cost = make([]float64, len(m.Km))
		for k := range tr.cost {
			tr.cost[k] = t.p.arcCost(c, m.Km[k], m.Minutes[k])
		}
		s := m.Size
		if symmetric(tr.cost, s) {
			tr.into = tr.cost
		} else {
			tr.into = make([]float64, len(tr.cost))
			for i := 0; i < s; i++ {
				for j := 0; j < s; j++ {
					tr.into[j*s+i] = tr.cost[i*s+j]
				}
			}
		}
	}
	return tr
}

// symmetric reports whether the s × s matrix m is its own transpose.
func symmetric(m []float64, s int) bool {
	for i := 0; i < s; i++ {
		for j := i + 1; j < s; j++ {
			if m[i*s+j] != m[j*s+i] {
				return false
			}
		}
	}
	return true
}

// buildMatrix prices travel between places with the coordinate model.
func (p *Problem) buildMatrix(places []place) *Matrix {
	s := len(places)
	m := &Matrix{Size: s, Km: make([]float64, s*s), Minutes: make([]float64, s*s)}
	for i := 0; i < s; i++ {
		for j := i + 1; j < s; j++ {
			km, min := p.leg(nil, places[i], places[j])
			m.Km[i*s+j], m.Km[j*s+i] = km, km
			m.Minutes[i*s+j], m.Minutes[j*s+i] = min, min
		}
	}
	return m
}

// arc is the index of the arc from node a to node b in the matrices.
func (t *tables) arc(a, b int32) int { return int(t.loc[a])*t.size + int(t.loc[b]) }

// prices sets the penalties, the vehicle cost and the temperature scale.
// A left-out stop costs more than any route can, and more the higher its
// priority (8 times per level), so that urgent stops are kept first.
func (t *tables) prices() {
	var sum, worst float64
	cnt := 0
	t.fromDepot = make([]float64, t.n)
	for i := 0; i < t.n; i++ {
		best := math.Inf(1)
		for v := range t.start {
			tr := t.of(int32(v))
			rt := tr.price(t.arc(t.start[v], int32(i))) + tr.price(t.arc(int32(i), t.end[v]))
			if !math.IsInf(rt, 0) && !math.IsNaN(rt) {
				best = math.Min(best, rt)
			}
		}
		if !math.IsInf(best, 0) {
			sum, cnt, worst = sum+best, cnt+1, math.Max(worst, best)
		}
		if len(t.start) > 0 {
			t.fromDepot[i] = t.tr[0].price(t.arc(t.start[0], int32(i)))
		}
	}
	t.scale = 1
	if cnt > 0 && sum > 0 {
		t.scale = sum / float64(cnt)
	}
	worst = math.Max(worst, 1)
	if t.p.MinimizeVehicles {
		t.vehicleCost = 2 * worst * float64(t.n+1)
	}
	base := t.vehicleCost + 10*worst*float64(t.n+1)
	if t.extras {
		base += t.extraBound()
	}
	if t.p.Overload > 0 {
		// Every route loaded to its limit: a left-out stop still costs
		// more.
		for v := range t.capacity {
			for d, c := range t.capacity[v] {
				if !math.IsInf(c, 0) {
					base += t.p.OverloadPrice * (t.room[v][d] - c)
				}
			}
		}
	}
	t.penalty = make([]float64, t.n)
	for i := range t.penalty {
		pr := min(max(t.p.Stops[i].Priority, 0), 3)
		t.penalty[i] = base * math.Pow(8, float64(pr))
	}
}

// neighbours fills adj: each stop, then up to neighbours nearest stops
// by the first vehicle's travel.
func (t *tables) neighbours() {
	tr := &t.tr[0]
	t.adj = make([][]int32, t.n)
	others := make([]int32, 0, t.n)
	for i := 0; i < t.n; i++ {
		others = others[:0]
		for j := 0; j < t.n; j++ {
			if j != i {
				others = append(others, int32(j))
			}
		}
		row := int(t.loc[i]) * t.size
		sort.Slice(others, func(a, b int) bool {
			ca, cb := tr.price(row+int(t.loc[others[a]])), tr.price(row+int(t.loc[others[b]]))
			if ca != cb {
				return ca < cb
			}
			return others[a] < others[b]
		})
		k := min(len(others), neighbours)
		t.adj[i] = append([]int32{int32(i)}, others[:k]...)
	}
}

// fleetBound is the fewest vehicles whose capacities, largest first, hold
// the total demand in every dimension.
func (t *tables) fleetBound() int {
	need := 1
	for d := 0; d < 3; d++ {
		var total float64
		for i := range t.demand {
			total += t.demand[i][d]
		}
		caps := make([]float64, len(t.room))
		for v := range caps {
			caps[v] = t.room[v][d]
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(caps)))
		var held float64
		for k, c := range caps {
			held += c
			if held >= total {
				need = max(need, k+1)
				break
			}
		}
	}
	return need
}
