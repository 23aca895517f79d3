package vrp

import (
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
	zEnd       []float64    // per vehicle: latest return, min(ShiftEnd, ShiftStart+MaxMinutes)
	maxKm      []float64    // per vehicle
	has        []uint64     // per vehicle: its capabilities
	// per vehicle: its break's window and length (0 without one)
	brkStart, brkEnd, brkLen []float64
	class                    []int32 // per vehicle: vehicles alike in every attribute share one
	classes                  int
	empty                    []*route // per vehicle: its route with no stop

	penalty     []float64 // per stop: the price of leaving it out
	vehicleCost float64   // the price of a route, with MinimizeVehicles
	scale       float64   // the mean price of a return trip to a stop, for the temperatures
	adj         [][]int32 // per stop: itself, then the nearest stops
	fromDepot   []float64 // per stop: price from the first vehicle's start
	minRoutes   int       // a lower bound on the routes that can carry every demand
}

// travel is one profile's arcs: Km and Minutes of its Matrix, and the
// goal's price of each arc.
type travel struct {
	km, minutes, cost []float64
}

// of is vehicle v's travel.
func (t *tables) of(v int32) *travel { return &t.tr[t.prof[v]] }

// neighbours is how many nearest stops each stop's adjacency list holds.
const neighbours = 100

// newTables builds the solver's view of p: its nodes and their
// locations, travel per profile, time windows and demands, the
// vehicles' limits and classes, and the prices and neighbours the search
// reads.
func newTables(p *Problem) *tables {
	t := &tables{p: p, n: len(p.Stops)}
	places := t.locate()
	t.travels(places)
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

// travels sets one travel per distinct matrix of the vehicles, in
// vehicle order, and each vehicle's; without a matrix, the one built from
// places.
func (t *tables) travels(places []place) {
	p := t.p
	t.prof = make([]int32, len(p.Vehicles))
	if p.Matrix == nil {
		m := p.buildMatrix(places)
		t.size = m.Size
		t.tr = []travel{t.travelOf(m)}
		return
	}
	t.size = p.Matrix.Size
	seen := map[*Matrix]int32{}
	for v := range p.Vehicles {
		m := p.travel(&p.Vehicles[v])
		k, ok := seen[m]
		if !ok {
			k = int32(len(t.tr))
			seen[m] = k
			t.tr = append(t.tr, t.travelOf(m))
		}
		t.prof[v] = k
	}
	if len(t.tr) == 0 {
		t.tr = []travel{t.travelOf(p.Matrix)}
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
	t.has, t.brkStart, t.brkEnd, t.brkLen = make([]uint64, nv), make([]float64, nv), make([]float64, nv), make([]float64, nv)
	kinds := map[Vehicle]int32{}
	for v := range p.Vehicles {
		ve := p.Vehicles[v]
		t.has[v] = ve.Has
		if ve.BreakMinutes > 0 {
			t.brkStart[v], t.brkEnd[v], t.brkLen[v] = ve.BreakStart, ve.BreakEnd, ve.BreakMinutes
		}
		t.capacity[v] = [3]float64{ve.CapWeight, ve.CapVolume, ve.CapPackages}
		t.zEnd[v] = math.Min(ve.ShiftEnd, ve.ShiftStart+ve.MaxMinutes)
		t.maxKm[v] = ve.MaxKm
		ve.Profile = int(t.prof[v])
		if p.Matrix == nil { // coordinates decide, not rows
			ve.StartLoc, ve.EndLoc = 0, 0
		} else {
			ve.StartLat, ve.StartLon, ve.EndLat, ve.EndLon = 0, 0, 0, 0
		}
		c, ok := kinds[ve]
		if !ok {
			c = int32(len(kinds))
			kinds[ve] = c
		}
		t.class[v] = c
	}
	t.classes = len(kinds)
}

// travelOf is m's arcs with the goal's price of each.
func (t *tables) travelOf(m *Matrix) travel {
	tr := travel{km: m.Km, minutes: m.Minutes, cost: make([]float64, len(m.Km))}
	for k := range tr.cost {
		tr.cost[k] = t.p.Goal.arcCost(m.Km[k], m.Minutes[k])
	}
	return tr
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
			cost := t.of(int32(v)).cost
			rt := cost[t.arc(t.start[v], int32(i))] + cost[t.arc(int32(i), t.end[v])]
			if !math.IsInf(rt, 0) && !math.IsNaN(rt) {
				best = math.Min(best, rt)
			}
		}
		if !math.IsInf(best, 0) {
			sum, cnt, worst = sum+best, cnt+1, math.Max(worst, best)
		}
		if len(t.start) > 0 {
			t.fromDepot[i] = t.tr[0].cost[t.arc(t.start[0], int32(i))]
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
	t.penalty = make([]float64, t.n)
	for i := range t.penalty {
		pr := min(max(t.p.Stops[i].Priority, 0), 3)
		t.penalty[i] = base * math.Pow(8, float64(pr))
	}
}

// neighbours fills adj: each stop, then up to neighbours nearest stops
// by the first vehicle's travel.
func (t *tables) neighbours() {
	cost := t.tr[0].cost
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
			ca, cb := cost[row+int(t.loc[others[a]])], cost[row+int(t.loc[others[b]])]
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
		caps := make([]float64, len(t.capacity))
		for v := range caps {
			caps[v] = t.capacity[v][d]
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
