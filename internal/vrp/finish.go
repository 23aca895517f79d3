package vrp

import "time"

// finishShare is the share of a search's work its final local search
// (finish) may spend beyond it.
const finishShare = 0.02

// finish is s, a search's best plan, improved by a local search over
// whole neighbourhoods rather than a stop's nearest ones, until no move
// saves or it has spent finishShare of limit's work: within a route, a
// stretch reversed (2-opt) and a string of one to three stops moved
// elsewhere, in order or reversed; between two routes, such a string
// moved to any place of the other, and two stops exchanged, each going
// to any place of the other route. Each move is priced by the arcs it
// changes and built and checked only when it saves, so the plan returned
// is never worse than s and never has more routes: the searches' plans
// are local optima of the annealing's neighbourhood and of polish's,
// but not of these. Plans priced beyond their arcs (Problem.Balance,
// Quality, Overload) are returned as they are. It draws no random
// numbers; its work is counted, and the deadline ends it.
func (w *worker) finish(s *solution, limit budget) *solution {
	tb := w.t
	if tb.extras || s.used == 0 {
		return s
	}
	f := &finisher{w: w, cap: w.work + int64(finishShare*float64(limit.work-limit.fromWork))}
	s = w.fork(s)
	for pass := 0; pass < 50 && !f.done(); pass++ {
		moved := false
		for v := range s.routes {
			for f.intra(s, int32(v)) {
				moved = true
			}
		}
		for a := range s.routes {
			for b := range s.routes {
				if a == b {
					continue
				}
				for f.between(s, int32(a), int32(b)) {
					moved = true
				}
			}
		}
		if !moved {
			break
		}
	}
	w.total(s)
	return s
}

// finisher is finish's state: the work it may reach, and a route's
// nodes from its start to its end.
type finisher struct {
	w        *worker
	cap      int64
	seq, alt []int32
}

// done reports whether the finish has spent its work or the deadline has
// come (the worker is then marked cut).
func (f *finisher) done() bool {
	if f.w.work >= f.cap {
		return true
	}
	if !time.Now().Before(f.w.deadline) {
		f.w.cut = true
		return true
	}
	return false
}

// nodes is r's nodes, its start and end included, in buf.
func (f *finisher) nodes(r *route, buf *[]int32) []int32 {
	tb := f.w.t
	seq := append((*buf)[:0], tb.start[r.v])
	seq = append(append(seq, r.stops...), tb.end[r.v])
	*buf = seq
	return seq
}

// price is the price of the arc from x to y by tr.
func (f *finisher) price(tr *travel, x, y int32) float64 { return tr.price(f.w.t.arc(x, y)) }

// inner is the price of the stretch seq[i..j] (i ≤ j) in order, or
// backwards when rev.
func (f *finisher) inner(tr *travel, seq []int32, i, j int, rev bool) float64 {
	d := 0.0
	for k := i; k < j; k++ {
		if rev {
			d += f.price(tr, seq[k+1], seq[k])
		} else {
			d += f.price(tr, seq[k], seq[k+1])
		}
	}
	return d
}

