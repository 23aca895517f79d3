package routing

import (
	"container/heap"
	"math"
	"slices"
)

// hierarchy is a contraction hierarchy of a routing graph: every node it
// keeps has a rank (rank[v], -1 for a node left out), and the hierarchy
// numbers its nodes by rank; up holds, for each node, the arcs to higher-ranked nodes, and
// down, for each node, the arcs that reach it from higher-ranked nodes
// (stored from the node's side, so a backward search walks them). A
// shortest path is always one climb in up followed by one descent along
// down; shortcuts stand for the paths through the lower nodes they skip.
// loops holds, per node, the cheapest way back to itself through lower
// nodes, which no up-down path can express.
type hierarchy struct {
	rank     []int32
	up, down arcs
	loopNode []int32 // sorted
	loopCost []cost3
}

// loop is node v's way back to itself through lower nodes, if any.
func (h *hierarchy) loop(v int32) (cost3, bool) {
	i, ok := slices.BinarySearch(h.loopNode, v)
	if !ok {
		return cost3{}, false
	}
	return h.loopCost[i], true
}

// cost3 is a path's weight and duration (deciseconds) and distance
// (decimeters).
type cost3 struct{ w, d, m uint32 }

type chArc struct {
	to      int32
	w, d, m uint32
	hops    uint32 // arcs of the routing graph it stands for
}

// contractor builds a hierarchy by contracting the nodes one at a time,
// cheapest first, adding a shortcut between two neighbours of the node
// whenever the path through it is the only shortest one.
type contractor struct {
	out, in [][]chArc
	done    []bool
	depth   []float32 // how deep in the hierarchy a node would sit
	loops   map[int32]cost3
	// witness search scratch
	dist    []uint32
	touched []int32
	targets []int32
	mark    []uint32 // mark[t] == epoch: t is a target of the current search
	epoch   uint32
	adds    []shortcut
	pq      minHeap
	settle  witnessLimits
}

// witnessLimits are how many nodes a witness search may settle while
// ordering the nodes and while contracting them.
type witnessLimits struct{ simulate, contract int }

// witnessFor are the witness limits of a costing. Cars and trucks, whose
// speeds differ from road to road, keep shallow searches; bicycles and
// pedestrians, which go at one speed on most roads, meet many routes of
// equal cost between two places, which a shallow search misses and pays
// for in shortcuts: deeper searches give them a tenth fewer shortcuts and
// queries about a quarter quicker for the same contraction time.
func witnessFor(c Costing) witnessLimits {
	if c == Bicycle || c == Pedestrian {
		return witnessLimits{simulate: 32, contract: 200}
	}
	return witnessLimits{simulate: 16, contract: 60}
}

