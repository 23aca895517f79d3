package mapmatch

import "math"

// paths is the scratch of a bounded Dijkstra over the junctions: the
// distance to each junction reached, and which were touched so that a
// reset costs what the search cost.
type paths struct {
	dist    []float64 // meters along the roads
	cost    []float64 // dist with the turns' and slow roads' costs (see turnMeters): what the search minimises
	via     []int32   // the directed edge each junction was reached by; -1: from the search's candidate
	in      []int32   // the directed edge each junction was entered by, the candidate's own included
	turned  []bool    // reached by leaving the candidate's edge behind it: turning round
	touched []int32
	heap    []item
	// the junctions the searches are for (goal[j] == gen) and how many:
	// a search stops once it has settled them all
	goal  []uint32
	gen   uint32
	goals int
}

type item struct {
	d float64
	j int32
}

func newPaths(junctions int) *paths {
	p := &paths{dist: make([]float64, junctions), cost: make([]float64, junctions), via: make([]int32, junctions),
		in: make([]int32, junctions), turned: make([]bool, junctions), goal: make([]uint32, junctions)}
	for i := range p.dist {
		p.dist[i], p.cost[i] = math.Inf(1), math.Inf(1)
	}
	return p
}

func (p *paths) reset() {
	for _, j := range p.touched {
		p.dist[j], p.cost[j] = math.Inf(1), math.Inf(1)
	}
	p.touched, p.heap = p.touched[:0], p.heap[:0]
}

func (p *paths) reach(j int32, d, cost float64, via, in int32, turned bool) {
	if cost >= p.cost[j] {
		return
	}
	if math.IsInf(p.cost[j], 1) {
		p.touched = append(p.touched, j)
	}
	p.dist[j], p.cost[j], p.via[j], p.in[j], p.turned[j] = d, cost, via, in, turned
	p.heap = append(p.heap, item{cost, j})
	for i := len(p.heap) - 1; i > 0; { // sift up
		up := (i - 1) / 2
		if p.heap[up].d <= p.heap[i].d {
			break
		}
		p.heap[up], p.heap[i] = p.heap[i], p.heap[up]
		i = up
	}
}

func (p *paths) pop() item {
	top := p.heap[0]
	last := len(p.heap) - 1
	p.heap[0] = p.heap[last]
	p.heap = p.heap[:last]
	for i := 0; ; { // sift down
		l, s := 2*i+1, i
		if l < last && p.heap[l].d < p.heap[s].d {
			s = l
		}
		if l+1 < last && p.heap[l+1].d < p.heap[s].d {
			s = l + 1
		}
		if s == i {
			break
		}
		p.heap[s], p.heap[i] = p.heap[i], p.heap[s]
		i = s
	}
	return top
}

// aim makes the searches that follow stop once they have settled the
// junctions through which the routes enter the edges of cands.
func (p *paths) aim(n *network, cands []candidate) {
	p.gen++
	if p.gen == 0 { // wrapped: forget every old mark
		clear(p.goal)
		p.gen = 1
	}
	p.goals = 0
	mark := func(j int32) {
		if p.goal[j] != p.gen {
			p.goal[j] = p.gen
			p.goals++
		}
	}
	for i := range cands {
		if e := cands[i].edge; n.fwd[e] {
			mark(n.tail[e])
		}
		if e := cands[i].edge; n.bwd[e] {
			mark(n.head[e])
		}
	}
}

// from runs the search from candidate a, leaving its edge the ways it
// may be travelled, up to bound meters; leaving it behind a moving
// candidate is turning round.
func (p *paths) from(n *network, a *candidate, bound float64) {
	p.reset()
	settled := 0
	if n.fwd[a.edge] {
		d, de := n.length(a.edge)-a.off, 2*a.edge
		p.reach(n.head[a.edge], d, d*(1+n.slow[de]), -1, de, a.moving && a.bwd)
	}
	if n.bwd[a.edge] {
		d, de := a.off, 2*a.edge+1
		p.reach(n.tail[a.edge], d, d*(1+n.slow[de]), -1, de, a.moving && !a.bwd)
	}
	for len(p.heap) > 0 {
		it := p.pop()
		if it.d > p.cost[it.j] {
			continue // a stale entry
		}
		if p.dist[it.j] > bound {
			break
		}
		if p.goal[it.j] == p.gen {
			if settled++; settled == p.goals {
				break // every junction aimed at is reached by its shortest route
			}
		}
		d, in, turned := p.dist[it.j], p.in[it.j], p.turned[it.j]
		for _, de := range n.out[n.outFirst[it.j]:n.outFirst[it.j+1]] {
			e := de / 2
			to := n.head[e]
			if de%2 == 1 {
				to = n.tail[e]
			}
			p.reach(to, d+n.lens[e], it.d+n.dcost[de]+n.turn(in, de), de, de, turned)
		}
	}
}

// route is how a candidate is reached from the search's: meters along
// the roads, whether against its edge's points, how it enters its edge,
// and whether the route turns round (on the previous candidate's edge,
// against its direction of travel).
type route struct {
	d      float64
	turns  float64 // the meters its turns and slow roads cost (see turnMeters)
	bwd    bool
	how    int
	turned bool
}

// How a route enters the target's edge.
const (
	viaSameEdge = iota // along the edge both candidates lie on
	viaHeld            // not at all: the target is a little behind on the same edge
	viaTail            // from the edge's tail junction, forward
	viaHead            // from the edge's head junction, backward
)

// to is the route from the search's candidate a to candidate b; d is
// +Inf when b is not reached within the bound. A b a little behind a
// on their edge (within slack) is held at a's place.
func (p *paths) to(n *network, a, b *candidate, slack float64) route {
	r := route{d: math.Inf(1)}
	if a.edge == b.edge {
		d := b.off - a.off
		switch {
		case a.moving && a.bwd && d <= 0, a.moving && !a.bwd && d >= 0:
			return route{math.Abs(d), math.Abs(d) * n.slow[2*b.edge+int32(b2i(a.bwd))], a.bwd, viaSameEdge, false}
		case a.moving && math.Abs(d) <= slack:
			return route{0, 0, a.bwd, viaHeld, false}
		case d >= 0 && n.fwd[b.edge]:
			r = route{d, d * n.slow[2*b.edge], false, viaSameEdge, a.moving}
		case d <= 0 && n.bwd[b.edge]:
			r = route{-d, -d * n.slow[2*b.edge+1], true, viaSameEdge, a.moving}
		case math.Abs(d) <= slack:
			return route{0, 0, !n.fwd[b.edge], viaHeld, false}
		}
	}
	if j := n.tail[b.edge]; n.fwd[b.edge] && !math.IsInf(p.cost[j], 1) {
		tc := p.cost[j] - p.dist[j] + n.turn(p.in[j], 2*b.edge) + b.off*n.slow[2*b.edge]
		if d := p.dist[j] + b.off; d+tc < r.d+r.turns {
			r = route{d, tc, false, viaTail, p.turned[j]}
		}
	}
	if j := n.head[b.edge]; n.bwd[b.edge] && !math.IsInf(p.cost[j], 1) {
		tc := p.cost[j] - p.dist[j] + n.turn(p.in[j], 2*b.edge+1) + (n.length(b.edge)-b.off)*n.slow[2*b.edge+1]
		if d := p.dist[j] + n.length(b.edge) - b.off; d+tc < r.d+r.turns {
			r = route{d, tc, true, viaHead, p.turned[j]}
		}
	}
	return r
}
