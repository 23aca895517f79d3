// Package mapmatch matches GPS points to the road network online, as they
// arrive, with the hidden Markov model of Newson and Krumm (2009), the
// one OSRM's /match and Valhalla's Meili use:
//
//   - candidates: the nearest place on every road segment within a
//     radius of the point (4 times its accuracy, at least 50 m, at most
//     200 m; the nearest 10 roads), found in a 100 m grid over the
//     segments;
//   - emission: a Gaussian of the distance from the point to the road,
//     sigma the point's accuracy (at least 4 m; 10 m when not given);
//   - transition: an exponential of |route distance on the graph −
//     straight-line distance| between two successive points, plus the
//     meters the route's turns and slow roads cost (see turnMeters: a
//     driver goes straight on and keeps to the faster roads) (beta
//     20 m), the route found by a Dijkstra over the costing's directed
//     roads, by those meters with the costs, bounded to twice the
//     straight line plus 300 m of road (at most 5 km); a route that
//     turns round on the previous point's road,
//     against the direction it was travelled, loses UTurn (12) more;
//     a point up to 3 sigmas behind the previous one on the same road
//     has not moved (a vehicle standing, or noise) and is held at the
//     previous point's place, so that a stop adds no distance;
//   - Viterbi over a window: a point's road is decided, and final, as
//     soon as the best paths to every live candidate of the newest point
//     (those within e⁻¹⁰ of the best that keep to the roads already
//     decided) pass through the same candidate of it, with at least one
//     point after it: no later point changes that choice, short of one
//     lifting a candidate left out as e¹⁰ times less likely (the
//     Viterbi's convergence point; see converged); the point is then
//     smoothed (below) and decided if its smoothed place lies a sigma of
//     its fix or more inside its road, or nearer an end where the path
//     on the other side of it is on the same way, class and limit (see
//     settledOn), else it waits. At the latest it
//     is decided when Lag (default 4) more points have arrived that moved
//     (a point held where the previous one stood does not count, while
//     the window holds fewer than 4 × Lag points, unless it came too soon
//     after a point that moved to tell a stand from noise: see
//     noiseHeld), by the best path then,
//     or when the trace is flushed; a last point decided alone at the
//     very end of its road goes on to a road the path enters there when
//     that lies nearer its fix (see lastOnward);
//   - the decided point's place is smoothed along the path with its
//     neighbours by time (see smooth.go): the points before it and those
//     still in the window after it, fewer when its paths met early, and
//     its road is the one there.
//
// A point with no road within its radius is unmatched and cuts the
// trace: the points before it are decided at once, the ones after it
// start afresh. So does a point no candidate of the previous one can
// reach within the bound (a GPS jump).
//
// The package holds no HTTP and no global state. A Matcher is read-only
// and serves any number of Traces at once; a Trace is one vehicle's and
// is not safe for concurrent use.
package mapmatch

import (
	"math"
	"sync"

	"github.com/fleethub/fleethub/internal/routing"
)

// DefaultLag is Config.Lag's default: at a fix a second a point's road is
// final at most about 4 s after it arrived, moving (5 would take a second
// more and, on the simulated drives of docs/routing.md, change nothing at
// fixes 5 and 30 s apart; at a fix a second it put 0.1 to 0.5 % more of
// them on the right road before the paths' meeting decided most points
// sooner).
const DefaultLag = 4

// Config tunes a Matcher; zero fields take the defaults.
type Config struct {
	Lag       int     // moved points after which a point's road is final at the latest: 4 (see due)
	Beta      float64 // meters, the transition's scale: 20
	Candidate int     // roads considered per point: 10
	MaxRouteM float64 // the route search's bound: 5,000 m
	// MaxSpeed bounds the route between two fixes whose times are known
	// and differ: at most MaxSpeed m/s over their interval, plus what
	// their noise and snapping may add (see transition): 55 (198 km/h)
	MaxSpeed float64
	UTurn    float64 // the log-likelihood a transition loses for turning round on the road: 12
}

