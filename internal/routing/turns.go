package routing

import (
	"math"
)

// The routing graph of a costing is edge-based: its nodes are the edges
// of the road network in one direction (node 2e runs edge e along its
// points, 2e+1 against them), and an arc from node u to node v is the
// turn from u onto v at the junction between them. Its weight is the
// turn's penalty plus the cost of driving all of v, so the cost of a
// path reaching node v is the cost of arriving at v's far end. Turn
// restrictions and U-turns are arcs left out; turn and traffic-signal
// penalties are in the arcs' costs.

// Penalties in deciseconds and the turn curve of each costing, after
// OSRM's car, bicycle and foot profiles.
type turnModel struct {
	penalty, bias float64 // seconds at a right angle, right/left bias
	quadratic     bool    // cost grows with the square of the angle
	uTurn, signal float64 // seconds
	turnAnywhere  bool    // may turn round at any junction, not only at dead ends
}

var turnModels = [numCostings]turnModel{
	Auto:       {penalty: 7.5, bias: 1.075, uTurn: 20, signal: 2},
	Truck:      {penalty: 10, bias: 1.075, uTurn: 30, signal: 2},
	Bicycle:    {penalty: 6, bias: 1.4, quadratic: true, uTurn: 20, signal: 2, turnAnywhere: true},
	Pedestrian: {uTurn: 2, signal: 2, turnAnywhere: true},
}

// restrictedEntry is the weight, deciseconds, of turning from a road
// anyone may drive onto one for local access only: such roads are
// reached when a location is on them, never driven through.
const restrictedEntry = 32767

// turnSeconds is the cost of a turn of angle degrees (positive to the
// right, 180 a U-turn).
func (m turnModel) turnSeconds(angle float64) float64 {
	if m.penalty == 0 {
		return 0
	}
	if m.quadratic {
		n := angle / 90
		if n >= 0 {
			return n * n * m.penalty / m.bias
		}
		return n * n * m.penalty * m.bias
	}
	if angle >= 0 {
		return m.penalty / (1 + math.Exp(-((13/m.bias)*angle/180 - 6.5*m.bias)))
	}
	return m.penalty / (1 + math.Exp(-((13*m.bias)*-angle/180 - 6.5/m.bias)))
}

// arcs is a graph in compressed adjacency form with the costs of its
// arcs: weight and duration in deciseconds, distance in decimeters. The
// head and weight, which every search step reads, lie together; the
// duration and distance, read only when a label improves, apart.
type arcs struct {
	first []int32
	tw    []toW
	d, m  []uint32
}

// dropDurations forgets the durations when every one equals its weight
// (a costing that minimizes plain time): d is then nil and the weights
// stand for them.
func (a *arcs) dropDurations() {
	for i, x := range a.tw {
		if a.d[i] != x.w {
			return
		}
	}
	a.d = nil
}

// dur is arc i's duration.
func (a *arcs) dur(i int32) uint32 {
	if a.d == nil {
		return a.tw[i].w
	}
	return a.d[i]
}

type toW struct {
	to int32
	w  uint32
}

// edgeCost is the weight and duration in deciseconds of driving node v
// (edge v/2 in direction v%2) whole; ok false when c may not.
func (g *Graph) edgeCost(v int32, c Costing) (w, d float64, ok bool) {
	e := v / 2
	r := g.ways[g.way[e]].rules[c][v%2]
	if !r.usable() {
		return 0, 0, false
	}
	travel := g.meters(e) / (float64(r.kmh) / 3.6)
	signals := float64(g.innerSig[e]) * turnModels[c].signal
	return 10 * (travel/float64(r.rate) + signals), 10 * (travel + signals), true
}

// junctionEdges lists, for every junction, the edges that start or end
// there.
func (g *Graph) junctionEdges() (first, list []int32) {
	first = make([]int32, g.junctions+1)
	for e := range g.tail {
		first[g.tail[e]+1]++
		if g.head[e] != g.tail[e] {
			first[g.head[e]+1]++
		}
	}
	for j := 1; j <= g.junctions; j++ {
		first[j] += first[j-1]
	}
	list = make([]int32, first[g.junctions])
	pos := append([]int32(nil), first[:g.junctions]...)
	for e := range g.tail {
		list[pos[g.tail[e]]] = int32(e)
		pos[g.tail[e]]++
		if g.head[e] != g.tail[e] {
			list[pos[g.head[e]]] = int32(e)
			pos[g.head[e]]++
		}
	}
	return first, list
}

