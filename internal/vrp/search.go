package vrp

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The search's parameters, those of SISR (Christiaens and Vanden Berghe,
// 2020) where it has them: about avgRemoved stops removed per ruin, in
// strings of at most maxString stops; a split string keeps a run of stops
// inside the removed string, growing it with probability splitGrow; each
// insertion position is skipped with probability blink.
const (
	avgRemoved = 10
	maxString  = 10
	splitRate  = 0.5
	splitGrow  = 0.5
	blink      = 0.01
	// The temperatures run from tStart to tEnd times the mean price of a
	// return trip to a stop.
	tStart = 0.6
	tEnd   = 0.003
)

// solution is a set of routes, one per vehicle, and the stops left out.
// Its routes are shared with other solutions and never changed.
type solution struct {
	routes []*route
	absent []int32
	where  []int32 // per stop: its vehicle, or -1
	cost   float64 // arcs, vehicle costs, penalties and extras
	used   int     // routes with stops
	// longest is the longest route's minutes, with Problem.Balance: set
	// by total, raised by every insertion, not lowered by removals.
	longest float64
}

// fork is a copy of s whose routes the worker may extend in place once
// it has rebuilt them (a new generation).
func (w *worker) fork(s *solution) *solution {
	w.gen++
	w.work += int64(len(s.where)/4 + len(s.routes))
	if c := w.spare; c != nil {
		w.spare = nil
		c.routes = append(c.routes[:0], s.routes...)
		c.absent = append(c.absent[:0], s.absent...)
		c.where = append(c.where[:0], s.where...)
		c.cost, c.used, c.longest = s.cost, s.used, s.longest
		return c
	}
	return s.clone()
}

// drop hands back cand, the candidate of the worker's last fork, when no
// plan keeps it: fork fills its lists again, and the routes it built
// (its generation's, without breaks) are built again in place (free), so
// that an iteration whose candidate is refused allocates next to
// nothing for the next one. It changes no plan: what is reused is
// referenced by nothing else.
func (w *worker) drop(cand *solution) {
	for _, r := range cand.routes {
		if r.gen == w.gen && r.gen != 0 && r.brk == nil && len(w.free) < len(cand.routes) {
			w.free = append(w.free, r)
		}
	}
	w.spare = cand
}

// discard hands r, a route the worker built and no plan holds, to free
// (a route of stops, without breaks). Its list of stops goes with it
// only when insert or without made it (own): build keeps its caller's.
func (w *worker) discard(r *route, own bool) {
	if r != nil && len(r.stops) > 0 && r.brk == nil && len(w.free) < len(w.t.empty) {
		if !own {
			r.stops = nil
		}
		w.free = append(w.free, r)
	}
}

func (s *solution) clone() *solution {
	return &solution{routes: append([]*route(nil), s.routes...), absent: append([]int32(nil), s.absent...),
		where: append([]int32(nil), s.where...), cost: s.cost, used: s.used, longest: s.longest}
}

// worker is one search: its own random stream and its share of work.
type worker struct {
	t        *tables
	rng      *rand.Rand
	work     int64 // positions checked and route positions rebuilt
	deadline time.Time
	now      time.Time // read every few iterations
	stopped  bool      // the deadline came
	cut      bool      // the clock, not the work, ended or paced a phase
	iters    int
	gen      uint64 // the iteration whose candidate may change its own routes
	// unblinked is how many insertion positions are checked before the
	// next one is skipped (blinks).
	unblinked int
	stamp     []int32 // per vehicle class: the insertion that last tried it empty
	stampNow  int32
	near      []int32 // per vehicle: the stamp of the insertion whose neighbours it serves
	// fleetShare is the percentage of the work after construction that
	// route minimisation may use, with MinimizeVehicles.
	fleetShare int
	// fleetFloor is the route count at which route minimisation gave
	// up (fleetStall), or 0: the stalls of the annealing do not try to
	// go below it.
	fleetFloor int
	hot        float64 // times tStart: the worker's starting temperature
	removed    []int32
	in1, in2   []place3   // SWAP*'s cheapest gaps (swapStar)
	keys       []orderKey // the recreation order's keys (order)
	todo       []int32    // the stops recreate places
	ruined     []int32
	pool       *pool    // the routes of its best plans, when kept
	runners    *runners // its cheapest plans, when Options.Alternatives asks for them
	elites     *elites  // its distinct cheapest plans, for the crossover, when kept
	// spare is a dropped candidate and free the routes it built, which
	// the next candidates reuse (drop).
	spare *solution
	free  []*route
	// crossWork is the work the annealings leave to the crossover, and
	// crossFrom the time they end at then.
	crossWork int64
	crossFrom time.Time
	// annealings counts the annealings restarts ran (for the tests).
	annealings int
}

