package mapmatch

import (
	"math"

	"github.com/fleethub/fleethub/internal/routing"
)

// Segment is a stretch of a matched route on one road, travelled in one
// direction: the road's way, class and speed limit in that direction,
// its length and its geometry. Start and End place it along the trace
// in units of fixes: 3.25 is a quarter of the route from fix 3 to fix 4,
// so that a caller with the fixes' times can time it.
type Segment struct {
	WayID      int64
	Class      routing.RoadClass
	LimitKmh   float64
	Posted     bool
	Meters     float64
	Lat, Lon   []float64
	Start, End float64
	Confidence float64 // the lowest of the fixes it lies between
}

// Run is an unbroken stretch of matched fixes, First to Last, and the
// route on the roads through them. An unmatched fix, or one its
// predecessor's road does not reach within the bound of the search (a
// GPS jump), ends a run.
type Run struct {
	First, Last int
	Meters      float64
	Segments    []Segment
}

// Result is a whole trace matched: every fix's match, in order, and the
// runs of matched fixes with their routes. A fix the route holds at the
// previous fix's place (not moved) is matched there, so that the routes'
// lengths and geometry are those of the places matched.
type Result struct {
	Matches []Match
	Runs    []Run
}

// Match matches a whole trace at once: each fix's road decided as a
// Trace decides it, fix by fix (where its paths meet, or after the
// window; the last ones when the trace ends), and the route between
// successive matched fixes on the roads.
func (m *Matcher) Match(pts []Point) Result {
	tr := m.Trace()
	ms := make([]Match, 0, len(pts))
	for _, p := range pts {
		ms = append(ms, tr.Add(p)...)
	}
	return m.result(pts, append(ms, tr.Flush()...))
}

// result is the trace pts with its matches ms (one a fix, in order) and
// the route between successive matched fixes.
func (m *Matcher) result(pts []Point, ms []Match) Result {
	res := Result{Matches: ms}
	p := m.pool.Get().(*paths)
	defer m.pool.Put(p)
	var run *Run
	var b segmentBuilder
	closeRun := func() {
		if run != nil {
			run.Segments = b.finish()
			res.Runs = append(res.Runs, *run)
			run = nil
		}
	}
	for i, mt := range res.Matches {
		if !mt.Matched {
			closeRun()
			continue
		}
		if run != nil {
			prev := res.Matches[i-1]
			pieces, meters, held, ok := m.path(p, pts[i-1], pts[i], prev, mt)
			if held { // not moved: where the route leaves it, as the next leg starts there
				res.Matches[i] = m.heldAt(mt, prev, pts[i])
			}
			if ok {
				b.add(m, pieces, meters, float64(i-1), min(prev.Confidence, mt.Confidence))
				run.Last, run.Meters = i, run.Meters+meters
				continue
			}
			closeRun()
		}
		run = &Run{First: i, Last: i}
		b = segmentBuilder{}
	}
	closeRun()
	return res
}

// piece is a stretch of one edge, from one place to another (meters from
// the edge's start) in the order travelled.
type piece struct {
	edge     int32
	from, to float64
}

// path is the route from match a to match b (of the fixes pa and pb),
// as the matcher's transitions find it, its pieces in order and its
// length; false when b is not reached within the search's bound. a's
// direction of travel holds only where a was reached from a point before
// it, as in the transitions. held says the route holds b at a's place (a
// little behind it on their edge, the way it was travelled: not moved),
// where b is reported elsewhere: b is then to be placed at a's place,
// where the route of no length leaves it.
func (m *Matcher) path(p *paths, pa, pb Point, a, b Match) (pcs []piece, meters float64, held, ok bool) {
	n := m.net
	xa, ya := n.plane(pa.Lat, pa.Lon)
	xb, yb := n.plane(pb.Lat, pb.Lon)
	ca := candidate{edge: int32(a.Edge), off: a.off, bwd: a.bwd, moving: a.moving}
	cb := candidate{edge: int32(b.Edge), off: b.off}
	bound := m.bound(math.Hypot(xb-xa, yb-ya), pa.Time, pb.Time, sigmaOf(pa), sigmaOf(pb))
	pcs, meters, how, ok := m.route(p, xa, ya, xb, yb, sigmaOf(pb), bound, &ca, &cb)
	return pcs, meters, ok && how == viaHeld && b.off != a.off, ok
}

// heldAt is match b of fix pb held where match a is, on the same edge:
// at its place and in its direction of travel (the vehicle has neither
// moved nor turned), so on its road's side.
func (m *Matcher) heldAt(b, a Match, pb Point) Match {
	n := m.net
	x, y := n.along(int32(a.Edge), a.off)
	xb, yb := n.plane(pb.Lat, pb.Lon)
	h := a
	h.Index, h.Confidence, h.Meters, h.moving = b.Index, b.Confidence, math.Hypot(x-xb, y-yb), b.moving
	return h
}

// pieces is the route from candidate a to candidate b (of the fixes at
// (xa, ya) and (xb, yb), b's sigma sigmaB), as the matcher's transitions
// find it, its pieces in order and its length; false when b is not
// reached within the search's bound. A b held at a's place (viaHeld) is
// an empty piece there, of no length.
func (m *Matcher) pieces(p *paths, xa, ya, xb, yb, sigmaB float64, ca, cb *candidate) ([]piece, float64, bool) {
	pcs, d, _, ok := m.route(p, xa, ya, xb, yb, sigmaB, m.bound(math.Hypot(xb-xa, yb-ya), 0, 0, 0, 0), ca, cb)
	return pcs, d, ok
}

