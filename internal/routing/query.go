package routing

import (
	"math"
	"sync"
)

// label is a search's cost at a node: weight and duration in
// deciseconds, distance in decimeters. Start labels may be negative (a
// target's label is minus the part of its edge past it).
type label struct{ w, d, m int64 }

func (a label) add(w, d, m uint32) label {
	return label{a.w + int64(w), a.d + int64(d), a.m + int64(m)}
}

func (a label) plus(b label) label { return label{a.w + b.w, a.d + b.d, a.m + b.m} }

var noLabel = label{w: math.MaxInt64}

// phantom is a snapped location on a routing-graph node v (an edge in
// one direction; node is its number in the search, its rank in the
// hierarchy): start is its label where a route begins or ends there, and
// pos how far along the node, meters, it lies.
type phantom struct {
	v, node int32
	start   label
	pos     float64
}

// phantoms are the nodes a location may leave from (source) or arrive on
// (target): its edge in each direction the costing may use.
func (cg *costGraph) phantoms(g *Graph, s snap, source bool) []phantom {
	var out []phantom
	L := g.meters(s.edge)
	for dir := int32(0); dir < 2; dir++ {
		v := 2*s.edge + dir
		if !cg.keep[v] {
			continue
		}
		w, d, _ := g.edgeCost(v, cg.c)
		pos := s.pos // meters from the node's own start
		if dir == 1 {
			pos = L - s.pos
		}
		rest := 1.0 // part of the node still ahead of the location
		if L > 0 {
			rest = max(0, min(1, (L-pos)/L))
		}
		ahead := label{int64(math.Round(w * rest)), int64(math.Round(d * rest)), int64(math.Round(10 * (L - pos)))}
		if !source {
			ahead = label{-ahead.w, -ahead.d, -ahead.m}
		}
		out = append(out, phantom{v: v, node: cg.h.rank[v], start: ahead, pos: pos})
	}
	return out
}

// search is the scratch of one search: labels of the nodes it touched,
// and at the nodes it started from, the best label that came by an arc.
// The weights, which every step reads, lie apart from the durations and
// distances, which only an improvement writes.
type search struct {
	w       []int64
	dm      [][2]int64
	touched []int32
	queue   []int32 // a binary heap of nodes by w, pos[v] their places
	pos     []int32
	starts  []phantom
	lo, hi  int32   // the least and greatest start node
	alt     []label // per start, the best label reached by an arc
	// stop, set by a settle callback, ends run once the node settled
	// has been expanded
	stop bool
	// what backward searches placed, kept until their table is done
	placed []placed
	ends   []bucketEnd
}

const unreached = math.MaxInt64

func newSearch(n int) *search {
	s := &search{w: make([]int64, n), dm: make([][2]int64, n), pos: make([]int32, n)}
	for i := range s.w {
		s.w[i], s.pos[i] = unreached, -1
	}
	return s
}

func (s *search) reset() {
	for _, v := range s.touched {
		s.w[v], s.pos[v] = unreached, -1
	}
	s.touched = s.touched[:0]
	s.queue = s.queue[:0]
	s.stop = false
}

// enqueue puts v in the queue, or moves it up after its weight fell.
func (s *search) enqueue(v int32) {
	i := s.pos[v]
	if i < 0 {
		i = int32(len(s.queue))
		s.queue = append(s.queue, v)
	}
	q, w := s.queue, s.w
	for i > 0 {
		p := (i - 1) / 2
		if w[q[p]] <= w[v] {
			break
		}
		q[i] = q[p]
		s.pos[q[i]] = i
		i = p
	}
	q[i] = v
	s.pos[v] = i
}

// dequeue takes the node of least weight out of the queue.
func (s *search) dequeue() int32 {
	q, w := s.queue, s.w
	top := q[0]
	last := q[len(q)-1]
	q = q[:len(q)-1]
	s.queue = q
	s.pos[top] = -2 // settled
	if len(q) == 0 {
		return top
	}
	i, n := int32(0), int32(len(q))
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && w[q[c+1]] < w[q[c]] {
			c++
		}
		if w[last] <= w[q[c]] {
			break
		}
		q[i] = q[c]
		s.pos[q[i]] = i
		i = c
	}
	q[i] = last
	s.pos[last] = i
	return top
}