func newWorker(t *tables, i int, seed uint64, deadline time.Time) *worker {
	w := &worker{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), deadline: deadline, stamp: make([]int32, t.classes)}
	w.fleetShare, w.hot = style(i)
	w.blinks()
	return w
}

// budget is a share of a worker's search: work (positions checked and
// rebuilt), iterations and time, whichever runs out first. Its progress
// follows work and iterations, so that a seed repeats; only when the
// clock runs more than lag ahead of them does it follow the clock, and
// the worker is then marked cut.
type budget struct {
	work      int64
	iters     int
	until     time.Time
	fromWork  int64
	fromIters int
	from      time.Time
}

// lag is how far the clock may run ahead of work before it sets the pace.
const lag = 0.1

// share is the fraction f of what is left of b, from now.
func (w *worker) share(b budget, f float64) budget {
	now := time.Now()
	return budget{work: w.work + int64(float64(b.work-w.work)*f), iters: w.iters + int(float64(b.iters-w.iters)*f),
		until: now.Add(time.Duration(float64(b.until.Sub(now)) * f)), fromWork: w.work, fromIters: w.iters, from: now}
}

// out reports whether the worker has spent b, counting one iteration;
// the clock is read every 8 calls.
func (w *worker) out(b *budget) bool {
	if w.work >= b.work || w.iters >= b.iters || w.stopped {
		return true
	}
	w.iters++
	if w.iters%8 == 0 {
		w.now = time.Now()
		if !w.now.Before(b.until) {
			w.stopped = !w.now.Before(w.deadline)
			w.cut = true
			return true
		}
	}
	return false
}

// progress is how much of b is spent, from 0 to 1.
func (w *worker) progress(b *budget) float64 {
	f := max(float64(w.work-b.fromWork)/float64(max(1, b.work-b.fromWork)), float64(w.iters-b.fromIters)/float64(max(1, b.iters-b.fromIters)))
	if !w.now.IsZero() {
		if ft := float64(w.now.Sub(b.from)) / float64(max(1, b.until.Sub(b.from))); ft > f+lag {
			w.cut = true
			f = ft
		}
	}
	return min(f, 1)
}

// total sets s.cost and s.used from its routes and absent stops.
func (w *worker) total(s *solution) {
	t := w.t
	s.cost, s.used, s.longest = 0, 0, 0
	for _, r := range s.routes {
		if len(r.stops) > 0 {
			s.cost += r.cost + t.vehicleCost
			s.used++
			if t.extras {
				s.cost += r.extra
				s.longest = fmax(s.longest, t.minutes(r))
			}
		}
	}
	for _, c := range s.absent {
		s.cost += t.penalty[c]
	}
	if t.p.Balance > 0 {
		s.cost += t.p.Balance * s.longest
	}
}

// set replaces vehicle v's route in s.
func (w *worker) set(s *solution, v int32, r *route) {
	s.routes[v] = r
	w.work += int64(len(r.stops) + 2)
}

// setHere is set, with every stop of r noted as on vehicle v's route:
// for a route that took stops from another.
func (w *worker) setHere(s *solution, v int32, r *route) {
	w.set(s, v, r)
	for _, x := range r.stops {
		s.where[x] = v
	}
}

// construct inserts every stop into empty routes.
func (w *worker) construct() *solution {
	t := w.t
	w.gen++
	s := &solution{routes: append([]*route(nil), t.empty...), where: make([]int32, t.n)}
	all := make([]int32, t.n)
	for i := range all {
		all[i] = int32(i)
		s.where[i] = -1
	}
	w.recreate(s, all, true)
	// A blink may skip an idle vehicle's only position and leave out a
	// stop that fits nowhere else; route minimisation starts only from a
	// plan that serves every stop it can, so those are offered again.
	for try := 0; try < 3 && len(s.absent) > 0; try++ {
		w.recreate(s, nil, true)
	}
	w.total(s)
	return s
}

// ruin removes strings of stops from routes near a random stop (SISR's
// adjacent string removal) and returns them.
func (w *worker) ruin(s *solution) []int32 { return w.ruinNear(s, -1) }

