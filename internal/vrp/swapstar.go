package vrp

import "math"

// place3 is a stop's three cheapest insertion gaps in a route (gap i
// lies between positions i and i+1), by the price of the arcs that
// change, each feasible with the route as it is; -1 where there is none.
type place3 struct {
	gap   [3]int
	price [3]float64
}

func (p *place3) reset() {
	p.gap = [3]int{-1, -1, -1}
	p.price = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
}

func (p *place3) add(gap int, price float64) {
	switch {
	case price < p.price[0]:
		p.gap[2], p.price[2] = p.gap[1], p.price[1]
		p.gap[1], p.price[1] = p.gap[0], p.price[0]
		p.gap[0], p.price[0] = gap, price
	case price < p.price[1]:
		p.gap[2], p.price[2] = p.gap[1], p.price[1]
		p.gap[1], p.price[1] = gap, price
	case price < p.price[2]:
		p.gap[2], p.price[2] = gap, price
	}
}

// best is the cheapest of p's gaps not beside index k of the route's
// stops (the stop leaving it), or the gap that stop leaves, priced at
// inPlace: the gap of the route's stops, with k's stop out, to insert
// at (as an index into the stops before which it goes; k itself for the
// place left), and its price.
func (p *place3) best(k int, inPlace float64) (int, float64) {
	gap, price := k, inPlace
	for j := 0; j < 3; j++ {
		g := p.gap[j]
		if g < 0 {
			break
		}
		// Gaps k and k+1 lie beside the stop at index k.
		if g == k || g == k+1 {
			continue
		}
		if p.price[j] < price {
			gap, price = g, p.price[j]
		}
		break
	}
	return gap, price
}

// places sets, per stop of from, its three cheapest feasible gaps in to.
func (w *worker) places(from, to *route, out []place3) {
	tb := w.t
	for a, c := range from.stops {
		p := &out[a]
		p.reset()
		for i := tb.firstPlace(to, c); i <= len(to.stops); i++ {
			if to.a[i] > tb.late[c]+tol {
				break
			}
			w.work++
			if d, why := tb.check(to, c, i); why == "" {
				p.add(i, d)
			}
		}
	}
}

// swapStar exchanges a stop of vehicle v1's route with one of v2's, each
// going to its cheapest place in the other route (SWAP*, Vidal 2022):
// the exchange is priced from the three cheapest gaps of each stop in
// the other route and the place the other stop leaves, and the two
// routes are built and checked only when that saves, the cheapest
// first. It reports whether it exchanged.
func (w *worker) swapStar(s *solution, v1, v2 int32, index func(int32)) bool {
	tb := w.t
	r1, r2 := s.routes[v1], s.routes[v2]
	if len(r1.stops) == 0 || len(r2.stops) == 0 || r1.brk != nil || r2.brk != nil {
		return false
	}
	tr1, tr2 := tb.of(v1), tb.of(v2)
	in2 := w.swapBuf(&w.in2, len(r1.stops))
	in1 := w.swapBuf(&w.in1, len(r2.stops))
	w.places(r1, r2, in2)
	w.places(r2, r1, in1)
	// out is the saving of taking the stop at index k out of r, and
	// spliced the price of joining its neighbours through x.
	out := func(r *route, tr *travel, k int) (float64, int32, int32) {
		p, q := tb.node(r, k), tb.node(r, k+2)
		c := r.stops[k]
		return tr.price(tb.arc(p, c)) + tr.price(tb.arc(c, q)) - tr.price(tb.arc(p, q)), p, q
	}
	type pick struct {
		a, b       int // indexes in r1 and r2
		gap1, gap2 int // where b goes in r1, a in r2
		delta      float64
	}
	var picks [4]pick
	n := 0
	for a, c := range r1.stops {
		gainC, p1, q1 := out(r1, tr1, a)
		for b, u := range r2.stops {
			w.work++
			if !tb.swapFits(r1, r2, c, u) {
				continue
			}
			gainU, p2, q2 := out(r2, tr2, b)
			g2, add2 := in2[a].best(b, tr2.price(tb.arc(p2, c))+tr2.price(tb.arc(c, q2))-tr2.price(tb.arc(p2, q2)))
			g1, add1 := in1[b].best(a, tr1.price(tb.arc(p1, u))+tr1.price(tb.arc(u, q1))-tr1.price(tb.arc(p1, q1)))
			d := add1 + add2 - gainC - gainU
			if d >= -tol {
				continue
			}
			// Keep the four cheapest, in order.
			k := n
			if n < len(picks) {
				n++
			} else if d >= picks[n-1].delta {
				continue
			} else {
				k = n - 1
			}
			for k > 0 && picks[k-1].delta > d {
				picks[k] = picks[k-1]
				k--
			}
			picks[k] = pick{a, b, g1, g2, d}
		}
	}
	for _, pk := range picks[:n] {
		s1 := swapped(r1.stops, pk.a, r2.stops[pk.b], pk.gap1)
		s2 := swapped(r2.stops, pk.b, r1.stops[pk.a], pk.gap2)
		w.work += int64(len(s1) + len(s2))
		n1, n2 := w.build(v1, s1), w.build(v2, s2)
		if n1 == nil || n2 == nil {
			w.discard(n1, false)
			w.discard(n2, false)
			continue
		}
		after, before := n1.cost+n2.cost, r1.cost+r2.cost
		if tb.extras {
			after += n1.extra + n2.extra - r1.extra - r2.extra
		}
		if after >= before-tol {
			w.discard(n1, false)
			w.discard(n2, false)
			continue
		}
		w.set(s, v1, n1)
		w.set(s, v2, n2)
		s.where[r2.stops[pk.b]], s.where[r1.stops[pk.a]] = v1, v2
		index(v1)
		index(v2)
		return true
	}
	return false
}