// label is node v's label; noLabel when the search has not reached it.
func (s *search) label(v int32) label {
	if s.w[v] == unreached {
		return noLabel
	}
	return label{s.w[v], s.dm[v][0], s.dm[v][1]}
}

func (s *search) set(v int32, l label) {
	if s.w[v] == unreached {
		s.touched = append(s.touched, v)
	}
	s.w[v], s.dm[v] = l.w, [2]int64{l.d, l.m}
}

// startIndex is which start node v is, or -1.
func (s *search) startIndex(v int32) int {
	if v < s.lo || v > s.hi {
		return -1
	}
	for i, p := range s.starts {
		if p.node == v {
			return i
		}
	}
	return -1
}

// run searches from starts over arcs (up for a forward search, down for
// a backward one), skipping a node another arc (stall) proves reached
// cheaper, and calls settle for every node it settles with its label.
func (s *search) run(starts []phantom, a, stall arcs, settle func(v int32, l label)) {
	s.reset()
	s.starts = starts
	s.alt = s.alt[:0]
	s.lo, s.hi = math.MaxInt32, -1
	for _, p := range starts {
		s.alt = append(s.alt, noLabel)
		s.lo, s.hi = min(s.lo, p.node), max(s.hi, p.node)
	}
	for _, p := range starts {
		if p.start.w < s.w[p.node] {
			s.set(p.node, p.start)
			s.enqueue(p.node)
		}
	}
	w := s.w
	for len(s.queue) > 0 && !s.stop {
		v := s.dequeue()
		k := w[v]
		stalled := false
		for _, x := range stall.tw[stall.first[v]:stall.first[v+1]] {
			if wu := w[x.to]; wu != unreached && wu+int64(x.w) < k {
				stalled = true
				break
			}
		}
		if stalled {
			continue
		}
		l := s.label(v)
		settle(v, l)
		for i := a.first[v]; i < a.first[v+1]; i++ {
			x := a.tw[i].to
			nw := k + int64(a.tw[i].w)
			if nw < w[x] && s.pos[x] != -2 {
				s.set(x, label{nw, l.d + int64(a.dur(i)), l.m + int64(a.m[i])})
				s.enqueue(x)
			}
			if si := s.startIndex(x); si >= 0 && nw < s.alt[si].w {
				s.alt[si] = label{nw, l.d + int64(a.dur(i)), l.m + int64(a.m[i])}
			}
		}
	}
}

// bucketEntry is what a backward search left at a node: the target and
// its label there; at a node the target lies on, also (in ends) its start
// position and the best label that came by an arc instead.
type bucketEntry struct {
	target int32
	end    int32 // index into the ends, or -1
	l      label
}

type bucketEnd struct {
	pos float64
	alt label
}

// placed is a bucket entry and the node it belongs to.
type placed struct {
	node int32
	e    bucketEntry
}

// tableScratch is what a table reuses: the bucket counts (one per node
// and one more), the buckets and the target ends.
type tableScratch struct {
	counts  []int32
	buckets []bucketEntry
	ends    []bucketEnd
}

// Cost is a route's distance in meters and time in seconds; OK is false
// when there is no route.
type Cost struct {
	Meters, Seconds float64
	OK              bool
	weight          int64 // what the route minimised, deciseconds
}

// table is the many-to-many query: one backward search per target leaves
// its labels in buckets at the nodes it settles, then one forward search
// per source meets them. nil phantoms (unsnapped locations) give no
// route.
func (cg *costGraph) table(srcs, dsts [][]phantom) [][]Cost {
	perTarget, perEnds, used := cg.backward(dsts)
	defer func() {
		for _, s := range used {
			cg.release(s)
		}
	}()
	sc := cg.takeTable()
	defer cg.giveTable(sc)
	b := layBuckets(sc, perTarget, perEnds, len(cg.h.up.first)-1)
	return cg.forward(srcs, len(dsts), b)
}

