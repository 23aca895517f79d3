package mapmatch

import "math"

// Smoothing a decided point's place along its path.
//
// A fix's place along the road is as noisy as the fix, so near a change
// of road the projection of the fix alone often falls on the wrong side
// of the junction. Once the path through the window is chosen, each
// point's place is a position along that path (meters from the decided
// point's place): where its fix is nearest to the path (its own road, or
// the road before or after it on the path), with the fix's variance, at
// the fix's time. A Rauch-Tung-Striebel smoother over those positions
// (the decided points before it and the window after it: up to Lag
// points and more, or as few as one where the point's paths met early,
// see Trace.Add), with a constant-velocity motion model whose
// acceleration is white noise of density smoothAccel, estimates the
// place from the fixes around it as well. A point decided early is
// decided only where its smoothed place lies a sigma or more inside its
// road (settledSigmas), or where the path goes on through the nearer end
// on the same way, class and limit (settledOn): the fixes still to come
// seldom move it that far, so not onto another road. Where the smoothed track stands (under 1
// m/s) its fixes' mean is placed on the path instead of each fix, and
// the track smoothed again: a fix off to the side of the road just
// before a turn is nearer the road after it, so that a vehicle waiting
// at a junction would otherwise be placed past it. A smoothed place a
// little past a junction of three or more roads is moved to just before
// it where standing there is likelier (see waitBefore). The point is reported at the smoothed place, never
// behind the previous point's nor past the next one's place, on
// whichever road of the path lies there. Points without times are not
// smoothed.

// smoothAccel is the motion model's acceleration noise: the spectral
// density of the white-noise acceleration, m²/s³.
const smoothAccel = 2.0

// standing is the speed (m/s) under which the smoothed track is read as
// standing.
const standing = 1.0

// smoothHistory is how many decided points before the one being decided
// the smoother reads.
const smoothHistory = 6

// histPoint is a decided point as the smoother remembers it: its time,
// its measured place along the path and that measurement's variance
// (meters from the last decided point's place on the path).
type histPoint struct {
	t, z, r float64
	speed   float64 // measured, m/s (NaN not known)
	x, y    float64 // the fix
}