// ruinNear is ruin around stop seed, which may be absent, or around a
// random served stop when seed is negative.
func (w *worker) ruinNear(s *solution, seed int32) []int32 {
	t := w.t
	w.removed, w.ruined = w.removed[:0], w.ruined[:0]
	if s.used == 0 {
		return w.removed
	}
	served := t.n - len(s.absent)
	lsMax := math.Min(maxString, float64(served)/float64(s.used))
	ksMax := 4*avgRemoved/(1+lsMax) - 1
	ks := int(w.rng.Float64()*ksMax) + 1
	if seed < 0 {
		seed = int32(w.rng.IntN(t.n))
		for s.where[seed] < 0 {
			seed = int32(w.rng.IntN(t.n))
		}
	}
	for _, c := range t.adj[seed] {
		if len(w.ruined) >= ks {
			break
		}
		v := s.where[c]
		if v < 0 || contains32(w.ruined, v) {
			continue
		}
		w.ruined = append(w.ruined, v)
		w.removeString(s, v, c, lsMax)
	}
	return w.removed
}

func contains32(l []int32, x int32) bool {
	for _, y := range l {
		if y == x {
			return true
		}
	}
	return false
}

// removeString removes from vehicle v's route a string of stops around
// stop c, or such a string but for a run of stops kept inside it.
func (w *worker) removeString(s *solution, v, c int32, lsMax float64) {
	r := s.routes[v]
	m := len(r.stops)
	lt := int(w.rng.Float64()*math.Min(float64(m), lsMax)) + 1
	pos := 0
	for r.stops[pos] != c {
		pos++
	}
	keep := 0
	if m > lt && w.rng.Float64() < splitRate {
		keep = 1
		for keep < m-lt && w.rng.Float64() < splitGrow {
			keep++
		}
	}
	span := lt + keep
	// The string [from, from+span) holds pos.
	lo, hi := max(0, pos-span+1), min(pos, m-span)
	from := lo + w.rng.IntN(hi-lo+1)
	keepFrom := from
	if keep > 0 {
		keepFrom = from + w.rng.IntN(lt+1)
	}
	drop := func(k int) bool {
		return k >= from && k < from+span && (k < keepFrom || k >= keepFrom+keep)
	}
	for k, x := range r.stops {
		if drop(k) {
			w.removed = append(w.removed, x)
			s.where[x] = -1
		}
	}
	nr := w.t.without(r, drop, w.gen, &w.free)
	if len(nr.stops) == 0 {
		s.used--
	}
	w.set(s, v, nr)
}

// order sorts stops for recreation: priority first, then at random, by
// demand, far from the depot first or near first (weights 4, 4, 2, 1).
func (w *worker) order(stops []int32) {
	tb := w.t
	ps := tb.p.Stops
	ks := w.keys[:0]
	k := w.rng.IntN(11)
	for _, c := range stops {
		var key float64
		switch {
		case k < 4:
			key = w.rng.Float64()
		case k < 8:
			d := tb.demand[c]
			key = -(d[0] + d[1] + d[2])
		case k < 10:
			key = -tb.fromDepot[c]
		default:
			key = tb.fromDepot[c]
		}
		ks = append(ks, orderKey{prio: ps[c].Priority, key: key, c: c})
	}
	// A total order (ties go to the lower stop), so that any sort gives
	// the same sequence: a ruin's few stops by insertion, in line.
	if len(ks) <= 16 {
		for i := 1; i < len(ks); i++ {
			for j := i; j > 0 && ks[j].before(ks[j-1]); j-- {
				ks[j], ks[j-1] = ks[j-1], ks[j]
			}
		}
	} else {
		slices.SortFunc(ks, func(a, b orderKey) int {
			switch {
			case a.before(b):
				return -1
			case b.before(a):
				return 1
			}
			return 0
		})
	}
	for i := range ks {
		stops[i] = ks[i].c
	}
	w.keys = ks
}

// orderKey is a stop's place in the recreation's order.
type orderKey struct {
	prio int
	key  float64
	c    int32
}

// before reports whether x comes before y: higher priority first, then
// the lower key, then the lower stop.
func (x orderKey) before(y orderKey) bool {
	if x.prio != y.prio {
		return x.prio > y.prio
	}
	if x.key != y.key {
		return x.key < y.key
	}
	return x.c < y.c
}

