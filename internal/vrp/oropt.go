package vrp

// orOpt moves a string of two or three consecutive stops starting at
// stop c into another route, before or after one of c's nearest stops,
// in the same order, when that saves; it reports whether it did. The
// saving is priced from the arcs that change, and the two routes are
// rebuilt and checked only when it is positive.
func (w *worker) orOpt(s *solution, c int32, pos []int32, index func(int32)) bool {
	tb := w.t
	v := s.where[c]
	r := s.routes[v]
	k := int(pos[c]) // c's index in r.stops
	tr := tb.of(v)
	near := tb.adj[c][1:min(len(tb.adj[c]), polishNear+1)]
	for l := 2; l <= 3; l++ {
		if k+l > len(r.stops) {
			break
		}
		last := r.stops[k+l-1]
		p, q := tb.node(r, k), tb.node(r, k+l+1)
		gain := tr.price(tb.arc(p, c)) + tr.price(tb.arc(last, q)) - tr.price(tb.arc(p, q))
		if k == 0 && k+l == len(r.stops) {
			gain += tb.vehicleCost
		}
		if gain <= tol {
			continue
		}
		w.work += int64(len(near))
		for _, nb := range near {
			v2 := s.where[nb]
			if v2 < 0 || v2 == v {
				continue
			}
			r2 := s.routes[v2]
			tr2 := tb.of(v2)
			j := int(pos[nb]) + 1 // nb's position in r2
			// After nb (between positions j and j+1), or before it
			// (between j-1 and j).
			for i := j - 1; i <= j; i++ {
				x, y := tb.node(r2, i), tb.node(r2, i+1)
				add := tr2.price(tb.arc(x, c)) + tr2.price(tb.arc(last, y)) - tr2.price(tb.arc(x, y))
				if add >= gain-tol {
					continue
				}
				if w.moveString(s, v, v2, k, l, i, index) {
					return true
				}
			}
		}
	}
	return false
}

// moveString moves the l stops of vehicle v's route from index k into
// vehicle v2's route after its position i, when both routes stay
// feasible and the plan's price falls; it reports whether it did.
func (w *worker) moveString(s *solution, v, v2 int32, k, l, i int, index func(int32)) bool {
	tb := w.t
	r, r2 := s.routes[v], s.routes[v2]
	seg := r.stops[k : k+l]
	s1 := make([]int32, 0, len(r.stops)-l+4)
	s1 = append(append(s1, r.stops[:k]...), r.stops[k+l:]...)
	s2 := make([]int32, 0, len(r2.stops)+l+4)
	s2 = append(append(append(s2, r2.stops[:i]...), seg...), r2.stops[i:]...)
	w.work += int64(len(s1) + len(s2))
	// Both timings first, where they refuse: build would refuse the
	// same routes, and moveString moves nothing either way.
	if (len(s1) > 0 && tb.late2(r, k, k+l+1)) || tb.lateWith(r2, seg, i) {
		return false
	}
	n1, n2 := w.build(v, s1), w.build(v2, s2)
	if n1 == nil || n2 == nil {
		w.discard(n1, false)
		w.discard(n2, false)
		return false
	}
	before, after := r.cost+r2.cost, n1.cost+n2.cost
	if len(n1.stops) == 0 {
		after -= tb.vehicleCost
	}
	if tb.extras {
		after += n1.extra + n2.extra - r.extra - r2.extra
	}
	if after >= before-tol {
		w.discard(n1, false)
		w.discard(n2, false)
		return false
	}
	if len(n1.stops) == 0 {
		s.used--
	}
	w.set(s, v, n1)
	w.setHere(s, v2, n2)
	index(v)
	index(v2)
	return true
}

// late2 reports whether r, a route without breaks, with the stops
// between positions p and q taken out, reaches position q's stop later
// than its latest start: a route build (newRoute, feasible) would then
// refuse, because it computes that arrival and that latest start with
// the same arithmetic. With breaks it reports false (build decides).
// A route left without stops is never refused: moveString asks only
// when some are left.
func (t *tables) late2(r *route, p, q int) bool {
	if r.brk != nil {
		return false
	}
	x, y := t.node(r, p), t.node(r, q)
	return r.a[p]+t.service[x]+t.of(r.v).minutes[t.arc(x, y)] > r.z[q]+tol
}

// lateWith reports whether r, a route without breaks, with the stops of
// seg inserted after its position i, serves one of them after its
// window or reaches position i+1's stop later than its latest start:
// a route build would then refuse, as for late2. With breaks it reports
// false.
func (t *tables) lateWith(r *route, seg []int32, i int) bool {
	if r.brk != nil {
		return false
	}
	tr := t.of(r.v)
	prev := t.node(r, i)
	at := r.a[i]
	for _, c := range seg {
		arrive := at + t.service[prev] + tr.minutes[t.arc(prev, c)]
		if arrive > t.late[c]+tol {
			return true
		}
		at, prev = fmax(arrive, t.early[c]), c
	}
	y := t.node(r, i+1)
	return at+t.service[prev]+tr.minutes[t.arc(prev, y)] > r.z[i+1]+tol
}
