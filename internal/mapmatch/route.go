package mapmatch

import "math"

// paths is the scratch of a bounded Dijkstra over the junctions: the
// distance to each junction reached, and which were touched so that a
// reset costs what the search cost.
type paths struct {
	dist    []float64
	via     []int32 // the directed edge each junction was reached by; -1: from the search's candidate
	touched []int32
	heap    []item
}

type item struct {
	d float64
	j int32
}

func newPaths(junctions int) *paths {
	p := &paths{dist: make([]float64, junctions), via: make([]int32, junctions)}
	for i := range p.dist {
		p.dist[i] = math.Inf(1)
	}
	return p
}

func (p *paths) reset() {
	for _, j := range p.touched {
		p.dist[j] = math.Inf(1)
	}
	p.touched, p.heap = p.touched[:0], p.heap[:0]
}

func (p *paths) reach(j int32, d float64, via int32) {
	if d >= p.dist[j] {
		return
	}
	if math.IsInf(p.dist[j], 1) {
		p.touched = append(p.touched, j)
	}
	p.dist[j], p.via[j] = d, via
	p.heap = append(p.heap, item{d, j})
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

// from runs the search from candidate a, leaving its edge the ways it
// may be travelled, up to bound meters.
func (p *paths) from(n *network, a *candidate, bound float64) {
	p.reset()
	if n.fwd[a.edge] {
		p.reach(n.head[a.edge], n.length(a.edge)-a.off, -1)
	}
	if n.bwd[a.edge] {
		p.reach(n.tail[a.edge], a.off, -1)
	}
	for len(p.heap) > 0 {
		it := p.pop()
		if it.d > p.dist[it.j] {
			continue // a stale entry
		}
		if it.d > bound {
			break
		}
		for _, de := range n.out[n.outFirst[it.j]:n.outFirst[it.j+1]] {
			e := de / 2
			to := n.head[e]
			if de%2 == 1 {
				to = n.tail[e]
			}
			p.reach(to, it.d+n.length(e), de)
		}
	}
}

// sameEdgeSlack is how far back along a one-way edge a later point may
// lie and still be reached on it directly: the noise of two fixes.
const sameEdgeSlack = 30

// to is the route distance from the search's candidate a to candidate
// b, and whether b is reached against its edge's points; +Inf when not
// reached within the bound.
func (p *paths) to(n *network, a, b *candidate) (float64, bool) {
	d, bwd, _ := p.toVia(n, a, b)
	return d, bwd
}

// How a route enters the target's edge.
const (
	viaSameEdge = iota // along the edge both candidates lie on
	viaTail            // from the edge's tail junction, forward
	viaHead            // from the edge's head junction, backward
)

// toVia is to, and how the route enters b's edge.
func (p *paths) toVia(n *network, a, b *candidate) (float64, bool, int) {
	best, bwd, how := math.Inf(1), false, viaSameEdge
	if a.edge == b.edge {
		d := b.off - a.off
		switch {
		case d >= 0 && n.fwd[b.edge]:
			return d, false, viaSameEdge
		case d <= 0 && n.bwd[b.edge]:
			return -d, true, viaSameEdge
		case math.Abs(d) <= sameEdgeSlack:
			best, bwd = math.Abs(d), !n.fwd[b.edge]
		}
	}
	if n.fwd[b.edge] {
		if d := p.dist[n.tail[b.edge]] + b.off; d < best {
			best, bwd, how = d, false, viaTail
		}
	}
	if n.bwd[b.edge] {
		if d := p.dist[n.head[b.edge]] + n.length(b.edge) - b.off; d < best {
			best, bwd, how = d, true, viaHead
		}
	}
	return best, bwd, how
}