// recreate inserts stops and the solution's absent ones, each at its
// cheapest feasible position (skipping positions at the blink rate);
// open allows routes to start on idle vehicles. What finds no place is
// absent afterwards.
func (w *worker) recreate(s *solution, stops []int32, open bool) {
	tb := w.t
	todo := append(append(w.todo[:0], stops...), s.absent...)
	w.todo = todo
	s.absent = s.absent[:0]
	w.order(todo)
	if w.near == nil {
		w.near = make([]int32, len(s.routes))
	}
	for _, c := range todo {
		bestV, bestPos := int32(-1), -1
		if tb.n > granularFrom {
			// The routes of the stop's nearest neighbours first; all of
			// them only when none of those takes it.
			w.stampNow++
			for _, nb := range tb.adj[c][1:min(len(tb.adj[c]), granular+1)] {
				if v := s.where[nb]; v >= 0 {
					w.near[v] = w.stampNow
				}
			}
			bestV, bestPos = w.cheapest(s, c, open, w.stampNow)
			if bestV >= 0 && len(s.routes[bestV].stops) == 0 {
				// A route opens only when no route in use, near or
				// not, takes the stop for less: the full pass decides.
				bestV = -1
			}
		}
		if bestV < 0 {
			bestV, bestPos = w.cheapest(s, c, open, 0)
		}
		if bestV < 0 {
			s.absent = append(s.absent, c)
			continue
		}
		r := s.routes[bestV]
		if len(r.stops) == 0 {
			s.used++
		}
		nr := tb.insert(r, c, bestPos, w.gen, &w.free)
		w.set(s, bestV, nr)
		s.where[c] = bestV
		if tb.p.Balance > 0 {
			s.longest = fmax(s.longest, tb.minutes(nr))
		}
	}
}

// Above granularFrom stops, a stop is first offered only to the routes
// of its granular nearest neighbours (and to idle vehicles), which cuts
// the positions checked per insertion on large instances. When an idle
// vehicle is the cheapest of those, every route is offered the stop
// before a route opens: where the neighbours' routes are full (CVRPLIB's
// capacity-tight instances), opening a route at once added routes that a
// farther route in use had room to spare, and the plans kept them.
const (
	granularFrom = 150
	granular     = 40
)

// cheapest finds stop c's cheapest feasible position, skipping positions
// at the blink rate; with only set, among the routes marked with it in
// w.near (and idle vehicles, one per class, when open).
func (w *worker) cheapest(s *solution, c int32, open bool, only int32) (int32, int) {
	tb := w.t
	w.stampNow++
	bestV, bestPos, best := int32(-1), -1, math.Inf(1)
	late := tb.late[c] + tol
	pb := tb.probeOf(c)
	w.work += int64(len(s.routes) / 4)
	for v, r := range s.routes {
		empty := len(r.stops) == 0
		if empty {
			if !open || w.stamp[tb.class[v]] == w.stampNow {
				continue
			}
			w.stamp[tb.class[v]] = w.stampNow
		} else if only != 0 && w.near[v] != only {
			continue
		}
		w.work += 2
		if !tb.fits(r, c) {
			continue
		}
		extra := 0.0
		if empty {
			extra = tb.vehicleCost
		}
		if r.brk == nil && !tb.extras {
			if i, d := w.cheapestIn(r, &pb, extra, best); i >= 0 {
				bestV, bestPos, best = int32(v), i, d
			}
			continue
		}
		for i := tb.firstPlace(r, c); i <= len(r.stops); i++ {
			if r.a[i] > late {
				break
			}
			w.work++
			if w.blinks() {
				continue
			}
			d, why := tb.check(r, c, i)
			if why == "" && tb.extras {
				d += tb.insertExtra(s, r, c, i)
			}
			if why == "" && d+extra < best {
				bestV, bestPos, best = int32(v), i, d+extra
			}
		}
	}
	return bestV, bestPos
}