// Matcher matches traces onto one costing's roads.
type Matcher struct {
	net  *network
	cfg  Config
	pool sync.Pool // *paths
	// the points after the oldest one the window holds before the
	// meeting of its paths may decide it (see converged): 1
	convergeAfter int
}

// New is a Matcher onto the roads costing c may travel.
func New(r Roads, c routing.Costing, cfg Config) *Matcher {
	if cfg.Lag <= 0 {
		cfg.Lag = DefaultLag
	}
	if cfg.Beta <= 0 {
		cfg.Beta = 20
	}
	if cfg.UTurn <= 0 {
		cfg.UTurn = 12
	}
	if cfg.Candidate <= 0 {
		cfg.Candidate = 10
	}
	if cfg.MaxRouteM <= 0 {
		cfg.MaxRouteM = 5000
	}
	if cfg.MaxSpeed <= 0 {
		cfg.MaxSpeed = 55
	}
	m := &Matcher{net: newNetwork(r, c), cfg: cfg, convergeAfter: 1}
	m.pool.New = func() any { return newPaths(m.net.junction) }
	return m
}

// sigmaOf is the standard deviation of point p's error on each axis:
// its accuracy, 10 m when not given, at least 4 m.
func sigmaOf(p Point) float64 {
	if !(p.Accuracy > 0) {
		return 10
	}
	return max(p.Accuracy, 4)
}

// servicePenalty is the log-likelihood a transition loses for leaving a
// road for a service road (a parking aisle, a driveway, an alley).
const servicePenalty = 3

// heldSlack is how far back along its road, in sigmas of the later
// point, a point may lie behind the previous one and be read as not
// having moved (a vehicle standing, or the noise of two fixes: their
// difference has sqrt(2) sigmas) rather than as having turned round:
// it is held at the previous point's place.
const heldSlack = 3

// timeSlack is how many sigmas of each fix the route between two fixes
// may exceed what Config.MaxSpeed allows over their interval.
const timeSlack = 3

// Point is a GPS fix: where, how accurate (meters, 0 not known) and
// when (seconds from any fixed epoch, e.g. Unix time; 0 not known). With
// times, a point's place along its road is smoothed with its neighbours'
// (see smooth.go).
type Point struct {
	Lat, Lon float64
	Accuracy float64
	Time     float64
	// Speed is the speed over the ground the device measured (m/s),
	// read only when HasSpeed: the smoother takes it as a measurement
	// of the speed along the path (see rts), so that a fix's place along
	// its road is read with its neighbours' more tightly.
	Speed    float64
	HasSpeed bool
	// Heading is the course over the ground the device measured,
	// degrees clockwise from north, read only when HasHeading and the
	// point's measured speed is at least headingSpeed (a receiver's
	// course is noise while it stands): a candidate road whose direction
	// at the place disagrees with it is less likely (see headingScore).
	Heading    float64
	HasHeading bool
}

// Match is where a point lies on the roads: its road (way, class, speed
// limit in the direction travelled), the place on it, how far the point
// is from it and the confidence of the choice (0 to 1: the chosen
// road's share of the likelihood of the point's candidates given its fix
// and the path up to it; low where roads are near each other or the
// later points changed the choice).
// Matched false: no road within its radius, or the point is not a valid
// location.
type Match struct {
	Index      int // the point's place in its trace, from 0
	Matched    bool
	Edge       int
	Backward   bool // travelled against the edge's points
	WayID      int64
	Class      routing.RoadClass
	LimitKmh   float64
	Posted     bool
	Lat, Lon   float64 // the place on the road
	Meters     float64 // from the point to the road
	Confidence float64
	off        float64 // the place's meters from the edge's start
	bwd        bool    // travelled against the edge's points
	// moving: reached from the point before it, so bwd is the direction
	// it was travelled (not the first point of a trace or after a cut)
	moving bool
}