// measure is fix (x, y)'s place along the path relative to candidate
// c's place, the fix being c's own (see measureNew); it is kept in c, as
// a step of the window is measured again at each decision.
func (n *network) measure(c *candidate, x, y float64, in, out *candidate) float64 {
	key := [2]int32{-1, -1} // the roads before and after, as measured
	if in != nil {
		key[0] = 2*in.edge + int32(b2i(in.bwd))
	}
	if out != nil {
		key[1] = 2*out.edge + int32(b2i(out.bwd))
	}
	if c.measured && c.mKey == key {
		return c.mz
	}
	z := n.measureNew(c, x, y, in, out)
	c.measured, c.mKey, c.mz = true, key, z
	return z
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// measureNew is point (x, y)'s place along the path relative to candidate
// c's place (meters, positive ahead): where the fix projects onto c's
// edge, or onto the edge the path comes from (in) or goes on to (out)
// where these join c's edge and the fix is nearer to them. Without them,
// a fix beyond an end of c's edge is measured along the edge's last
// segment there.
func (n *network) measureNew(c *candidate, x, y float64, in, out *candidate) float64 {
	l := n.length(c.edge)
	w := 3*math.Hypot(x-c.x, y-c.y) + 20 // the nearest place lies within this of c's, along the edge
	d, off, t := n.projectEdge(c.edge, x, y, c.off-w, c.off+w)
	z := off - c.off
	if c.bwd {
		z = -z
	}
	entry, exit := n.tail[c.edge], n.head[c.edge]
	fromEntry := c.off // c's meters from its entry junction
	if c.bwd {
		entry, exit, fromEntry = exit, entry, l-c.off
	}
	const near = 60 // meters of a neighbouring edge read
	clamped := t == 0 && off == 0 || t == 1 && off == l
	if in != nil && in.edge != c.edge && n.exitOf(in) == entry {
		a := n.fromJunction(in, entry, x, y, near, &d)
		if a >= 0 {
			z, clamped = -fromEntry-a, false
		}
	}
	if out != nil && out.edge != c.edge && n.entryOf(out) == exit {
		a := n.fromJunction(out, exit, x, y, near, &d)
		if a >= 0 {
			z, clamped = (l-fromEntry)+a, false
		}
	}
	if clamped { // beyond the edge's end: along its last segment there
		k := n.ptFirst[c.edge]
		if off > 0 {
			k = n.ptFirst[c.edge+1] - 2
		}
		dx, dy := n.x[k+1]-n.x[k], n.y[k+1]-n.y[k]
		if sl := math.Hypot(dx, dy); sl > 0 {
			px, py := n.along(c.edge, off)
			r := ((x-px)*dx + (y-py)*dy) / sl
			if c.bwd {
				r = -r
			}
			z += r
		}
	}
	return z
}

// exitOf and entryOf are the junctions where candidate c's road is
// left and entered in its direction of travel.
func (n *network) exitOf(c *candidate) int32 {
	if c.bwd {
		return n.tail[c.edge]
	}
	return n.head[c.edge]
}

func (n *network) entryOf(c *candidate) int32 {
	if c.bwd {
		return n.head[c.edge]
	}
	return n.tail[c.edge]
}

// fromJunction is the meters from junction j along c's edge to where
// (x, y) projects onto the part of that edge within near meters of j,
// when that projection is nearer than *d (which it then lowers); -1
// otherwise.
func (n *network) fromJunction(c *candidate, j int32, x, y, near float64, d *float64) float64 {
	l := n.length(c.edge)
	lo, hi := 0.0, min(near, l)
	atTail := n.tail[c.edge] == j && (n.head[c.edge] != j || !c.bwd)
	if !atTail {
		lo, hi = max(0, l-near), l
	}
	dd, off, _ := n.projectEdge(c.edge, x, y, lo, hi)
	if dd >= *d {
		return -1
	}
	*d = dd
	if atTail {
		return off
	}
	return l - off
}

// projectEdge is the nearest place to (x, y) on the part of edge e from
// lo to hi meters from its start: its distance, its meters from the
// start, and where it lies on the segment it was found on (0 to 1).
func (n *network) projectEdge(e int32, x, y, lo, hi float64) (d, off, t float64) {
	d = math.Inf(1)
	a, b := n.ptFirst[e], n.ptFirst[e+1]-1
	for k := a; k < b; k++ {
		if n.cum[k+1] < lo || n.cum[k] > hi {
			continue
		}
		px, py, tk := project(x, y, n.x[k], n.y[k], n.x[k+1], n.y[k+1])
		if dk := math.Hypot(px-x, py-y); dk < d {
			d, off, t = dk, n.cum[k]+tk*(n.cum[k+1]-n.cum[k]), tk
		}
	}
	return d, off, t
}

// speedSigma is the standard deviation (m/s) of a device's measured
// speed, as the smoother reads it: GPS receivers measure speed from the
// Doppler shift to a few tenths of a m/s in the open; 1 m/s allows for
// streets between buildings. A measured speed further than speedGate
// (m/s) from the speed the fixes alone give there is left out (see
// trustedSpeeds): a device that sends 0 while moving, or a stale value.
const (
	speedSigma = 1.0
	speedGate  = 3.0
)

// speedGap (s): a fix's measured speed is read only when a fix next to
// it is at most this far in time. Further apart, the speed at the moment
// of a fix says little of the way to the next (a vehicle slows for
// turns and stops between): on the simulated drives at 30 s it cost 0.1
// point of the right roads.
const speedGap = 10.0

// trustedSpeeds smooths the fixes alone into u and v, then leaves out
// of sp (in place) every measured speed further than speedGate from the
// smoothed speed at its fix, and those of fixes with no neighbour
// within speedGap. It returns sp, or nil when no speed is left.
func trustedSpeeds(ts, z, r []float64, q float64, u, v, sp []float64) []float64 {
	if sp == nil {
		return nil
	}
	rts(ts, z, r, q, u, v, nil)
	left := false
	for i, s := range sp {
		near := i > 0 && ts[i]-ts[i-1] <= speedGap || i+1 < len(ts) && ts[i+1]-ts[i] <= speedGap
		if !near || math.Abs(s-v[i]) > speedGate {
			sp[i] = math.NaN()
		}
		left = left || !math.IsNaN(sp[i])
	}
	if !left {
		return nil
	}
	return sp
}

// rts smooths measurements z (variance r) taken at times ts under a
// constant-velocity model with white-noise acceleration of density q
// (Rauch-Tung-Striebel): the positions into u and the speeds into v
// (both as long as z). sp, when not nil, holds a measured speed along
// the path at each time (NaN where none), of variance speedSigma².
func rts(ts, z, r []float64, q float64, u, v, sp []float64) {
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
		if sp != nil && !math.IsNaN(sp[i]) {
			sv := g.pvv + speedSigma*speedSigma
			res := sp[i] - g.v
			ku, kv := g.puv/sv, g.pvv/sv
			g = gauss{
				u:   g.u + ku*res,
				v:   g.v + kv*res,
				puu: g.puu - ku*g.puv,
				puv: g.puv - ku*g.pvv,
				pvv: g.pvv - kv*g.pvv,
			}
		}
		f[i] = g
	}
	su, sv := f[n-1].u, f[n-1].v
	u[n-1], v[n-1] = su, sv
	for i := n - 2; i >= 0; i-- {
		dt := max(ts[i+1]-ts[i], 1e-3)
		p, fi := pr[i+1], f[i]
		// the gain P_f Fᵀ P_pred⁻¹
		cuu, cuv := fi.puu+dt*fi.puv, fi.puv
		cvu, cvv := fi.puv+dt*fi.pvv, fi.pvv
		det := p.puu*p.pvv - p.puv*p.puv
		if !(det > 0) {
			su, sv = fi.u, fi.v
		} else {
			iuu, iuv, ivv := p.pvv/det, -p.puv/det, p.puu/det
			guu, guv := cuu*iuu+cuv*iuv, cuu*iuv+cuv*ivv
			gvu, gvv := cvu*iuu+cvv*iuv, cvu*iuv+cvv*ivv
			du, dv := su-p.u, sv-p.v
			su, sv = fi.u+guu*du+guv*dv, fi.v+gvu*du+gvv*dv
		}
		u[i], v[i] = su, sv
	}
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
	var tsBuf, zBuf, rBuf, spBuf [32]float64
	ts, z, r, sp := tsBuf[:0], zBuf[:0], rBuf[:0], spBuf[:0]
	speeds := false
	var xsBuf, ysBuf [32]float64
	xs, ys := xsBuf[:0], ysBuf[:0]
	for _, h := range t.hist {
		ts, z, r, sp = append(ts, h.t), append(z, h.z), append(r, h.r), append(sp, h.speed)
		xs, ys = append(xs, h.x), append(ys, h.y)
	}
	at := len(ts)
	// the chain's candidates, with the road before each (the last one
	// of another edge) and after it
	var cs [32]*candidate
	m := 1
	cs[0] = c
	for s := 1; s < len(t.window) && t.chain[s] >= 0 && m < len(cs); s++ {
		cs[m] = &t.window[s].cands[t.chain[s]]
		m++
	}
	var in *candidate
	if t.hasLast {
		in = &t.lastC
	}
	var ins [32]*candidate
	for s := range m {
		ins[s] = in
		if s+1 < m && cs[s+1].edge != cs[s].edge {
			in = cs[s]
		}
	}
	var outs [32]*candidate
	var out *candidate
	for s := m - 1; s >= 0; s-- {
		outs[s] = out
		if s > 0 && cs[s-1].edge != cs[s].edge {
			out = cs[s]
		}
	}
	z0 := n.measure(c, st.x, st.y, ins[0], outs[0])
	ts, z, r, sp = append(ts, st.t), append(z, z0), append(r, st.sigma*st.sigma), append(sp, st.speed)
	xs, ys = append(xs, st.x), append(ys, st.y)
	var us [32]float64 // the candidates' places along the path
	for s := 1; s < m; s++ {
		w := &t.window[s]
		us[s] = us[s-1] + cs[s].routeD
		ts, z, r, sp = append(ts, w.t), append(z, us[s]+n.measure(cs[s], w.x, w.y, ins[s], outs[s])), append(r, w.sigma*w.sigma), append(sp, w.speed)
		xs, ys = append(xs, w.x), append(ys, w.y)
	}
	t.hist = append(t.hist, histPoint{st.t, z0, st.sigma * st.sigma, st.speed, st.x, st.y})
	for _, v := range sp {
		speeds = speeds || !math.IsNaN(v)
	}
	if !speeds {
		sp = nil
	}
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
	var uBuf, vBuf [32]float64
	var su, sv []float64
	if len(z) <= len(uBuf) {
		su, sv = uBuf[:len(z)], vBuf[:len(z)]
	} else { // a long window
		su, sv = make([]float64, len(z)), make([]float64, len(z))
	}
	sp = trustedSpeeds(ts, z, r, smoothAccel, su, sv, sp)
	rts(ts, z, r, smoothAccel, su, sv, sp)
	// A vehicle standing: its fixes' places along the path, each the
	// nearest point of the path to the fix, are biased where the path
	// turns (a fix off to the side of the road before the turn is
	// nearer the road after it); the nearest point of the path to their
	// mean is not.
	changed := false
	for i := 0; i < len(z); {
		k := i + 1
		for k < len(z) && math.Abs(sv[k]) < standing && math.Abs(sv[i]) < standing {
			k++
		}
		if k-i >= 2 && k > at { // fixes i to k-1 stood, the window's among them
			var cx, cy float64
			for j := i; j < k; j++ {
				cx, cy = cx+xs[j], cy+ys[j]
			}
			cx, cy = cx/float64(k-i), cy/float64(k-i)
			ref := max(i, at) - at // a step of the window among them
			zc := us[ref] + n.measureNew(cs[ref], cx, cy, ins[ref], outs[ref])
			for j := i; j < k; j++ {
				z[j] = zc
			}
			changed = true
		}
		i = k
	}
	if changed {
		rts(ts, z, r, smoothAccel, su, sv, sp)
	}
	x := su[at]
	gap := 0.0 // seconds from the previous fix (the next one for the first)
	if at > 0 {
		gap = ts[at] - ts[at-1]
	} else if at+1 < len(ts) {
		gap = ts[at+1] - ts[at]
	}
	x = t.waitBefore(c, x, sv[at], gap, st.sigma, ins[0], outs[0])
	if hadLast {
		x = max(x, prevU)
	}
	if len(t.window) > 1 && t.chain[1] >= 0 {
		x = min(x, t.window[1].cands[t.chain[1]].routeD)
	}
	if math.IsNaN(x) || math.Abs(x) < 0.01 {
		return
	}
	t.lastU = x
	t.slide(c, x, prevU)
}