// cheapestIn is cheapest's loop over the positions of r, a route
// without breaks when the plan's price is its arcs (no extras): the
// cheapest feasible position of stop c in r whose price plus extra is
// below best, and that sum, or -1. It is check's arithmetic in the same
// order, each position priced first and its timing and kilometres
// checked only when it would be the cheapest so far, so that it chooses
// what check would, with the same blinks and the same work counted.
func (w *worker) cheapestIn(r *route, pb *probe, extra, best float64) (int, float64) {
	tb := w.t
	tr := tb.of(r.v)
	if tr.cost == nil {
		return w.cheapestInLinear(r, tr, pb, extra, best)
	}
	size := tb.size
	late := pb.lateTol
	stops, a := r.stops, r.a
	m := len(stops)
	i := tb.firstPlaceAt(r, pb.need)
	p := tb.start[r.v]
	if i > 0 {
		p = stops[i-1]
	}
	end := tb.end[r.v]
	// The prices of the arcs into c (its column, kept as a row of into)
	// and out of c (its row).
	into, out := tr.into[pb.rowC:pb.rowC+size], tr.cost[pb.rowC:pb.rowC+size]
	leg, loc := r.leg, tb.loc
	lp := int(loc[p])
	bestPos := -1
	// The work and the positions left before the next blink are counted
	// here and handed back to w at the end.
	work, unblinked := w.work, w.unblinked
	for i <= m {
		// The positions before the next blink, in a loop of their own:
		// each counts one unit, and none is skipped.
		e := min(m+1, i+unblinked)
		j := i
		for ; j < e; j++ {
			if a[j] > late {
				break
			}
			q := end
			if j < m {
				q = stops[j]
			}
			lq := int(loc[q])
			// The timing and kilometres only of a position that would
			// be the cheapest so far, out of line, so that the loop
			// over the others keeps its values in registers.
			if d := into[lp] + out[lq] - leg[j]; d+extra < best && tb.fitsAt(r, tr, pb, j, lp, lq) {
				bestPos, best = j, d+extra
			}
			lp = lq
		}
		work += int64(j - i)
		unblinked -= j - i
		i = j
		if i < e || i > m || a[i] > late {
			break
		}
		// Position i is skipped: it counts, and the next run is drawn.
		work++
		w.unblinked = 0
		w.blinks()
		unblinked = w.unblinked
		q := end
		if i < m {
			q = stops[i]
		}
		lp = int(loc[q])
		i++
	}
	w.work, w.unblinked = work, unblinked
	return bestPos, best
}

// fitsAt is cheapestIn's check of stop c (its probe pb) between
// positions i and i+1 of r, at locations lp and lq: c's window, the next
// position's latest start and, under a limit, the route's kilometres.
// The arcs from p to c are read in c's row when their matrix is
// symmetric; the kilometres are checked only under a limit (an infinite
// one refuses nothing).
func (t *tables) fitsAt(r *route, tr *travel, pb *probe, i, lp, lq int) bool {
	p := t.start[r.v]
	if i > 0 {
		p = r.stops[i-1]
	}
	size := t.size
	kpc, kcp, kcq := lp*size+pb.lc, pb.rowC+lp, pb.rowC+lq
	var minutesPC float64
	if tr.minutesSym {
		minutesPC = tr.minutes[kcp]
	} else {
		minutesPC = tr.minutes[kpc]
	}
	arrive := r.a[i] + t.service[p] + minutesPC
	if arrive > pb.late+tol || fmax(arrive, pb.early)+pb.service+tr.minutes[kcq] > r.z[i+1]+tol {
		return false
	}
	if maxKm := t.maxKm[r.v] + tol; !math.IsInf(maxKm, 1) {
		var kmPC float64
		if tr.kmSym {
			kmPC = tr.km[kcp]
		} else {
			kmPC = tr.km[kpc]
		}
		if r.km+kmPC+tr.km[kcq]-tr.km[lp*size+lq] > maxKm {
			return false
		}
	}
	return true
}

// cheapestInLinear is cheapestIn for a travel whose prices are computed
// from each arc's kilometres and minutes (travel.cost nil).
func (w *worker) cheapestInLinear(r *route, tr *travel, pb *probe, extra, best float64) (int, float64) {
	tb := w.t
	lc, rowC, size := pb.lc, pb.rowC, tb.size
	lateC, earlyC, serviceC, late := pb.late, pb.early, pb.service, pb.lateTol
	maxKm := tb.maxKm[r.v] + tol
	stops, a, z := r.stops, r.a, r.z
	m := len(stops)
	i := tb.firstPlaceAt(r, pb.need)
	p := tb.start[r.v]
	if i > 0 {
		p = stops[i-1]
	}
	end := tb.end[r.v]
	bestPos := -1
	for ; i <= m; i++ {
		if a[i] > late {
			break
		}
		q := end
		if i < m {
			q = stops[i]
		}
		w.work++
		if w.blinks() {
			p = q
			continue
		}
		lp := int(tb.loc[p]) * size
		lq := int(tb.loc[q])
		kpc, kcq, kpq := lp+lc, rowC+lq, lp+lq
		d := tr.price(kpc) + tr.price(kcq) - tr.price(kpq)
		if !(d+extra < best) {
			p = q
			continue
		}
		arrive := a[i] + tb.service[p] + tr.minutes[kpc]
		if arrive > lateC+tol || fmax(arrive, earlyC)+serviceC+tr.minutes[kcq] > z[i+1]+tol ||
			r.km+tr.km[kpc]+tr.km[kcq]-tr.km[kpq] > maxKm {
			p = q
			continue
		}
		bestPos, best = i, d+extra
		p = q
	}
	return bestPos, best
}