// step is one point of the window with its candidates.
type step struct {
	index int
	x, y  float64
	t     float64 // the fix's time (0 not known)
	speed float64 // the measured speed, m/s (NaN not known)
	sigma float64
	held  bool // its best candidate is held at the previous point's place
	cands []candidate
}

// Trace is one vehicle's trace being matched.
type Trace struct {
	m      *Matcher
	next   int // the index of the next point
	window []step
	// the decided points the smoother reads, oldest first, and the last
	// decided one: its step (without candidates), its place as reported
	// and that place's meters along the path from its chosen candidate's
	hist    []histPoint
	last    step
	lastC   candidate
	hasLast bool
	lastU   float64
	chain   []int32
	// broken counts the points decided on a path that leaves the roads
	// decided before them (no candidate of the newest step has a best
	// path that keeps to them)
	broken int
}

// Trace starts a trace.
func (m *Matcher) Trace() *Trace { return &Trace{m: m} }

// Add takes the next point and returns the matches that became final,
// in the order of their points.
func (t *Trace) Add(p Point) []Match {
	idx := t.next
	t.next++
	n := t.m.net
	if math.IsNaN(p.Lat) || math.IsNaN(p.Lon) || p.Lat < -90 || p.Lat > 90 || p.Lon < -180 || p.Lon > 180 {
		return append(t.Flush(), Match{Index: idx})
	}
	sigma := sigmaOf(p)
	radius := min(max(4*sigma, 50), 200)
	x, y := n.plane(p.Lat, p.Lon)
	cands := n.candidates(x, y, radius, t.m.cfg.Candidate, nil)
	if len(cands) == 0 {
		return append(t.Flush(), Match{Index: idx})
	}
	heading, useHeading := headingOf(p)
	for i := range cands {
		z := cands[i].dist / sigma
		cands[i].score = -0.5 * z * z
		cands[i].bwd = !n.fwd[cands[i].edge]
		if useHeading {
			cands[i].score += n.headingScore(&cands[i], heading)
		}
	}
	var out []Match
	held := false
	if len(t.window) > 0 {
		var ok bool
		if held, ok = t.transition(cands, x, y, sigma, p.Time); !ok {
			out = t.Flush() // nothing of the previous point reaches this one
		}
	}
	speed := math.NaN()
	if p.HasSpeed && p.Speed >= 0 && p.Speed < 100 {
		speed = p.Speed
	}
	t.window = append(t.window, step{index: idx, x: x, y: y, t: p.Time, speed: speed, sigma: sigma, held: held, cands: cands})
	// The oldest point is decided when the window is full (due), or
	// when its paths have met (converged) and its smoothed place lies
	// settledSigmas or more inside its road; otherwise it waits.
	for len(t.window) > 0 {
		if t.due() {
			out = append(out, t.decide())
			continue
		}
		if !t.converged() {
			break
		}
		mt, ok := t.decideIf(true)
		if !ok {
			break
		}
		out = append(out, mt)
	}
	return out
}

// standLag is how many times Lag points the window may hold while the
// vehicle stands.
const standLag = 4

// due says the oldest point of the window is to be decided whatever its
// paths: Lag points after it have moved (points held where the previous
// one stood do not count while the vehicle stands, so that where it went
// on decides where it stood; see noiseHeld for those that do), or the
// window holds standLag times Lag points. It bounds the wait; the paths'
// meeting (converged) usually decides a point sooner.
func (t *Trace) due() bool {
	lag := t.m.cfg.Lag
	if len(t.window) <= lag {
		return false
	}
	if len(t.window) > standLag*lag {
		return true
	}
	moved := 0
	for s := 1; s < len(t.window); s++ {
		if st := &t.window[s]; !st.held || noiseHeld(st, &t.window[s-1]) {
			moved++
		}
	}
	return moved >= lag
}