func contract(a arcs, keep []bool, settle witnessLimits) *hierarchy {
	n := int32(len(a.first) - 1)
	c := &contractor{out: make([][]chArc, n), in: make([][]chArc, n), done: make([]bool, n),
		depth: make([]float32, n), loops: map[int32]cost3{}, dist: make([]uint32, n), mark: make([]uint32, n), settle: settle}
	for i := range c.dist {
		c.dist[i] = math.MaxUint32
	}
	for u := int32(0); u < n; u++ {
		if !keep[u] {
			c.done[u] = true
			continue
		}
		for k := a.first[u]; k < a.first[u+1]; k++ {
			v := a.tw[k].to
			if !keep[v] {
				continue
			}
			if v == u {
				c.addLoop(u, cost3{a.tw[k].w, a.d[k], a.m[k]})
				continue
			}
			c.addArc(chArc{v, a.tw[k].w, a.d[k], a.m[k], 1}, u)
		}
	}
	h := &hierarchy{rank: make([]int32, n)}
	upL, downL := make([][]chArc, n), make([][]chArc, n)
	order := &prioHeap{}
	prio := make([]float32, n)
	dirty := make([]bool, n)
	for v := int32(0); v < n; v++ {
		if c.done[v] {
			h.rank[v] = -1
			continue
		}
		prio[v] = c.priority(v)
		heap.Push(order, prioItem{prio[v], v})
	}
	rank := int32(0)
	for order.Len() > 0 {
		it := heap.Pop(order).(prioItem)
		v := it.node
		if c.done[v] || it.prio != prio[v] {
			continue
		}
		// lazy update: a node whose neighbourhood changed since its
		// priority was computed is contracted only if it is still the
		// cheapest
		if dirty[v] {
			dirty[v] = false
			if p := c.priority(v); p != prio[v] {
				prio[v] = p
				if order.Len() > 0 && p > (*order)[0].prio {
					heap.Push(order, prioItem{p, v})
					continue
				}
			}
		}
		c.contractNode(v, false)
		h.rank[v] = rank
		rank++
		upL[v], downL[v] = c.out[v], c.in[v]
		c.done[v] = true
		for _, x := range c.out[v] {
			c.in[x.to] = removeArc(c.in[x.to], v)
			c.depth[x.to] = max(c.depth[x.to], c.depth[v]+1)
			dirty[x.to] = true
		}
		for _, u := range c.in[v] {
			c.out[u.to] = removeArc(c.out[u.to], v)
			c.depth[u.to] = max(c.depth[u.to], c.depth[v]+1)
			dirty[u.to] = true
		}
		c.out[v], c.in[v] = nil, nil
	}
	h.up, h.down = packArcs(upL, h.rank, rank), packArcs(downL, h.rank, rank)
	for v := range c.loops {
		h.loopNode = append(h.loopNode, h.rank[v])
	}
	slices.Sort(h.loopNode)
	byRank := make(map[int32]cost3, len(c.loops))
	for v, l := range c.loops {
		byRank[h.rank[v]] = l
	}
	for _, r := range h.loopNode {
		h.loopCost = append(h.loopCost, byRank[r])
	}
	h.up.dropDurations()
	h.down.dropDurations()
	return h
}

// packArcs lays the arcs out by rank: the hierarchy's nodes are numbered
// by rank, so that a search, which only climbs, reads memory that lies
// together.
func packArcs(l [][]chArc, rank []int32, n int32) arcs {
	byRank := make([]int32, n)
	for v, r := range rank {
		if r >= 0 {
			byRank[r] = int32(v)
		}
	}
	a := arcs{first: make([]int32, n+1)}
	for r, v := range byRank {
		a.first[r+1] = a.first[r] + int32(len(l[v]))
	}
	total := a.first[n]
	a.tw, a.d, a.m = make([]toW, total), make([]uint32, total), make([]uint32, total)
	for r, v := range byRank {
		for i, x := range l[v] {
			k := a.first[r] + int32(i)
			a.tw[k], a.d[k], a.m[k] = toW{rank[x.to], x.w}, x.d, x.m
		}
	}
	return a
}

func removeArc(l []chArc, v int32) []chArc {
	for i := 0; i < len(l); i++ {
		if l[i].to == v {
			l[i] = l[len(l)-1]
			l = l[:len(l)-1]
			i--
		}
	}
	return l
}

func (c *contractor) addLoop(u int32, k cost3) {
	if old, ok := c.loops[u]; !ok || k.w < old.w {
		c.loops[u] = k
	}
}

// addArc adds the arc a from u, or lowers the one there.
func (c *contractor) addArc(a chArc, u int32) {
	v := a.to
	back := a
	back.to = u
	for i := range c.out[u] {
		if c.out[u][i].to == v {
			if a.w < c.out[u][i].w {
				c.out[u][i] = a
				for j := range c.in[v] {
					if c.in[v][j].to == u {
						c.in[v][j] = back
					}
				}
			}
			return
		}
	}
	c.out[u] = append(c.out[u], a)
	c.in[v] = append(c.in[v], back)
}