// turnRestriction is a restriction placed on the graph: at junction via,
// from way from onto way to (indexes into Graph.ways).
type turnRestriction struct {
	via, from, to int32
	only          bool
	costings      uint8
}

// turnArcs builds the edge-based graph of costing c. fits, when not nil,
// says which ways a truck may use. A U-turn is allowed where there is no
// other way on: at a dead end, at a barrier, and, when net is given,
// where every other way on leads out of net (into a one-way fragment an
// extract's edge cut off, say).
func (g *Graph) turnArcs(c Costing, rs []turnRestriction, fits func(way int32) bool, net []bool) arcs {
	return g.turnArcsObserved(c, rs, fits, net, nil)
}

// turnArcsObserved is turnArcs with the edges obs knows driven at its
// speeds: their duration is their length at that speed (signals
// included in it), their weight the costing's weight changed by as much.
func (g *Graph) turnArcsObserved(c Costing, rs []turnRestriction, fits func(way int32) bool, net []bool, obs Speeds) arcs {
	tb := turnBuilder{g: g, c: c, model: turnModels[c], net: net, byVia: map[int32][]turnRestriction{}}
	tb.cost, tb.dur = g.nodeCosts(c, fits)
	if obs != nil {
		for v := range tb.cost {
			if math.IsNaN(tb.cost[v]) {
				continue
			}
			if kmh, ok := obs(v/2, v%2 == 1); ok && kmh > 0 {
				d := 10 * g.meters(int32(v/2)) / (kmh / 3.6)
				tb.cost[v] += d - tb.dur[v]
				tb.dur[v] = d
			}
		}
	}
	for _, r := range rs {
		if r.costings&(1<<c) != 0 {
			tb.byVia[r.via] = append(tb.byVia[r.via], r)
		}
	}
	jFirst, jList := g.junctionEdges()
	for j := int32(0); j < int32(g.junctions); j++ {
		tb.junction(j, jList[jFirst[j]:jFirst[j+1]])
	}
	return g.packArcs(tb.all, int32(len(tb.cost)))
}

// nodeCosts are the weight and duration, deciseconds, of driving every
// node of costing c's graph whole; the weight is NaN where c may not, or
// where fits (when not nil) says a truck may not use the way.
func (g *Graph) nodeCosts(c Costing, fits func(way int32) bool) (cost, dur []float64) {
	n := int32(2 * len(g.tail))
	cost = make([]float64, n)
	dur = make([]float64, n)
	for v := int32(0); v < n; v++ {
		w, d, ok := g.edgeCost(v, c)
		if !ok || fits != nil && !fits(g.way[v/2]) {
			cost[v] = math.NaN()
			continue
		}
		cost[v], dur[v] = w, d
	}
	return cost, dur
}

// turnArc is a turn from node from onto node to, with its weight and
// duration in deciseconds.
type turnArc struct {
	from, to int32
	w, d     float64
}

// turnBuilder gathers the turns of one costing, junction by junction.
type turnBuilder struct {
	g         *Graph
	c         Costing
	model     turnModel
	net       []bool
	cost, dur []float64 // per node: weight (NaN: unusable) and duration
	byVia     map[int32][]turnRestriction
	ins, outs []int32 // the nodes arriving at and leaving the junction at hand
	all       []turnArc
}

func (tb *turnBuilder) usable(v int32) bool { return !math.IsNaN(tb.cost[v]) }

// junction adds the turns at junction j, whose edges are es.
func (tb *turnBuilder) junction(j int32, es []int32) {
	g, c, model := tb.g, tb.c, tb.model
	roads := tb.sides(j, es)
	blocked := g.blocked[j]&(1<<c) != 0
	for _, u := range tb.ins {
		_, inB := g.nodeBearings(u)
		uw := g.ways[g.way[u/2]]
		others := 0
		for _, v := range tb.outs {
			if v != u^1 && (tb.net == nil || tb.net[v]) {
				others++
			}
		}
		for _, v := range tb.outs {
			uTurn := v == u^1
			if uTurn && others > 0 && !blocked && !model.turnAnywhere || !uTurn && blocked {
				continue
			}
			if banned(tb.byVia[j], g.way[u/2], g.way[v/2]) {
				continue
			}
			outB, _ := g.nodeBearings(v)
			angle := math.Mod(outB-inB+540, 360) - 180
			sec := 0.0
			if roads > 2 || uTurn {
				sec = model.turnSeconds(angle)
			}
			if uTurn {
				sec += model.uTurn
			}
			if g.signal[j] {
				sec += model.signal
			}
			w := 10*sec + tb.cost[v]
			vr := g.ways[g.way[v/2]].rules[c][v%2]
			if vr.restricted && !uw.rules[c][u%2].restricted {
				w += restrictedEntry
			}
			tb.all = append(tb.all, turnArc{u, v, w, 10*sec + tb.dur[v]})
		}
	}
}