// probe is what cheapestIn reads of the stop it places, set once per
// stop rather than once per route.
type probe struct {
	lc, rowC                            int // its location, and its row in the matrices
	late, lateTol, early, service, need float64
}

// probeOf is stop c's probe.
func (t *tables) probeOf(c int32) probe {
	lc := int(t.loc[c])
	return probe{lc: lc, rowC: lc * t.size, late: t.late[c], lateTol: t.late[c] + tol, early: t.early[c], service: t.service[c],
		need: t.early[c] + t.service[c] - tol}
}

// blinks reports whether the next insertion position is skipped, at the
// blink rate: the positions between two skips are drawn at once, a
// geometric variate, rather than one draw per position.
func (w *worker) blinks() bool {
	if w.unblinked > 0 {
		w.unblinked--
		return false
	}
	w.unblinked = int(math.Log(1-w.rng.Float64()) / math.Log1p(-blink))
	return true
}

// firstPlace is the first position of r after which stop c might be
// inserted: before it, the next stop's latest start is earlier than c's
// window opening plus its service, so c cannot come there. Latest starts
// never fall along a route without breaks, so it is found by bisection;
// with breaks it is 0.
func (t *tables) firstPlace(r *route, c int32) int {
	if r.brk != nil {
		return 0
	}
	return t.firstPlaceAt(r, t.early[c]+t.service[c]-tol)
}