// priority orders the contraction: how many arcs contracting v would add
// for each it removes, counted as arcs and as the routing-graph arcs they
// stand for, plus its depth, so that the hierarchy stays flat and sparse.
func (c *contractor) priority(v int32) float32 {
	added, addedHops := c.contractNode(v, true)
	removed, removedHops := len(c.in[v])+len(c.out[v]), uint32(0)
	for _, a := range c.in[v] {
		removedHops += a.hops
	}
	for _, a := range c.out[v] {
		removedHops += a.hops
	}
	return 2*float32(added)/float32(max(removed, 1)) + float32(addedHops)/float32(max(removedHops, 1)) + c.depth[v]
}

// contractNode finds the shortcuts contracting v needs; it adds them
// unless simulate, and returns how many there are.
func (c *contractor) contractNode(v int32, simulate bool) (int, uint32) {
	limit := c.settle.contract
	if simulate {
		limit = c.settle.simulate
	}
	count, hops := 0, uint32(0)
	var maxOut uint32
	for _, x := range c.out[v] {
		maxOut = max(maxOut, x.w)
	}
	c.adds = c.adds[:0]
	for _, u := range c.in[v] {
		// the targets still to settle: v's successors other than u
		c.targets = c.targets[:0]
		for _, x := range c.out[v] {
			if x.to != u.to {
				c.targets = append(c.targets, x.to)
			}
		}
		if len(c.targets) > 0 {
			c.witness(u.to, v, u.w+maxOut, limit)
		}
		for _, x := range c.out[v] {
			if x.to == u.to {
				if !simulate {
					c.addLoop(u.to, cost3{u.w + x.w, u.d + x.d, u.m + x.m})
				}
				continue
			}
			via := u.w + x.w
			if c.dist[x.to] <= via {
				continue
			}
			count++
			hops += u.hops + x.hops
			if !simulate {
				c.adds = append(c.adds, shortcut{u.to, chArc{x.to, via, u.d + x.d, u.m + x.m, u.hops + x.hops}})
			}
		}
		c.reset()
	}
	for _, s := range c.adds {
		c.addArc(s.a, s.u)
	}
	return count, hops
}

type shortcut struct {
	u int32
	a chArc
}

// witness runs a Dijkstra from s over the nodes not yet contracted,
// avoiding v, until it passes limit, has settled settle nodes or has
// settled every target; c.dist then holds the distances found
// (MaxUint32: none).
func (c *contractor) witness(s, v int32, limit uint32, settle int) {
	// v counts as reached at no cost, so no path goes through it
	c.dist[v] = 0
	c.touched = append(c.touched, v)
	c.epoch++
	for _, t := range c.targets {
		c.mark[t] = c.epoch
	}
	c.dist[s] = 0
	c.touched = append(c.touched, s)
	c.pq.clear()
	c.pq.push(0, s)
	settled, left := 0, len(c.targets)
	for c.pq.len() > 0 && settled < settle && left > 0 {
		k, u := c.pq.pop()
		if uint32(k) != c.dist[u] {
			continue
		}
		if uint32(k) > limit {
			break
		}
		settled++
		if c.mark[u] == c.epoch {
			left--
		}
		for _, x := range c.out[u] {
			nd := uint32(k) + x.w
			if nd < c.dist[x.to] {
				if c.dist[x.to] == math.MaxUint32 {
					c.touched = append(c.touched, x.to)
				}
				c.dist[x.to] = nd
				c.pq.push(int64(nd), x.to)
			}
		}
	}
}

func (c *contractor) reset() {
	for _, t := range c.touched {
		c.dist[t] = math.MaxUint32
	}
	c.touched = c.touched[:0]
}

type prioItem struct {
	prio float32
	node int32
}
type prioHeap []prioItem

func (h prioHeap) Len() int { return len(h) }
func (h prioHeap) Less(i, j int) bool {
	return h[i].prio < h[j].prio || h[i].prio == h[j].prio && h[i].node < h[j].node
}
func (h prioHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *prioHeap) Push(x any)   { *h = append(*h, x.(prioItem)) }
func (h *prioHeap) Pop() any     { o := *h; it := o[len(o)-1]; *h = o[:len(o)-1]; return it }
