package mapmatch

import "math"

// Smoothing a decided point's place along its path.
//
// A fix's place along the road is as noisy as the fix, so near a change
// of road the projection of the fix alone often falls on the wrong side
// of the junction. Once the path through the window is chosen, each
// point's place is a position along that path (meters from the decided
// point's place) measured with the fix's noise at the fix's time; a
// Rauch-Tung-Striebel smoother over those positions, with a
// constant-velocity motion model whose acceleration is white noise of
// smoothAccel, estimates the place from the fixes before and after it
// as well, and the point is reported at the smoothed place, on whichever
// road of the path lies there. Points without times are not smoothed.

// smoothAccel is the motion model's acceleration noise: the spectral
// density of the white-noise acceleration, m²/s³.
var smoothAccel = 2.0

// smoothHistory is how many decided points before the one being decided
// the smoother reads.
const smoothHistory = 6

// histPoint is a decided point as the smoother remembers it: its time,
// its measured place along the path and that measurement's variance
// (meters from the last decided point's place on the path).
type histPoint struct {
	t, z, r float64
}

// measure is point (x, y)'s place along the path relative to candidate
// c's place: the fix's offset along the direction of travel there (0
// where c is the fix's projection inside a segment; the overshoot where
// the projection stopped at the end of the edge or the place was held).
func (n *network) measure(c *candidate, x, y float64) float64 {
	a, b := n.ptFirst[c.edge], n.ptFirst[c.edge+1]-1
	k := a
	for k < b-1 && n.cum[k+1] < c.off {
		k++
	}
	dx, dy := n.x[k+1]-n.x[k], n.y[k+1]-n.y[k]
	l := math.Hypot(dx, dy)
	if l == 0 {
		return 0
	}
	if c.bwd {
		dx, dy = -dx, -dy
	}
	return ((x-c.x)*dx + (y-c.y)*dy) / l
}

// rts is the smoothed position at index at of measurements z (variance
// r) taken at times ts, under a constant-velocity model with white-noise
// acceleration of density q.
func rts(ts, z, r []float64, q float64, at int) float64 {
	n := len(z)
	type gauss struct{ u, v, puu, puv, pvv float64 }
	var fBuf, pBuf [32]gauss
	var f, pr []gauss // filtered, predicted
	if n <= len(fBuf) {
		f, pr = fBuf[:n], pBuf[:n]
	} else {
		f, pr = make([]gauss, n), make([]gauss, n)
	}
	g := gauss{u: z[0], v: 0, puu: r[0] * 1e6, pvv: 30 * 30}
	for i := range n {
		if i > 0 {
			dt := max(ts[i]-ts[i-1], 1e-3)
			g = gauss{
				u:   g.u + dt*g.v,
				v:   g.v,
				puu: g.puu + 2*dt*g.puv + dt*dt*g.pvv + q*dt*dt*dt/3,
				puv: g.puv + dt*g.pvv + q*dt*dt/2,
				pvv: g.pvv + q*dt,
			}
		}
		pr[i] = g
		s := g.puu + r[i]
		ku, kv := g.puu/s, g.puv/s
		res := z[i] - g.u
		g = gauss{
			u:   g.u + ku*res,
			v:   g.v + kv*res,
			puu: (1 - ku) * g.puu,
			puv: (1 - ku) * g.puv,
			pvv: g.pvv - kv*g.puv,
		}
		f[i] = g
	}
	s := f[n-1]
	for i := n - 2; i >= at; i-- {
		dt := max(ts[i+1]-ts[i], 1e-3)
		p, fi := pr[i+1], f[i]
		// C = P_f F^T P_pred^-1
		cuu, cuv := fi.puu+dt*fi.puv, fi.puv
		cvu, cvv := fi.puv+dt*fi.pvv, fi.pvv
		det := p.puu*p.pvv - p.puv*p.puv
		if !(det > 0) {
			return f[at].u
		}
		iuu, iuv, ivv := p.pvv/det, -p.puv/det, p.puu/det
		guu, guv := cuu*iuu+cuv*iuv, cuu*iuv+cuv*ivv
		gvu, gvv := cvu*iuu+cvv*iuv, cvu*iuv+cvv*ivv
		du, dv := s.u-p.u, s.v-p.v
		s = gauss{u: fi.u + guu*du + guv*dv, v: fi.v + gvu*du + gvv*dv}
		// the covariances of the smoothed state are not needed for the means
	}
	return s.u
}