// intra makes the first move within vehicle v's route that saves, and
// reports whether it did.
func (f *finisher) intra(s *solution, v int32) bool {
	w, tb := f.w, f.w.t
	r := s.routes[v]
	m := len(r.stops)
	if m < 2 || f.done() {
		return false
	}
	tr := tb.of(v)
	seq := f.nodes(r, &f.seq)
	// 2-opt: the stops at positions i..j reversed.
	for i := 1; i < m && !f.done(); i++ {
		fwd, rev := 0.0, 0.0
		for j := i + 1; j <= m; j++ {
			fwd += f.price(tr, seq[j-1], seq[j])
			rev += f.price(tr, seq[j], seq[j-1])
			w.work++
			d := f.price(tr, seq[i-1], seq[j]) + rev + f.price(tr, seq[i], seq[j+1]) -
				f.price(tr, seq[i-1], seq[i]) - fwd - f.price(tr, seq[j], seq[j+1])
			if d >= -tol {
				continue
			}
			stops := make([]int32, 0, m+4)
			stops = append(stops, seq[1:i]...)
			for k := j; k >= i; k-- {
				stops = append(stops, seq[k])
			}
			stops = append(stops, seq[j+1:m+1]...)
			if f.apply(s, v, stops, r) {
				return true
			}
		}
	}
	// A string of l stops at positions i..i+l-1 moved between positions
	// k and k+1 of the route, in order or reversed.
	for l := 1; l <= 3 && l < m; l++ {
		for i := 1; i+l-1 <= m && !f.done(); i++ {
			e := i + l - 1
			gain := f.price(tr, seq[i-1], seq[i]) + f.price(tr, seq[e], seq[e+1]) - f.price(tr, seq[i-1], seq[e+1])
			in := [2]float64{f.inner(tr, seq, i, e, false), f.inner(tr, seq, i, e, true)}
			for k := 0; k <= m; k++ {
				if k >= i-1 && k <= e {
					continue
				}
				for back := 0; back < 2 && (back == 0 || l > 1); back++ {
					first, last := seq[i], seq[e]
					if back == 1 {
						first, last = last, first
					}
					w.work++
					d := f.price(tr, seq[k], first) + in[back] - in[0] + f.price(tr, last, seq[k+1]) - f.price(tr, seq[k], seq[k+1]) - gain
					if d >= -tol {
						continue
					}
					ins := k
					if k > e {
						ins = k - l
					}
					rest := make([]int32, 0, m)
					rest = append(append(rest, seq[1:i]...), seq[e+1:m+1]...)
					stops := make([]int32, 0, m+4)
					stops = appendString(append(stops, rest[:ins]...), seq[i:e+1], back == 1)
					stops = append(stops, rest[ins:]...)
					if f.apply(s, v, stops, r) {
						return true
					}
				}
			}
		}
	}
	return false
}

// appendString appends str to stops, reversed when back.
func appendString(stops, str []int32, back bool) []int32 {
	if !back {
		return append(stops, str...)
	}
	for k := len(str) - 1; k >= 0; k-- {
		stops = append(stops, str[k])
	}
	return stops
}

// apply builds vehicle v's route over stops and puts it in s when it is
// feasible and cheaper than r, reporting whether it did.
func (f *finisher) apply(s *solution, v int32, stops []int32, r *route) bool {
	w := f.w
	w.work += int64(len(stops))
	nr := w.build(v, stops)
	if nr == nil || nr.cost >= r.cost-tol {
		return false
	}
	w.set(s, v, nr)
	return true
}