// slide moves candidate c of the window's oldest step x meters along
// the chosen path (forward when x > 0), onto the road of the path that
// lies there; the last decided point's place is at lastU.
func (t *Trace) slide(c *candidate, x, lastU float64) {
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
			pcs, _, _ = t.m.pieces(p, t.last.x, t.last.y, st.x, st.y, st.sigma, &a, &b)
			d = x - lastU
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

// A vehicle waits before a junction (at a light, a stop sign), not after
// it. A smoothed place a little past a junction of three or more roads
// is read as the vehicle standing before it when that is likelier: the
// place is Gaussian about the smoothed one (sd the fix's sigma); moving,
// the vehicle is anywhere along the path alike, while standing it is
// waitBack meters before the junction, with the weight of waitWeight
// meters of moving road times a Gaussian of the smoothed speed (sd
// waitSpeed per second between the fixes, at least 1 s: 3 m/s at 5 s,
// 18 m/s at 30 s, where the smoothed speed says little of whether the
// vehicle stood at the moment of the fix).
const (
	waitWeight = 160.0 // meters
	waitSpeed  = 0.6   // m/s per second between the fixes
	waitBack   = 4.0   // meters
	waitReach  = 2.0   // sigmas past the junction looked at
)

// waitBefore is smoothed place x (meters along the path from c's place,
// the path's roads before and after c's in and out), the smoothed speed
// there v, the fix gap seconds after the one before it, moved to 1 m
// before the junction of three or more roads it lies up to waitReach
// sigmas past, when standing before that junction is likelier than
// being past it (moving, or standing before the next junction of three
// or more roads, where a road is short).
func (t *Trace) waitBefore(c *candidate, x, v, gap, sigma float64, in, out *candidate) float64 {
	if !c.moving {
		return x
	}
	n := t.m.net
	l := n.length(c.edge)
	toExit, fromEntry := l-c.off, c.off
	if c.bwd {
		toExit, fromEntry = c.off, l-c.off
	}
	sv := waitSpeed * max(gap, 1)
	w := waitWeight / sigma * math.Exp(-0.5*(v/sv)*(v/sv)) / math.Sqrt(2*math.Pi)
	// j at meters along the path, the next junction k at next
	try := func(j int32, at float64, k int32, next float64) (float64, bool) {
		e := x - at // meters past the junction
		if e <= 0 || e > waitReach*sigma || n.outFirst[j+1]-n.outFirst[j] < 3 {
			return x, false
		}
		zs := (e + waitBack) / sigma
		before := 0.5*math.Erfc(e/sigma/math.Sqrt2) + w*math.Exp(-0.5*zs*zs)
		after := 0.5 * math.Erfc(-e/sigma/math.Sqrt2)
		if n.outFirst[k+1]-n.outFirst[k] >= 3 { // or standing before the next one
			zn := (x - (next - waitBack)) / sigma
			after += w * math.Exp(-0.5*zn*zn)
		}
		if before > after {
			return at - 1, true
		}
		return x, true
	}
	if out != nil && out.edge != c.edge && n.entryOf(out) == n.exitOf(c) {
		if y, ok := try(n.exitOf(c), toExit, n.exitOf(out), toExit+n.length(out.edge)); ok {
			return y
		}
	}
	if in != nil && in.edge != c.edge && n.exitOf(in) == n.entryOf(c) {
		if y, ok := try(n.entryOf(c), -fromEntry, n.exitOf(c), toExit); ok {
			return y
		}
	}
	return x
}