// swapped is stops without the stop at index k and with x inserted
// before index gap of stops (gap k: in the place the stop leaves).
func swapped(stops []int32, k int, x int32, gap int) []int32 {
	out := make([]int32, 0, len(stops)+4)
	for j := 0; j <= len(stops); j++ {
		if j == gap {
			out = append(out, x)
		}
		if j < len(stops) && j != k {
			out = append(out, stops[j])
		}
	}
	return out
}

// swapFits reports whether stops c of r1 and u of r2 may trade routes:
// each vehicle has the other stop's capabilities and the loads fit.
func (t *tables) swapFits(r1, r2 *route, c, u int32) bool {
	if t.needs[c]&^t.has[r2.v] != 0 || t.needs[u]&^t.has[r1.v] != 0 {
		return false
	}
	dc, du := &t.demand[c], &t.demand[u]
	for d := 0; d < 3; d++ {
		if r1.load[d]-dc[d]+du[d] > t.room[r1.v][d]+tol || r2.load[d]-du[d]+dc[d] > t.room[r2.v][d]+tol {
			return false
		}
	}
	return true
}

// swapBuf is *buf with room for n entries.
func (w *worker) swapBuf(buf *[]place3, n int) []place3 {
	if cap(*buf) < n {
		*buf = make([]place3, n)
	}
	return (*buf)[:n]
}

// swapStars tries SWAP* between every two routes of s with stops near
// each other (a stop of one among the polishNear nearest of a stop of
// the other), and reports whether it exchanged any stops.
func (w *worker) swapStars(s *solution, index func(int32)) bool {
	tb := w.t
	nv := len(s.routes)
	pair := make([]bool, nv*nv)
	for c := int32(0); c < int32(tb.n); c++ {
		v := s.where[c]
		if v < 0 {
			continue
		}
		near := tb.adj[c][1:min(len(tb.adj[c]), polishNear+1)]
		w.work += int64(len(near))
		for _, nb := range near {
			if v2 := s.where[nb]; v2 >= 0 && v2 != v {
				pair[int(min(v, v2))*nv+int(max(v, v2))] = true
			}
		}
	}
	moved := false
	for k, ok := range pair {
		if ok && w.swapStar(s, int32(k/nv), int32(k%nv), index) {
			moved = true
		}
	}
	return moved
}
