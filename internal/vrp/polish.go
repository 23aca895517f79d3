package vrp

// polishNear is how many of a stop's nearest stops the local search
// tries it beside.
const polishNear = 30

// polish is s improved by local search until no move helps: relocate (a
// stop moved next to one of its nearest stops, in its own route or
// another), 2-opt* (two routes exchange their tails, so that a stop is
// followed by one of its nearest stops) and or-opt (orOpt: a string of
// two or three stops moved into another route); when none of those helps
// in a pass, SWAP* (swapStars: two routes trade a stop each, each going
// to its cheapest place in the other). A relocation is checked in
// constant time; an exchange of tails is priced in constant time and
// rebuilt only when it saves. It never opens a route.
func (w *worker) polish(s *solution) *solution {
	tb := w.t
	s = w.fork(s)
	pos := make([]int32, tb.n) // per stop: its index in its route
	index := func(v int32) {
		for k, c := range s.routes[v].stops {
			pos[c] = int32(k)
		}
	}
	for v := range s.routes {
		index(int32(v))
	}
	for pass := 0; pass < 50; pass++ {
		moved := false
		for c := int32(0); c < int32(tb.n); c++ {
			if s.where[c] < 0 {
				continue
			}
			if w.relocate(s, c, pos, index) || w.twoOptStar(s, c, pos, index) || w.orOpt(s, c, pos, index) {
				moved = true
			}
		}
		if !moved && !w.swapStars(s, index) {
			break
		}
	}
	w.total(s)
	return s
}

// relocate moves stop c next to one of its nearest stops when that
// saves, and reports whether it did.
func (w *worker) relocate(s *solution, c int32, pos []int32, index func(int32)) bool {
	tb := w.t
	v := s.where[c]
	r := s.routes[v]
	k := int(pos[c])
	p, q := tb.node(r, k), tb.node(r, k+2)
	kpc, kcq, kpq := tb.arc(p, c), tb.arc(c, q), tb.arc(p, q)
	tr := tb.of(v)
	var rw *route // r without c, built when first needed
	// Without c, q is reached from p; the rest of the route keeps its
	// latest starts. A route with a break is rebuilt to know.
	if r.brk != nil {
		rw = tb.without(r, func(i int) bool { return i == k }, 0, nil)
		w.work += int64(len(r.stops))
		if !tb.feasible(rw) {
			return false
		}
	} else if r.a[k]+tb.service[p]+tr.minutes[kpq] > r.z[k+2]+tol {
		return false
	}
	if r.km-tr.km[kpc]-tr.km[kcq]+tr.km[kpq] > tb.maxKm[v]+tol {
		return false
	}
	gain := tr.price(kpc) + tr.price(kcq) - tr.price(kpq)
	if len(r.stops) == 1 {
		gain += tb.vehicleCost
	}
	if gain <= tol {
		return false
	}
	bestV, bestPos, best := int32(-1), -1, gain-tol
	near := tb.adj[c][1:min(len(tb.adj[c]), polishNear+1)]
	w.work += int64(len(near))
	for _, nb := range near {
		v2 := s.where[nb]
		if v2 < 0 {
			continue
		}
		r2, j := s.routes[v2], int(pos[nb])
		if v2 == v {
			if rw == nil {
				rw = tb.without(r, func(i int) bool { return i == k }, 0, &w.free)
				w.work += int64(len(r.stops))
			}
			r2 = rw
			if j > k {
				j--
			}
		} else if !tb.fits(r2, c) {
			continue
		}
		// Before nb (after position j) and after it (after position j+1).
		for i := j; i <= j+1; i++ {
			w.work++
			if d, why := tb.check(r2, c, i); why == "" && d < best {
				bestV, bestPos, best = v2, i, d
			}
		}
	}
	if bestV < 0 {
		w.discard(rw, true)
		return false
	}
	if bestV == v {
		w.set(s, v, tb.insert(rw, c, bestPos, 0, &w.free))
		w.discard(rw, true)
	} else {
		if rw == nil {
			rw = tb.without(r, func(i int) bool { return i == k }, 0, nil)
		}
		if len(rw.stops) == 0 {
			s.used--
		}
		w.set(s, v, rw)
		w.set(s, bestV, tb.insert(s.routes[bestV], c, bestPos, 0, nil))
		s.where[c] = bestV
		index(bestV)
	}
	index(v)
	return true
}