// smooth moves c, the chosen candidate of the window's oldest step (on
// the path t.chain), to its smoothed place along the path; linked says
// the path continues from the last decided point. It records the point
// for the decisions that follow.
func (t *Trace) smooth(c *candidate, linked bool) {
	n := t.m.net
	st := &t.window[0]
	if !linked || !t.hasLast {
		t.hist, t.hasLast = t.hist[:0], false
	} else { // into the frame of c's place
		for i := range t.hist {
			t.hist[i].z -= c.routeD
		}
		t.lastU -= c.routeD
	}
	var tsBuf, zBuf, rBuf [32]float64
	ts, z, r := tsBuf[:0], zBuf[:0], rBuf[:0]
	for _, h := range t.hist {
		ts, z, r = append(ts, h.t), append(z, h.z), append(r, h.r)
	}
	at := len(ts)
	z0 := n.measure(c, st.x, st.y)
	ts, z, r = append(ts, st.t), append(z, z0), append(r, st.sigma*st.sigma)
	u := 0.0
	for s := 1; s < len(t.window) && t.chain[s] >= 0; s++ {
		w := &t.window[s]
		k := &w.cands[t.chain[s]]
		u += k.routeD
		ts, z, r = append(ts, w.t), append(z, u+n.measure(k, w.x, w.y)), append(r, w.sigma*w.sigma)
	}
	t.hist = append(t.hist, histPoint{st.t, z0, st.sigma * st.sigma})
	if len(t.hist) > smoothHistory {
		t.hist = append(t.hist[:0], t.hist[1:]...)
	}
	timed := len(ts) >= 2
	for i := range ts {
		if !(ts[i] != 0) || i > 0 && ts[i] < ts[i-1] {
			timed = false
		}
	}
	prevU, hadLast := t.lastU, t.hasLast
	t.lastU = 0
	if !timed {
		return
	}
	x := rts(ts, z, r, smoothAccel, at)
	if hadLast {
		x = max(x, prevU, -c.routeD)
	}
	if len(t.window) > 1 && t.chain[1] >= 0 {
		x = min(x, t.window[1].cands[t.chain[1]].routeD)
	}
	if math.IsNaN(x) || math.Abs(x) < 0.01 {
		return
	}
	t.lastU = x
	t.slide(c, x)
}

// slide moves candidate c of the window's oldest step x meters along
// the chosen path (forward when x > 0), onto the road of the path that
// lies there.
func (t *Trace) slide(c *candidate, x float64) {
	n := t.m.net
	st := &t.window[0]
	l := n.length(c.edge)
	off := c.off + x
	if c.bwd {
		off = c.off - x
	}
	if off < 0 || off > l {
		var pcs []piece
		d := x
		p := t.m.pool.Get().(*paths)
		if x > 0 && len(t.window) > 1 && t.chain[1] >= 0 {
			next := &t.window[1]
			a := *c
			a.moving = true
			pcs, _, _ = t.m.pieces(p, st.x, st.y, next.x, next.y, next.sigma, &a, &next.cands[t.chain[1]])
		} else if x < 0 && t.hasLast {
			a, b := t.lastC, *c
			a.moving = true
			var total float64
			pcs, total, _ = t.m.pieces(p, t.last.x, t.last.y, st.x, st.y, st.sigma, &a, &b)
			d = total + x
		}
		t.m.pool.Put(p)
		if e, o, bwd, ok := placeAlong(pcs, d); ok {
			c.edge, off, c.bwd = e, o, bwd
		} else {
			off = max(0, min(l, off))
		}
	}
	c.off = off
	c.x, c.y = n.along(c.edge, off)
	c.dist = math.Hypot(c.x-st.x, c.y-st.y)
}

// placeAlong is the place d meters along the route pcs: its edge, its
// meters from the edge's start and whether the route runs against the
// edge's points there; false for an empty route.
func placeAlong(pcs []piece, d float64) (int32, float64, bool, bool) {
	if len(pcs) == 0 {
		return 0, 0, false, false
	}
	d = max(d, 0)
	acc := 0.0
	for _, pc := range pcs {
		l := math.Abs(pc.to - pc.from)
		if d <= acc+l {
			if pc.to < pc.from {
				return pc.edge, pc.from - (d - acc), true, true
			}
			return pc.edge, pc.from + (d - acc), false, true
		}
		acc += l
	}
	pc := pcs[len(pcs)-1]
	return pc.edge, pc.to, pc.to < pc.from, true
}