// between makes the first move between the routes of vehicles a and b
// that saves: a string of one to three stops of a moved to any place of
// b, in order or reversed, or (when a < b) a stop of each exchanged,
// each going to any place of the other route. It reports whether it did.
func (f *finisher) between(s *solution, a, b int32) bool {
	w, tb := f.w, f.w.t
	ra, rb := s.routes[a], s.routes[b]
	ma, mb := len(ra.stops), len(rb.stops)
	if ma == 0 || mb == 0 || f.done() {
		return false
	}
	tra, trb := tb.of(a), tb.of(b)
	sa, sb := f.nodes(ra, &f.seq), f.nodes(rb, &f.alt)
	for l := 1; l <= 3 && l <= ma; l++ {
		for i := 1; i+l-1 <= ma && !f.done(); i++ {
			e := i + l - 1
			gain := f.price(tra, sa[i-1], sa[i]) + f.inner(tra, sa, i, e, false) + f.price(tra, sa[e], sa[e+1]) - f.price(tra, sa[i-1], sa[e+1])
			if l == ma {
				gain = ra.cost + tb.vehicleCost
			}
			in := [2]float64{f.inner(trb, sa, i, e, false), f.inner(trb, sa, i, e, true)}
			for k := 0; k <= mb; k++ {
				for back := 0; back < 2 && (back == 0 || l > 1); back++ {
					first, last := sa[i], sa[e]
					if back == 1 {
						first, last = last, first
					}
					w.work++
					d := f.price(trb, sb[k], first) + in[back] + f.price(trb, last, sb[k+1]) - f.price(trb, sb[k], sb[k+1]) - gain
					if d >= -tol {
						continue
					}
					na := make([]int32, 0, ma+4)
					na = append(append(na, sa[1:i]...), sa[e+1:ma+1]...)
					nb := make([]int32, 0, mb+l+4)
					nb = appendString(append(nb, sb[1:k+1]...), sa[i:e+1], back == 1)
					nb = append(nb, sb[k+1:mb+1]...)
					if f.apply2(s, a, b, na, nb, ra, rb) {
						return true
					}
				}
			}
		}
	}
	if a > b {
		return false
	}
	// Exchange: x at position i of a and y at position j of b, y going
	// between positions k and k+1 of a without x, x likewise into b
	// without y.
	for i := 1; i <= ma && !f.done(); i++ {
		x := sa[i]
		gx := f.price(tra, sa[i-1], x) + f.price(tra, x, sa[i+1]) - f.price(tra, sa[i-1], sa[i+1])
		for j := 1; j <= mb; j++ {
			y := sb[j]
			gy := f.price(trb, sb[j-1], y) + f.price(trb, y, sb[j+1]) - f.price(trb, sb[j-1], sb[j+1])
			bestA, ka := f.cheapestGap(tra, sa, i, y)
			bestB, kb := f.cheapestGap(trb, sb, j, x)
			w.work += int64(ma + mb)
			if bestA+bestB-gx-gy >= -tol {
				continue
			}
			na := replaceAt(sa[1:ma+1], i-1, ka, y)
			nb := replaceAt(sb[1:mb+1], j-1, kb, x)
			if f.apply2(s, a, b, na, nb, ra, rb) {
				return true
			}
		}
	}
	return false
}

// cheapestGap is the cheapest price of putting c into seq without the
// node at position skip, and the gap: c goes after the node at that
// position of seq (never skip itself).
func (f *finisher) cheapestGap(tr *travel, seq []int32, skip int, c int32) (float64, int) {
	best, at := 0.0, -1
	for k := 0; k < len(seq)-1; k++ {
		if k == skip {
			continue
		}
		next := k + 1
		if next == skip {
			next++
		}
		d := f.price(tr, seq[k], c) + f.price(tr, c, seq[next]) - f.price(tr, seq[k], seq[next])
		if at < 0 || d < best {
			best, at = d, k
		}
	}
	return best, at
}

// replaceAt is stops without the one at index out, with c after the node
// at position gap of the route's nodes (0 the start, so index gap-1 of
// stops).
func replaceAt(stops []int32, out, gap int, c int32) []int32 {
	ns := make([]int32, 0, len(stops)+4)
	if gap == 0 {
		ns = append(ns, c)
	}
	for k, x := range stops {
		if k == out {
			if k+1 == gap {
				ns = append(ns, c)
			}
			continue
		}
		ns = append(ns, x)
		if k+1 == gap {
			ns = append(ns, c)
		}
	}
	return ns
}

// apply2 builds the routes of vehicles a and b over na and nb and puts
// them in s when both are feasible and together cheaper than ra and rb,
// reporting whether it did.
func (f *finisher) apply2(s *solution, a, b int32, na, nb []int32, ra, rb *route) bool {
	w, tb := f.w, f.w.t
	w.work += int64(len(na) + len(nb))
	n1, n2 := w.build(a, na), w.build(b, nb)
	if n1 == nil || n2 == nil {
		return false
	}
	before, after := ra.cost+rb.cost, n1.cost+n2.cost
	if len(ra.stops) > 0 {
		before += tb.vehicleCost
	}
	if len(rb.stops) > 0 {
		before += tb.vehicleCost
	}
	if len(n1.stops) > 0 {
		after += tb.vehicleCost
	}
	if len(n2.stops) > 0 {
		after += tb.vehicleCost
	}
	if after >= before-tol {
		return false
	}
	s.used += min(1, len(n1.stops)) + min(1, len(n2.stops)) - min(1, len(ra.stops)) - min(1, len(rb.stops))
	w.setHere(s, a, n1)
	w.setHere(s, b, n2)
	return true
}