// sides sets ins and outs to the usable nodes arriving at and leaving
// junction j, whose edges are es, and returns how many of its roads the
// costing may use in either direction.
func (tb *turnBuilder) sides(j int32, es []int32) (roads int) {
	g := tb.g
	tb.ins, tb.outs = tb.ins[:0], tb.outs[:0]
	for _, e := range es {
		fw, bw := 2*e, 2*e+1
		if tb.usable(fw) || tb.usable(bw) {
			roads++
		}
		if g.head[e] == j {
			if tb.usable(fw) {
				tb.ins = append(tb.ins, fw)
			}
			if tb.usable(bw) {
				tb.outs = append(tb.outs, bw)
			}
		}
		if g.tail[e] == j {
			if tb.usable(fw) {
				tb.outs = append(tb.outs, fw)
			}
			if tb.usable(bw) {
				tb.ins = append(tb.ins, bw)
			}
		}
	}
	return roads
}

// packArcs lays the turns out as the arcs of a graph of n nodes, with
// their weights and durations rounded to deciseconds and their distances
// in decimeters.
func (g *Graph) packArcs(all []turnArc, n int32) arcs {
	a := arcs{first: make([]int32, n+1)}
	for _, x := range all {
		a.first[x.from+1]++
	}
	for v := int32(1); v <= n; v++ {
		a.first[v] += a.first[v-1]
	}
	a.tw, a.d, a.m = make([]toW, len(all)), make([]uint32, len(all)), make([]uint32, len(all))
	pos := append([]int32(nil), a.first[:n]...)
	for _, x := range all {
		p := pos[x.from]
		pos[x.from]++
		a.tw[p], a.d[p], a.m[p] = toW{x.to, deci(x.w)}, deci(x.d), uint32(math.Round(10*g.meters(x.to/2)))
	}
	return a
}

// deci rounds a cost to whole deciseconds, at least one.
func deci(x float64) uint32 { return uint32(max(math.Round(x), 1)) }

// banned reports whether the restrictions at a junction forbid turning
// from way from onto way to.
func banned(rs []turnRestriction, from, to int32) bool {
	for _, r := range rs {
		if r.from != from {
			continue
		}
		if r.only && r.to != to || !r.only && r.to == to {
			return true
		}
	}
	return false
}

// nodeBearings are the bearings node v starts and ends with, in its own
// direction.
func (g *Graph) nodeBearings(v int32) (start, end float64) {
	s, e := g.bearings(v / 2)
	if v%2 == 0 {
		return s, e
	}
	return math.Mod(e+180, 360), math.Mod(s+180, 360)
}

// largestComponent marks the nodes of the largest strongly connected
// component of a graph: the nodes a route can both reach and leave.
func largestComponent(a arcs) []bool {
	n := int32(len(a.first) - 1)
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	comp := make([]int32, n)
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	var stack []int32
	type frame struct{ v, next int32 }
	var call []frame
	next, comps := int32(0), int32(0)
	size := map[int32]int32{}
	for root := int32(0); root < n; root++ {
		if index[root] >= 0 || a.first[root] == a.first[root+1] {
			continue
		}
		call = append(call[:0], frame{root, a.first[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.next < a.first[f.v+1] {
				w := a.tw[f.next].to
				f.next++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, a.first[w]})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = comps
					size[comps]++
					if w == v {
						break
					}
				}
				comps++
			}
		}
	}
	best, bestSize := int32(-1), int32(0)
	for c, s := range size {
		if s > bestSize || s == bestSize && c < best {
			best, bestSize = c, s
		}
	}
	in := make([]bool, n)
	for v := range in {
		in[v] = best >= 0 && comp[v] == best
	}
	return in
}