// twoOptStar joins stop c to one of its nearest stops nb in another
// route: c's route keeps its stops up to c and takes nb's from nb on,
// nb's route keeps its stops before nb and takes c's after c. It reports
// whether it did.
func (w *worker) twoOptStar(s *solution, c int32, pos []int32, index func(int32)) bool {
	tb := w.t
	v1 := s.where[c]
	r1 := s.routes[v1]
	i := int(pos[c]) + 1 // c's position in r1
	next := tb.node(r1, i+1)
	tr1 := tb.of(v1)
	near := tb.adj[c][1:min(len(tb.adj[c]), polishNear+1)]
	w.work += int64(len(near))
	for _, nb := range near {
		v2 := s.where[nb]
		if v2 < 0 || v2 == v1 {
			continue
		}
		r2 := s.routes[v2]
		j := int(pos[nb]) + 1 // nb's position in r2
		prev := tb.node(r2, j-1)
		k1, k2 := tb.arc(c, nb), tb.arc(prev, next)
		// The joining arcs, each at its new route's prices; when the
		// vehicles travel alike, the move's exact saving.
		tr2 := tb.of(v2)
		delta := tr1.price(k1) + tr2.price(k2) - tr1.price(tb.arc(c, next)) - tr2.price(tb.arc(prev, nb))
		w.work++
		if delta >= -tol {
			continue
		}
		// When both routes end and travel alike, nb's latest start still
		// holds.
		if tb.end[v1] == tb.end[v2] && tb.zEnd[v1] == tb.zEnd[v2] && tb.prof[v1] == tb.prof[v2] && r1.brk == nil && r2.brk == nil &&
			r1.a[i]+tb.service[c]+tr1.minutes[k1] > r2.z[j]+tol {
			continue
		}
		s1 := make([]int32, 0, i+len(r2.stops)-j+5)
		s1 = append(append(s1, r1.stops[:i]...), r2.stops[j-1:]...)
		s2 := make([]int32, 0, j-1+len(r1.stops)-i+5)
		s2 = append(append(s2, r2.stops[:j-1]...), r1.stops[i:]...)
		n1, n2 := w.build(v1, s1), w.build(v2, s2)
		w.work += int64(len(s1) + len(s2))
		if n1 == nil || n2 == nil {
			w.discard(n1, false)
			w.discard(n2, false)
			continue
		}
		// The tails change ends when the vehicles end apart, and prices
		// when they travel apart: the routes built are the price.
		after := n1.cost + n2.cost
		if len(n2.stops) == 0 {
			after = n1.cost - tb.vehicleCost
		}
		if tb.extras {
			after += n1.extra + n2.extra - r1.extra - r2.extra
		}
		if after >= r1.cost+r2.cost-tol {
			w.discard(n1, false)
			w.discard(n2, false)
			continue
		}
		if len(n2.stops) == 0 {
			s.used--
		}
		w.setHere(s, v1, n1)
		w.setHere(s, v2, n2)
		index(v1)
		index(v2)
		return true
	}
	return false
}

// build is vehicle v's route over stops when it is feasible, otherwise
// nil.
func (w *worker) build(v int32, stops []int32) *route {
	tb := w.t
	if len(stops) == 0 {
		return tb.empty[v]
	}
	r := tb.rebuild(reuse(&w.free), v, stops)
	if !tb.buildable(r) {
		// Refused: its buffers go to the next route built.
		w.discard(r, false)
		return nil
	}
	return r
}

// buildable reports whether r's vehicle has its stops' capabilities and
// room for their load, and r keeps its distance limit and every window.
func (t *tables) buildable(r *route) bool {
	v := r.v
	if r.needs&^t.has[v] != 0 {
		return false
	}
	for d := 0; d < 3; d++ {
		if r.load[d] > t.room[v][d]+tol {
			return false
		}
	}
	return !(r.km > t.maxKm[v]+tol || !t.feasible(r))
}

// feasible reports whether every position of r can start on time.
func (t *tables) feasible(r *route) bool {
	for i := range r.a {
		if r.a[i] > r.z[i]+tol {
			return false
		}
	}
	return true
}