// backward runs the backward search of every target, in parallel. It
// returns, per target, what its search placed and its ends, and the
// searches it used: each worker's search keeps what it placed in its own
// buffers, which stay in use until those searches are released.
func (cg *costGraph) backward(dsts [][]phantom) ([][]placed, [][]bucketEnd, []*search) {
	h := cg.h
	perTarget := make([][]placed, len(dsts))
	perEnds := make([][]bucketEnd, len(dsts))
	var mu sync.Mutex
	var used []*search
	parallel(len(dsts), func() (func(int), func()) {
		s := cg.scratch()
		return func(t int) {
			if len(dsts[t]) == 0 {
				return
			}
			p0, e0 := len(s.placed), len(s.ends)
			s.run(dsts[t], h.down, h.up, func(v int32, l label) {
				e := bucketEntry{target: int32(t), end: -1, l: l}
				if si := s.startIndex(v); si >= 0 && l == s.starts[si].start {
					e.end = int32(len(s.ends) - e0)
					s.ends = append(s.ends, bucketEnd{pos: s.starts[si].pos})
				}
				s.placed = append(s.placed, placed{v, e})
			})
			out, ends := s.placed[p0:], s.ends[e0:]
			// the labels by an arc are final only now
			for _, x := range out {
				if x.e.end >= 0 {
					ends[x.e.end].alt = s.alt[s.startIndex(x.node)]
				}
			}
			perTarget[t], perEnds[t] = out, ends
		}, func() { mu.Lock(); used = append(used, s); mu.Unlock() }
	})
	return perTarget, perEnds, used
}

// buckets are the backward searches' entries laid out by node, and the
// target ends they refer to.
type buckets struct {
	first   []int32 // first[v] is where node v's bucket ends, first[v-1] where it starts
	entries []bucketEntry
	ends    []bucketEnd
}

// at is node v's bucket.
func (b buckets) at(v int32) []bucketEntry {
	lo := int32(0)
	if v > 0 {
		lo = b.first[v-1]
	}
	return b.entries[lo:b.first[v]]
}

// layBuckets lays what the backward searches placed out by node, over n
// nodes (a counting sort), in sc's buffers.
func layBuckets(sc *tableScratch, perTarget [][]placed, perEnds [][]bucketEnd, n int) buckets {
	first := sc.counts
	ends := sc.ends[:0]
	total := 0
	for t, es := range perTarget {
		base := int32(len(ends))
		for i := range es {
			first[es[i].node+1]++
			if es[i].e.end >= 0 {
				es[i].e.end += base
			}
		}
		ends = append(ends, perEnds[t]...)
		total += len(es)
	}
	for v := 1; v <= n; v++ {
		first[v] += first[v-1]
	}
	if cap(sc.buckets) < total {
		sc.buckets = make([]bucketEntry, total)
	}
	entries := sc.buckets[:total]
	for _, es := range perTarget {
		for _, x := range es {
			entries[first[x.node]] = x.e
			first[x.node]++
		}
	}
	sc.ends = ends
	return buckets{first: first, entries: entries, ends: ends}
}

// forward runs the forward search of every source, in parallel, meeting
// the buckets: the table's rows, one cost per target of nTargets.
func (cg *costGraph) forward(srcs [][]phantom, nTargets int, b buckets) [][]Cost {
	out := make([][]Cost, len(srcs))
	parallel(len(srcs), func() (func(int), func()) {
		s := cg.scratch()
		best := make([]label, nTargets)
		return func(i int) {
			row := make([]Cost, nTargets)
			out[i] = row
			if len(srcs[i]) == 0 {
				return
			}
			cg.meet(s, srcs[i], b, best)
			for t, l := range best {
				if l != noLabel {
					row[t] = costOf(l)
				}
			}
		}, func() { cg.release(s) }
	})
	return out
}