// crawlSpeed (m/s, 18 km/h) is the speed below which a vehicle's
// advance between two fixes may hide in their noise (see noiseHeld).
const crawlSpeed = 5

// noiseHeld says the held point st, whose predecessor in the window is
// prev, counts as having moved: prev was not held, and st came so soon
// after it (within 2 sigmas of st's fix at crawlSpeed) that a vehicle
// going on slowly would often seem to stand or step back by the fixes'
// noise alone. At a fix a second and 5 m of noise, a vehicle at 6 m a
// second has one fix in five or so behind the one before it; counting
// those as a stand held the points before them for another upload.
// Fixes 5 s or more apart are never read so: a vehicle that moved
// advanced beyond their noise, so one that seems to stand stood.
func noiseHeld(st, prev *step) bool {
	if prev.held || st.t == 0 || prev.t == 0 {
		return false
	}
	return (st.t-prev.t)*crawlSpeed <= 2*st.sigma
}

// livePrune is how far below the best candidate of the newest step, in
// log-likelihood, a candidate is no longer read as live when the window
// looks for where its paths meet: e⁻¹⁰, one chance in 22,000.
const livePrune = 10

// settledSigmas is how far from the ends of its road, in sigmas of its
// fix, a point decided where its paths meet must be smoothed to: nearer,
// the fixes still to come may smooth it onto the road before or after
// (see settledOn).
const settledSigmas = 1

// settledOn says the smoothed place c of the window's oldest point
// (of sigma) is settled on its road: it lies at least settledSigmas from
// each end of its edge, or nearer an end where the path goes on, or came
// from, through that end onto a road of the same way, class and speed
// limit (the fixes still to come may move it onto that edge, but not
// onto another road). linked says the path comes from the last decided
// point.
func (t *Trace) settledOn(c *candidate, sigma float64, linked bool) bool {
	n := t.m.net
	l := n.length(c.edge)
	toExit, fromEntry := l-c.off, c.off
	if c.bwd {
		toExit, fromEntry = c.off, l-c.off
	}
	margin := settledSigmas * sigma
	road := n.roads.EdgeRoad(int(c.edge), c.bwd)
	same := func(b *candidate) bool {
		r := n.roads.EdgeRoad(int(b.edge), b.bwd)
		return r.WayID == road.WayID && r.Class == road.Class && r.LimitKmh == road.LimitKmh && r.Posted == road.Posted
	}
	if toExit < margin { // the path's next road, where a later point lies on it
		var next *candidate
		for s := 1; s < len(t.window) && t.chain[s] >= 0; s++ {
			if b := &t.window[s].cands[t.chain[s]]; b.edge != c.edge {
				next = b
				break
			}
		}
		if next == nil || n.entryOf(next) != n.exitOf(c) || !same(next) {
			return false
		}
	}
	if fromEntry < margin { // the road of the last decided point
		if !linked || t.lastC.edge != c.edge && (n.exitOf(&t.lastC) != n.entryOf(c) || !same(&t.lastC)) {
			return false
		}
	}
	return true
}

// converged says the oldest point of the window, with at least
// convergeAfter points after it, has its road already: every live
// candidate of the newest step (a finite score at most livePrune below
// the best, on a path that keeps to the roads already decided) comes by
// its best path from the same candidate of the oldest step. Whatever
// points come next, the best path then goes through one of the newest
// step's candidates, so through that one: deciding the point now
// chooses what deciding it later would (the Viterbi's convergence
// point, Šrámek, Brejová and Vinař 2007), unless a candidate left out
// below livePrune comes to lead. Its place along the path is smoothed
// with fewer fixes after it; see Add.
func (t *Trace) converged() bool {
	w := t.window
	if len(w) <= t.m.convergeAfter {
		return false
	}
	newest, first := w[len(w)-1].cands, w[0].cands
	top := math.Inf(-1)
	for j := range newest {
		top = max(top, newest[j].score)
	}
	from := int32(-1)
	for j := range newest {
		if math.IsInf(newest[j].score, -1) || newest[j].score < top-livePrune {
			continue
		}
		k := t.origin(j)
		if k < 0 || first[k].dead {
			continue
		}
		if from >= 0 && k != from {
			return false
		}
		from = k
	}
	return from >= 0
}

