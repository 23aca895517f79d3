package vrp

// swap exchanges stop c with a stop x of another route that lies next to
// one of c's nearest stops nb, so that c comes beside nb and x takes c's
// place, when that saves; it reports whether it did. The saving is priced
// from the four arcs on each side, and the two routes are rebuilt and
// checked only when it is positive.
func (w *worker) swap(s *solution, c int32, pos []int32, index func(int32)) bool {
	tb := w.t
	v := s.where[c]
	r := s.routes[v]
	k := int(pos[c]) // c's index in r.stops
	tr := tb.of(v)
	p, q := tb.node(r, k), tb.node(r, k+2)
	out := tr.price(tb.arc(p, c)) + tr.price(tb.arc(c, q))
	near := tb.adj[c][1:min(len(tb.adj[c]), polishNear+1)]
	w.work += int64(len(near))
	for _, nb := range near {
		v2 := s.where[nb]
		if v2 < 0 || v2 == v {
			continue
		}
		r2 := s.routes[v2]
		tr2 := tb.of(v2)
		j := int(pos[nb])
		// x is nb's predecessor or successor in r2 (a stop, not the
		// depot); c takes x's place and x takes c's.
		for _, m := range [2]int{j - 1, j + 1} {
			if m < 0 || m >= len(r2.stops) {
				continue
			}
			x := r2.stops[m]
			w.work++
			p2, q2 := tb.node(r2, m), tb.node(r2, m+2)
			delta := tr.price(tb.arc(p, x)) + tr.price(tb.arc(x, q)) - out +
				tr2.price(tb.arc(p2, c)) + tr2.price(tb.arc(c, q2)) - tr2.price(tb.arc(p2, x)) - tr2.price(tb.arc(x, q2))
			if delta >= -tol {
				continue
			}
			if w.exchange(s, v, v2, k, m, index) {
				return true
			}
		}
	}
	return false
}

// exchange swaps the stop at index k of vehicle v's route with the one at
// index m of vehicle v2's route, when both routes stay feasible and the
// plan's price falls; it reports whether it did.
func (w *worker) exchange(s *solution, v, v2 int32, k, m int, index func(int32)) bool {
	tb := w.t
	r, r2 := s.routes[v], s.routes[v2]
	c, x := r.stops[k], r2.stops[m]
	s1 := append([]int32(nil), r.stops...)
	s2 := append([]int32(nil), r2.stops...)
	s1[k], s2[m] = x, c
	w.work += int64(len(s1) + len(s2))
	n1 := w.build(v, s1)
	if n1 == nil {
		return false
	}
	n2 := w.build(v2, s2)
	if n2 == nil {
		return false
	}
	before, after := r.cost+r2.cost, n1.cost+n2.cost
	if tb.extras {
		after += n1.extra + n2.extra - r.extra - r2.extra
	}
	if after >= before-tol {
		return false
	}
	w.set(s, v, n1)
	w.set(s, v2, n2)
	s.where[c], s.where[x] = v2, v
	index(v)
	index(v2)
	return true
}