// meet runs the forward search from a source's phantoms and sets best,
// per target, to the least label of a route that meets its bucket entries.
func (cg *costGraph) meet(s *search, src []phantom, b buckets, best []label) {
	for t := range best {
		best[t] = noLabel
	}
	ends := b.ends
	var settledStarts []int32
	s.run(src, cg.h.up, cg.h.down, func(v int32, l label) {
		fStart, fPos := false, 0.0
		if si := s.startIndex(v); si >= 0 && l == s.starts[si].start {
			fStart, fPos = true, s.starts[si].pos
			settledStarts = append(settledStarts, v)
		}
		for _, e := range b.at(v) {
			if e.end >= 0 && fStart && ends[e.end].pos < fPos {
				// the target lies behind the source on the same
				// edge: the route must come round to it
				if c := cg.around(v, l, e.l, ends[e.end].alt); c.w < best[e.target].w {
					best[e.target] = c
				}
				continue
			}
			if l.w+e.l.w < best[e.target].w {
				best[e.target] = l.plus(e.l)
			}
		}
	})
	// a start node settled with its start label may also be
	// reached again by an arc (s.alt), which buckets there may
	// need when the target lies behind the source
	for _, v := range settledStarts {
		si := s.startIndex(v)
		a := s.alt[si]
		if a == noLabel {
			continue
		}
		for _, e := range b.at(v) {
			if e.end >= 0 && ends[e.end].pos < s.starts[si].pos {
				if c := a.plus(e.l); c.w < best[e.target].w {
					best[e.target] = c
				}
			}
		}
	}
}

// around is the cost of a route from a source on node v (label l, its
// start label) to a target on the same node behind it (its start label
// tl, and alt, its best label by an arc): on to the end of v and round
// by arcs to the target, or round through a loop back onto v.
func (cg *costGraph) around(v int32, l, tl, alt label) label {
	best := noLabel
	if alt != noLabel {
		best = l.plus(alt)
	}
	if lp, ok := cg.h.loop(v); ok {
		if c := l.add(lp.w, lp.d, lp.m).plus(tl); c.w < best.w {
			best = c
		}
	}
	return best
}

// parallel runs do(i) for i in [0, n) on two workers, each with its own
// scratch: mk makes a worker's do and the func that releases its scratch.
func parallel(n int, mk func() (func(int), func())) {
	const workers = 2
	if n <= 4 {
		do, done := mk()
		for i := 0; i < n; i++ {
			do(i)
		}
		done()
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do, done := mk()
			for i := range next {
				do(i)
			}
			done()
		}()
	}
	wg.Wait()
}

// minHeap is a binary heap of nodes by key.
type minHeap struct {
	keys  []int64
	nodes []int32
}

func (h *minHeap) len() int { return len(h.keys) }
func (h *minHeap) clear()   { h.keys, h.nodes = h.keys[:0], h.nodes[:0] }

func (h *minHeap) push(k int64, v int32) {
	h.keys, h.nodes = append(h.keys, k), append(h.nodes, v)
	i := len(h.keys) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.keys[p] <= h.keys[i] {
			break
		}
		h.keys[p], h.keys[i] = h.keys[i], h.keys[p]
		h.nodes[p], h.nodes[i] = h.nodes[i], h.nodes[p]
		i = p
	}
}

func (h *minHeap) pop() (int64, int32) {
	k, v := h.keys[0], h.nodes[0]
	last := len(h.keys) - 1
	h.keys[0], h.nodes[0] = h.keys[last], h.nodes[last]
	h.keys, h.nodes = h.keys[:last], h.nodes[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.keys[r] < h.keys[l] {
			m = r
		}
		if h.keys[i] <= h.keys[m] {
			break
		}
		h.keys[i], h.keys[m] = h.keys[m], h.keys[i]
		h.nodes[i], h.nodes[m] = h.nodes[m], h.nodes[i]
		i = m
	}
	return k, v
}

func costOf(l label) Cost {
	return Cost{Meters: max(0, float64(l.m)/10), Seconds: max(0, float64(l.d)/10), OK: true, weight: l.w}
}