// route is pieces with how the route enters b's edge (viaSameEdge,
// viaHeld, viaTail or viaHead), within bound meters (Matcher.bound).
func (m *Matcher) route(p *paths, xa, ya, xb, yb, sigmaB, bound float64, ca, cb *candidate) ([]piece, float64, int, bool) {
	n := m.net
	p.aim(n, []candidate{*cb})
	p.from(n, ca, bound)
	r := p.to(n, ca, cb, heldSlack*sigmaB)
	d, how := r.d, r.how
	if math.IsInf(d, 1) || d > bound {
		return nil, 0, how, false
	}
	if how == viaHeld {
		return []piece{{cb.edge, ca.off, ca.off}}, 0, how, true
	}
	if how == viaSameEdge {
		return []piece{{cb.edge, ca.off, cb.off}}, d, how, true
	}
	var rev []piece
	j := n.tail[cb.edge]
	rev = append(rev, piece{cb.edge, 0, cb.off})
	if how == viaHead {
		j = n.head[cb.edge]
		rev[0].from = n.length(cb.edge)
	}
	for range n.junction + 1 {
		de := p.via[j]
		if de < 0 {
			rev = append(rev, startPiece(n, p, ca, j))
			break
		}
		e := de / 2
		if de%2 == 0 {
			rev, j = append(rev, piece{e, 0, n.length(e)}), n.tail[e]
		} else {
			rev, j = append(rev, piece{e, n.length(e), 0}), n.head[e]
		}
	}
	out := make([]piece, 0, len(rev))
	for k := len(rev) - 1; k >= 0; k-- {
		if rev[k].from != rev[k].to {
			out = append(out, rev[k])
		}
	}
	return out, d, how, true
}

// startPiece is the stretch of a's edge from a to junction j, where the
// search left it.
func startPiece(n *network, p *paths, a *candidate, j int32) piece {
	l := n.length(a.edge)
	fwd := j == n.head[a.edge] && n.fwd[a.edge]
	if fwd && j == n.tail[a.edge] && n.bwd[a.edge] { // a loop: the nearer way round
		fwd = math.Abs(p.dist[j]-(l-a.off)) <= math.Abs(p.dist[j]-a.off)
	}
	if fwd {
		return piece{a.edge, a.off, l}
	}
	return piece{a.edge, a.off, 0}
}

// segmentBuilder joins pieces on one road into segments.
type segmentBuilder struct {
	segs []Segment
}

// add appends the pieces of the route from fix at to fix at+1, meters
// long, whose fixes' lower confidence is conf.
func (b *segmentBuilder) add(m *Matcher, pieces []piece, meters, at, conf float64) {
	n := m.net
	w := 0.0
	for _, pc := range pieces {
		l := math.Abs(pc.to - pc.from)
		road := n.roads.EdgeRoad(int(pc.edge), pc.to < pc.from)
		start, end := at, at+1
		if meters > 0 {
			start, end = at+w/meters, at+(w+l)/meters
		}
		w += l
		k := len(b.segs) - 1
		if k < 0 || !sameRoad(&b.segs[k], road) {
			b.segs = append(b.segs, Segment{WayID: road.WayID, Class: road.Class, LimitKmh: road.LimitKmh, Posted: road.Posted,
				Start: start, Confidence: conf})
			k++
		}
		s := &b.segs[k]
		s.Meters += l
		s.End = end
		s.Confidence = min(s.Confidence, conf)
		s.Lat, s.Lon = n.stretch(pc, s.Lat, s.Lon)
	}
}

func sameRoad(s *Segment, r routing.Road) bool {
	return s.WayID == r.WayID && s.Class == r.Class && s.LimitKmh == r.LimitKmh && s.Posted == r.Posted
}

// finish is the segments built, the empty ones left out.
func (b *segmentBuilder) finish() []Segment {
	out := b.segs[:0]
	for _, s := range b.segs {
		if len(s.Lat) >= 2 {
			out = append(out, s)
		}
	}
	return out
}

// stretch appends the geometry of piece pc to lat and lon, without
// repeating the last location already there.
func (n *network) stretch(pc piece, lat, lon []float64) ([]float64, []float64) {
	add := func(x, y float64) {
		la, lo := n.latLon(x, y)
		if k := len(lat) - 1; k >= 0 && math.Abs(lat[k]-la) < 1e-9 && math.Abs(lon[k]-lo) < 1e-9 {
			return
		}
		lat, lon = append(lat, la), append(lon, lo)
	}
	a, b := n.ptFirst[pc.edge], n.ptFirst[pc.edge+1]-1
	add(n.along(pc.edge, pc.from))
	if pc.from < pc.to {
		for k := a + 1; k < b; k++ {
			if n.cum[k] > pc.from && n.cum[k] < pc.to {
				add(n.x[k], n.y[k])
			}
		}
	} else {
		for k := b - 1; k > a; k-- {
			if n.cum[k] < pc.from && n.cum[k] > pc.to {
				add(n.x[k], n.y[k])
			}
		}
	}
	add(n.along(pc.edge, pc.to))
	return lat, lon
}

// along is the place off meters from edge e's start.
func (n *network) along(e int32, off float64) (float64, float64) {
	a, b := n.ptFirst[e], n.ptFirst[e+1]-1
	for k := a; k < b; k++ {
		if off <= n.cum[k+1] || k == b-1 {
			seg := n.cum[k+1] - n.cum[k]
			t := 0.0
			if seg > 0 {
				t = max(0, min(1, (off-n.cum[k])/seg))
			}
			return n.x[k] + t*(n.x[k+1]-n.x[k]), n.y[k] + t*(n.y[k+1]-n.y[k])
		}
	}
	return n.x[b], n.y[b]
}