// transition adds to the new candidates' emission scores the best path
// from the previous step's; false when none is reachable. held says the
// best of them is held at the previous point's place.
func (t *Trace) transition(cands []candidate, x, y, sigma, at float64) (stood, ok bool) {
	n := t.m.net
	prev := &t.window[len(t.window)-1]
	straight := math.Hypot(x-prev.x, y-prev.y)
	bound := t.m.bound(straight, prev.t, at, prev.sigma, sigma)
	var bestBuf, routeBuf [16]float64 // on the stack for the usual 10 candidates
	var backBuf [16]int32
	var bwdBuf, heldBuf [16]bool
	var best, routeD []float64
	var back []int32
	var bwd, held []bool
	if len(cands) <= len(bestBuf) {
		best, back, bwd, held = bestBuf[:len(cands)], backBuf[:len(cands)], bwdBuf[:len(cands)], heldBuf[:len(cands)]
		routeD = routeBuf[:len(cands)]
	} else {
		best, back, routeD = make([]float64, len(cands)), make([]int32, len(cands)), make([]float64, len(cands))
		bwd, held = make([]bool, len(cands)), make([]bool, len(cands))
	}
	for j := range best {
		best[j], back[j] = math.Inf(-1), -1
	}
	p := t.m.pool.Get().(*paths)
	defer t.m.pool.Put(p)
	p.aim(n, cands)
	for i := range prev.cands {
		a := &prev.cands[i]
		if math.IsInf(a.score, -1) {
			continue
		}
		p.from(n, a, bound)
		for j := range cands {
			r := p.to(n, a, &cands[j], heldSlack*sigma)
			if math.IsInf(r.d, 1) || r.d > bound {
				continue
			}
			s := a.score - (math.Abs(r.d-straight)+r.turns)/t.m.cfg.Beta
			if n.service[cands[j].edge] && !n.service[a.edge] {
				s -= servicePenalty
			}
			if r.turned {
				s -= t.m.cfg.UTurn
			}
			if s > best[j] {
				best[j], back[j], bwd[j], held[j], routeD[j] = s, int32(i), r.bwd, r.how == viaHeld, r.d
			}
		}
	}
	top, topJ := math.Inf(-1), 0
	for j := range cands {
		c := &cands[j]
		c.score += best[j]
		c.back, c.bwd, c.moving, c.routeD = back[j], bwd[j], back[j] >= 0, routeD[j]
		if held[j] { // not moved: at the previous point's place
			a := &prev.cands[back[j]]
			c.off, c.x, c.y = a.off, a.x, a.y
		}
		if c.score > top {
			top, topJ = c.score, j
		}
	}
	if math.IsInf(top, -1) {
		return false, false
	}
	for j := range cands { // keep the scores near 0
		cands[j].score -= top
	}
	return held[topJ], true
}

// bound is how long the route between two fixes straight meters apart
// may be: twice the straight line and 300 m (at most MaxRouteM), and,
// where both fixes' times are known (ta, tb; 0 not known) and differ, no
// longer than a vehicle drives at MaxSpeed in the time between them,
// with timeSlack of each fix's sigma (sa, sb: the candidates' places may
// lie that far from where the vehicle was) and 50 m (a junction's
// snapping, a road's bends) to spare.
func (m *Matcher) bound(straight, ta, tb, sa, sb float64) float64 {
	b := min(2*straight+300, m.cfg.MaxRouteM)
	if dt := tb - ta; ta != 0 && tb != 0 && dt > 0 {
		b = min(b, m.cfg.MaxSpeed*dt+timeSlack*(sa+sb)+50)
	}
	return b
}