// firstPlaceAt is firstPlace for a stop whose window opening plus
// service, less tol, is need, in a route without breaks.
func (t *tables) firstPlaceAt(r *route, need float64) int {
	lo, hi := 0, len(r.stops)
	for lo < hi {
		mid := (lo + hi) / 2
		if r.z[mid+1] < need {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// anneal is ruin and recreate under simulated annealing for limit work,
// from s; it returns the best solution seen.
func (w *worker) anneal(s *solution, limit budget, open bool) *solution {
	tb := w.t
	cur, best := s, s
	t0, t1 := w.hot*tStart*tb.scale, tEnd*tb.scale
	stall := max(int64(stallShare*float64(limit.work-limit.fromWork)), minStall)
	lastBest := w.work // the work when best was last lowered, or the last kick
	fleetLeft := fleetKicks
	w.record(best)
	for !w.out(&limit) {
		p := w.progress(&limit)
		temp := t0 * math.Pow(t1/t0, p)
		if w.work-lastBest > stall && p < kickUntil {
			if m := w.fewerRoutes(best, &fleetLeft, limit); m != nil {
				cur = m
				if w.t.p.MinimizeVehicles || m.cost < best.cost-tol {
					best = m
					w.record(best)
				}
			} else {
				w.elite(best)
				cur = w.kick(best, open)
			}
			lastBest = w.work
		}
		cand := w.fork(cur)
		w.recreate(cand, w.ruin(cand), open)
		w.total(cand)
		w.runner(cand)
		kept := false
		if cand.cost < cur.cost-temp*math.Log(1-w.rng.Float64()) {
			cur, kept = cand, true
		}
		if w.pool != nil && cand.cost < best.cost+recordNear*(best.cost-float64(best.used)*tb.vehicleCost) {
			w.recordNew(cand)
		}
		if cand.cost < best.cost-tol {
			best, lastBest, kept = cand, w.work, true
			if p := w.polish(cand); p.cost < cand.cost-tol {
				cur, best = p, p
			}
			w.record(best)
		}
		if !kept {
			w.drop(cand)
		}
	}
	return best
}

// An annealing whose best plan has not fallen for stallShare of its work,
// and for at least minStall units, is kicked out of that plan's
// neighbourhood (kick), up to kickUntil of its progress: a trap, where
// the temperature no longer lets the search leave the best plan's
// neighbourhood, costs at most that share. A short search (under about
// minStall / stallShare units of annealing) is never kicked: it has no
// time to come back to a plan as good.
const (
	stallShare = 0.15
	minStall   = 4_000_000
	kickUntil  = 0.95
	kickStops  = 30 // at most; at most 3 in 10 of the stops served
)

// The first fleetKicks stalls of an annealing whose best plan has more
// routes than the fleet bound each first give route minimisation
// fleetKickShare of what is left of the annealing's budget, from that
// plan (fewerRoutes): a stalled plan is a well-placed start for one route
// fewer, which the search that found its fleet late, or not at all, had
// little work left to look for. With MinimizeVehicles the plan found
// becomes the best; otherwise it is where the annealing goes on (in
// place of the kick), and the best only if it is also cheaper: on
// capacity-tight instances (CVRPLIB X-n936-k151, X-n599-k92) a route
// fewer is two trips to the depot fewer, which an annealing for distance
// alone, its routes packed 96 % full, seldom reaches by moving a few
// stops at a time.
const (
	fleetKicks     = 2
	fleetKickShare = 0.04
)

// fewerRoutes is route minimisation from best, the annealing's stalled
// best plan, for fleetKickShare of what is left of limit, when left (the
// tries left) is not 0 and best has more routes than the fleet bound:
// the plan it finds with fewer routes, polished, or nil when it finds
// none (or does not try).
func (w *worker) fewerRoutes(best *solution, left *int, limit budget) *solution {
	if *left == 0 || best.used <= max(w.t.minRoutes, w.fleetFloor) || len(best.absent) > 0 {
		return nil
	}
	*left--
	m := w.minimizeRoutes(best, w.share(limit, fleetKickShare))
	if m.used >= best.used {
		return nil
	}
	if pm := w.polish(m); pm.cost < m.cost-tol {
		return pm
	}
	return m
}

// kick is s with about kickStops of its stops taken out by string
// removals around random stops and inserted again, each at its cheapest
// place: a plan well away from s, from which the annealing goes on at
// its temperature.
func (w *worker) kick(s *solution, open bool) *solution {
	return w.shake(s, open, min(kickStops, 3*(w.t.n-len(s.absent))/10))
}

// shake is s with about want of its stops taken out by string removals
// around random stops and inserted again, each at its cheapest place.
func (w *worker) shake(s *solution, open bool, want int) *solution {
	cand := w.fork(s)
	var gone []int32
	for len(gone) < want {
		out := w.ruin(cand)
		if len(out) == 0 {
			break
		}
		gone = append(gone, out...)
	}
	w.recreate(cand, gone, open)
	w.total(cand)
	return cand
}

// minimizeRoutes removes whole routes and reinserts their stops (SISR's
// fleet minimisation): a candidate with fewer absent stops, or absent
// stops that were absent less often, replaces the current one; once none
// is absent the plan is the new best and another route goes. It stops at
// limit work, at the fleet bound, or where it gives up a removal on long
// routes (fleetStall).
func (w *worker) minimizeRoutes(s *solution, limit budget) *solution {
	tb := w.t
	if len(s.absent) > 0 {
		return s
	}
	best := s
	absences := make([]int, tb.n)
	sum := func(l []int32) (n int) {
		for _, c := range l {
			n += absences[c]
		}
		return n
	}
	for best.used > tb.minRoutes && !w.out(&limit) {
		// The fewest stops this removal has left out, and the work
		// when it last fell.
		fewest, fell := math.MaxInt, w.work
		long := tb.p.MinimizeVehicles && (tb.n-len(best.absent))/(best.used-1) >= longRoute
		cur := w.fork(best)
		drop := w.smallRoute(cur)
		for v, r := range cur.routes {
			if int32(v) == drop {
				for _, c := range r.stops {
					cur.absent = append(cur.absent, c)
					cur.where[c] = -1
				}
				cur.routes[v] = tb.empty[v]
				cur.used--
				break
			}
		}
		w.total(cur)
		for !w.out(&limit) {
			cand := w.fork(cur)
			// Half the ruins make room around a stop left out.
			seed := int32(-1)
			if w.rng.IntN(2) == 0 {
				seed = cur.absent[w.rng.IntN(len(cur.absent))]
			}
			w.recreate(cand, w.ruinNear(cand, seed), false)
			w.total(cand)
			for _, c := range cand.absent {
				absences[c]++
			}
			if len(cand.absent) < len(cur.absent) || sum(cand.absent) < sum(cur.absent) {
				cur = cand
			} else {
				w.drop(cand)
			}
			if len(cur.absent) == 0 {
				best = cur
				break
			}
			if len(cur.absent) < fewest {
				fewest, fell = len(cur.absent), w.work
			} else if long && w.work-fell > fleetStall {
				w.fleetFloor = best.used
				return best
			}
		}
	}
	return best
}

// With MinimizeVehicles, route minimisation gives up a removal that
// would leave routes of longRoute stops or more on average once it has
// left no fewer stops out for fleetStall units, and ends there: what is
// left of its share goes to the annealings, and the annealing's stalls
// do not try that count again (fleetFloor). Where routes are long, the
// capacities' bound can lie below every feasible count (2 routes on
// Solomon's R2 and RC2, whose plans need 2 to 4), and the removal below
// the feasible count then used the whole share, half of the first
// search's work. On C2, R2 and RC2 at 170 million units a search (seed
// 0), the removals that succeeded went at most 15 million units between
// two falls of the stops left out, while the first search's removals
// that failed had gone 21 to 80 million units without one when its
// share ran out. Routes of fewer stops (R1, RC1) keep the whole share:
// there a route fewer is found after stalls of any length (R108's
// ninth).
const fleetStall = 20_000_000

// smallRoute is the shorter in stops of two routes of s drawn at random:
// route minimisation removes small routes more often than large ones.
func (w *worker) smallRoute(s *solution) int32 {
	pick := func() int32 {
		k := w.rng.IntN(s.used)
		for v, r := range s.routes {
			if len(r.stops) == 0 {
				continue
			}
			if k--; k < 0 {
				return int32(v)
			}
		}
		return -1
	}
	a, b := pick(), pick()
	if len(s.routes[b].stops) < len(s.routes[a].stops) {
		return b
	}
	return a
}

// search runs one worker's whole search within limit.
func (w *worker) search(limit budget) (first, best *solution) {
	s := w.construct()
	first = s
	open := !w.t.p.MinimizeVehicles
	if !open {
		s = w.minimizeRoutes(s, w.share(limit, float64(w.fleetShare)/100))
	}
	// The crossover's share comes out of the annealings', after route
	// minimisation has had its own.
	if w.crossWork > 0 {
		limit.work -= w.crossWork
		if w.crossFrom.Before(limit.until) {
			limit.until = w.crossFrom
		}
	}
	best = w.finish(w.restarts(s, limit, open), limit)
	w.record(best)
	w.elite(best)
	return first, best
}

// restarts anneals from s for what is left of limit. With
// MinimizeVehicles, a plan whose routes hold longRoute stops or more on
// average (Solomon's C2, R2 and RC2) is annealed restartsLong times, each
// annealing with an equal share of what is left, as long as each share
// is at least minRestart units (so that each is still kicked): the first
// from s, each next one from the best plan so far with restartStops of
// its stops (at most 6 in 10) taken out and inserted again, at half the
// starting temperature; the best plan is kept. On those instances one
// annealing's plan varies by several percent from one seed to the next
// and a longer annealing does not end lower.
func (w *worker) restarts(s *solution, limit budget, open bool) *solution {
	k := 1
	if w.t.p.MinimizeVehicles && s.used > 0 && (w.t.n-len(s.absent))/s.used >= longRoute {
		k = restartsLong
		for k > 1 && (limit.work-w.work)/int64(k) < minRestart {
			k--
		}
	}
	hot := w.hot
	defer func() { w.hot = hot }()
	var best *solution
	for i := 0; i < k; i++ {
		from := s
		if i > 0 {
			from = w.shake(best, open, min(restartStops, 6*(w.t.n-len(best.absent))/10))
			w.hot = hot / 2
		}
		w.annealings++
		b := w.anneal(from, w.share(limit, 1/float64(k-i)), open)
		if best == nil || better(b, best) {
			best = b
		}
	}
	return best
}

// restarts' parameters: routes of longRoute stops or more on average
// are annealed restartsLong times, each annealing at least minRestart
// units, each after the first from the best plan with restartStops of
// its stops reinserted. An annealing of minRestart units is still kicked
// at its stalls (minStall). minRestart was 27 million units, which left
// the first search one annealing at the work a 2 s request gets on a
// machine that calibrates about 50 million units a core-second (80 to
// 90 million a search): its route minimisation on long routes spends up
// to half its work, and the crossover a tenth, so that 32 to 45 million
// units are left. At 15 million both searches anneal twice there; at
// 170 million units a search, the annealings were longer than 27 million
// units already and are the same.
const (
	longRoute    = 20
	restartsLong = 2
	minRestart   = 15_000_000
	restartStops = 30
)

// style is worker i's way of searching, the workers taking the two in
// turn: the first spends up to half its budget on route minimisation and
// anneals from twice tStart, the second keeps 80 % of its budget for
// distance and anneals from tStart. Two styles reach more kinds of
// instances than two seeds of one; the better plan wins. The share is a
// percentage of the work after construction.
func style(i int) (fleetShare int, hot float64) {
	if i%2 == 0 {
		return 50, 2
	}
	return 20, 1
}