// Flush decides every point still in the window (the trace ends, or is
// cut) and returns their matches.
func (t *Trace) Flush() []Match {
	var out []Match
	for len(t.window) > 0 {
		out = append(out, t.decide())
	}
	t.hist, t.hasLast = t.hist[:0], false
	return out
}

// Pending is the number of points waiting for their road to be final.
func (t *Trace) Pending() int { return len(t.window) }

// decide makes the oldest point of the window final: its candidate on
// the best path from the newest step that keeps to the roads already
// decided.
func (t *Trace) decide() Match {
	mt, _ := t.decideIf(false)
	return mt
}

// decideIf is decide; with settled, only when the point's smoothed place
// is settled on its road (settledOn), and false (the trace unchanged)
// when it is not.
func (t *Trace) decideIf(settled bool) (Match, bool) {
	j, kept := t.bestNewestKept()
	if !kept {
		t.broken++
	}
	t.chain = t.path(j, t.chain)
	chosen := max(t.chain[0], 0)
	st := t.window[0]
	if len(t.window) == 1 && t.chain[0] >= 0 {
		chosen = t.lastOnward(chosen)
	}
	c := st.cands[chosen]
	var saved [smoothHistory + 1]histPoint // what smooth changes
	nh, lastU, hasLast := copy(saved[:], t.hist), t.lastU, t.hasLast
	t.smooth(&c, t.chain[0] >= 0 && !c.dead)
	if settled && !t.settledOn(&c, st.sigma, hasLast && t.chain[0] >= 0 && !c.dead) {
		t.hist = append(t.hist[:0], saved[:nh]...)
		t.lastU, t.hasLast = lastU, hasLast
		return Match{}, false
	}
	t.window = t.window[1:]
	if len(t.window) > 0 { // the next step's paths now start here
		for j := range t.window[0].cands {
			c := &t.window[0].cands[j]
			c.dead = c.dead || c.back != chosen
			c.back = -1
		}
	}
	mt := t.m.match(st.index, &c, confidence(st.cands, chosen))
	t.last, t.lastC, t.hasLast = st, c, true
	t.last.cands = nil
	return mt, true
}

// path is the candidate of every step of the window on the path to the
// newest step's candidate j, oldest first; -1 where the path was cut.
func (t *Trace) path(j int, buf []int32) []int32 {
	buf = buf[:0]
	for range t.window {
		buf = append(buf, -1)
	}
	k := int32(j)
	for s := len(t.window) - 1; s >= 0 && k >= 0; s-- {
		buf[s] = k
		if s > 0 {
			k = t.window[s].cands[k].back
		}
	}
	return buf
}

// origin is the oldest step's candidate on the path to the newest
// step's candidate j; -1 where the path was cut.
func (t *Trace) origin(j int) int32 {
	k := int32(j)
	for s := len(t.window) - 1; s > 0 && k >= 0; s-- {
		k = t.window[s].cands[k].back
	}
	return k
}

// bestNewest is the newest step's candidate with the best path among
// those that keep to the roads already decided, or the best of all when
// none does.
func (t *Trace) bestNewest() int {
	j, _ := t.bestNewestKept()
	return j
}

// bestNewestKept is bestNewest, and whether its path keeps to the roads
// already decided.
func (t *Trace) bestNewestKept() (int, bool) {
	last := t.window[len(t.window)-1].cands
	first := t.window[0].cands
	bestJ, bestAlive := 0, -1
	for j := range last {
		if last[j].score > last[bestJ].score {
			bestJ = j
		}
		if k := t.origin(j); k >= 0 && !first[k].dead && (bestAlive < 0 || last[j].score > last[bestAlive].score) {
			bestAlive = j
		}
	}
	if bestAlive >= 0 {
		return bestAlive, true
	}
	return bestJ, false
}

// confidence is the chosen candidate's share of its step's likelihood
// as it stood when the point arrived (its fix and the path before it).
func confidence(cands []candidate, chosen int32) float64 {
	total := 0.0
	for _, c := range cands {
		if !math.IsInf(c.score, -1) {
			total += math.Exp(c.score)
		}
	}
	if total == 0 || math.IsInf(cands[chosen].score, -1) {
		return 0
	}
	return math.Exp(cands[chosen].score) / total
}

func (m *Matcher) match(idx int, c *candidate, conf float64) Match {
	road := m.net.roads.EdgeRoad(int(c.edge), c.bwd)
	lat, lon := m.net.latLon(c.x, c.y)
	return Match{Index: idx, Matched: true, Edge: int(c.edge), Backward: c.bwd, WayID: road.WayID, Class: road.Class,
		LimitKmh: road.LimitKmh, Posted: road.Posted, Lat: lat, Lon: lon, Meters: c.dist, Confidence: conf, off: c.off, bwd: c.bwd, moving: c.moving}
}

// Tentative is the road of every point still waiting in the window as
// the best path says now; unlike Add's matches, these may change as more
// points arrive. The trace is not changed.
func (t *Trace) Tentative() []Match {
	if len(t.window) == 0 {
		return nil
	}
	out := make([]Match, len(t.window))
	k := int32(t.bestNewest())
	for s := len(t.window) - 1; s >= 0; s-- {
		st := &t.window[s]
		k = max(k, 0)
		out[s] = t.m.match(st.index, &st.cands[k], confidence(st.cands, k))
		k = st.cands[k].back
	}
	return out
}

// Added is the number of points the trace has taken.
func (t *Trace) Added() int { return t.next }

// RoadAt is the road nearest a lone location (no trace around it): its
// class and speed limit, the lower of its two directions' where both are
// open, as the direction of travel is not known; ok false when no road
// lies within the radius an accuracy of accuracy meters gives (0: not
// known, read as 10 m).
func (m *Matcher) RoadAt(lat, lon, accuracy float64) (limitKmh float64, class string, ok bool) {
	if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return 0, "", false
	}
	if !(accuracy > 0) {
		accuracy = 10
	}
	n := m.net
	x, y := n.plane(lat, lon)
	var buf [1]candidate
	cands := n.candidates(x, y, min(max(4*max(accuracy, 4), 50), 200), 1, buf[:0])
	if len(cands) == 0 {
		return 0, "", false
	}
	e := int(cands[0].edge)
	limit := math.Inf(1)
	var road routing.Road
	for d, open := range [2]bool{n.fwd[e], n.bwd[e]} {
		if r := n.roads.EdgeRoad(e, d == 1); open && r.LimitKmh < limit {
			limit, road = r.LimitKmh, r
		}
	}
	return road.LimitKmh, road.Class.String(), true
}

// lastOnward is the candidate of the last point of the window when it is
// decided alone (the trace ends or is cut): chosen, unless chosen stands
// at the end of its road in the direction travelled, where a candidate on
// a road the path enters there lies nearer the fix; then the best of
// those. With no later point, the route into a point just past a turn
// weighs against it (longer than the straight line, and the turn's cost)
// with nothing after it to weigh against the place before the turn.
func (t *Trace) lastOnward(chosen int32) int32 {
	n := t.m.net
	st := &t.window[0]
	c := &st.cands[chosen]
	if !c.moving {
		return chosen
	}
	toExit := n.length(c.edge) - c.off
	if c.bwd {
		toExit = c.off
	}
	if toExit > 1 {
		return chosen
	}
	exit := n.exitOf(c)
	best := chosen
	for j := range st.cands {
		b := &st.cands[j]
		if b.dead || !b.moving || math.IsInf(b.score, -1) || b.edge == c.edge || n.entryOf(b) != exit || b.dist >= c.dist {
			continue
		}
		if best == chosen || b.score > st.cands[best].score {
			best = int32(j)
		}
	}
	return best
}
