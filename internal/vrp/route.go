package vrp

// tol absorbs rounding in the time and limit checks.
const tol = 1e-9

// route is one vehicle's stops with what makes an insertion check
// constant-time: per position (0 is the start, len(stops)+1 the end) the
// earliest service start a and the latest service start z that keeps
// every later stop and the return on time, plus the load and distance.
// A route is changed only by the iteration that built it (gen), before
// any other solution can hold it; after that solutions share it.
type route struct {
	v     int32
	gen   uint64 // the worker's iteration that built it; 0 for shared ones
	stops []int32
	a, z  []float64
	// leg holds, per position i, the goal's price of the arc from it to
	// position i+1.
	leg   []float64
	load  [3]float64
	km    float64
	cost  float64 // the goal's price of its arcs
	needs uint64  // the capabilities its stops need
	// brk holds, per break of the vehicle in order, the position after
	// which it is taken, nil for a vehicle without breaks: a and z hold
	// them (the departure from such a position waits for each break's
	// window and lasts its length).
	brk []int32
	// extra is the price of the route beyond its arcs: its overload and
	// its service-quality term (Problem.OverloadPrice, Quality).
	extra float64
}

// node is the node at position i of r.
func (t *tables) node(r *route, i int) int32 {
	switch {
	case i == 0:
		return t.start[r.v]
	case i == len(r.stops)+1:
		return t.end[r.v]
	}
	return r.stops[i-1]
}

// newRoute builds vehicle v's route over stops, which it keeps. A
// vehicle with breaks takes them where the route returns soonest
// (placeBreaks); when they fit nowhere, some position's earliest start
// exceeds its latest (build refuses the route).
func (t *tables) newRoute(v int32, stops []int32) *route { return t.rebuild(nil, v, stops) }

// rebuild is newRoute in r, a route no plan holds any more, reusing its
// buffers where they are large enough; a new route when r is nil.
func (t *tables) rebuild(r *route, v int32, stops []int32) *route {
	m := len(stops)
	if r == nil {
		r = new(route)
	}
	a, z, leg := r.a, r.z, r.leg
	if cap(a) < m+2 || cap(z) < m+2 || cap(leg) < m+1 {
		a, z, leg = positions(m, routeSpare)
	}
	a, z, leg = a[:m+2], z[:m+2], leg[:m+1]
	*r = route{v: v, stops: stops, a: a, z: z, leg: leg}
	a[0] = t.p.Vehicles[v].ShiftStart
	tr := t.of(v)
	prev := t.start[v]
	for i := 1; i <= m+1; i++ {
		cur := t.end[v]
		if i <= m {
			cur = stops[i-1]
		}
		k := t.arc(prev, cur)
		r.km += tr.km[k]
		leg[i-1] = tr.price(k)
		r.cost += leg[i-1]
		mins := tr.minutes[k]
		a[i] = fmax(a[i-1]+t.service[prev]+mins, t.early[cur])
		// z[i-1] holds the minutes from position i-1 to i until the
		// backward pass below replaces it.
		z[i-1] = mins
		prev = cur
	}
	z[m+1] = t.zEnd[v]
	for i := m; i >= 0; i-- {
		cur := t.start[v]
		if i > 0 {
			cur = stops[i-1]
		}
		z[i] = fmin(t.late[cur], z[i+1]-z[i]-t.service[cur])
	}
	if len(t.brks[v]) > 0 {
		t.placeBreaks(r)
		t.forward(r, 1)
		t.backward(r, m)
	}
	for _, s := range stops {
		d := &t.demand[s]
		r.load[0], r.load[1], r.load[2] = r.load[0]+d[0], r.load[1]+d[1], r.load[2]+d[2]
		r.needs |= t.needs[s]
	}
	if t.extras {
		r.extra = t.extraOf(r)
	}
	return r
}

// routeSpare is how many stops a route built by newRoute can take in
// place (insert) before its positions move to a larger buffer.
const routeSpare = 4

// positions is a route of m stops' earliest starts, latest starts and
// legs (lengths m+2, m+2 and m+1), in one buffer with room for spare
// more stops in each.
func positions(m, spare int) (a, z, leg []float64) {
	n := m + 2 + spare
	buf := make([]float64, 3*n)
	return buf[: m+2 : n], buf[n : n+m+2 : 2*n], buf[2*n : 2*n+m+1 : 3*n]
}

// fmax and fmin are math.Max and math.Min for numbers that are never
// NaN, which the compiler inlines.
func fmax(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

func fmin(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

// fits reports whether r's vehicle has stop c's capabilities and c's
// demand fits it beside its load.
func (t *tables) fits(r *route, c int32) bool {
	if t.needs[c]&^t.has[r.v] != 0 {
		return false
	}
	cp := &t.room[r.v]
	for d := 0; d < 3; d++ {
		if r.load[d]+t.demand[c][d] > cp[d]+tol {
			return false
		}
	}
	return true
}

// check prices inserting stop c between positions i and i+1 of r, in
// constant time, and says which constraint refuses it otherwise. When
// r takes breaks at i, c may come after them, before them, or between
// them (splitCheck).
func (t *tables) check(r *route, c int32, i int) (float64, Reason) {
	p, q := t.node(r, i), t.node(r, i+1)
	kpc, kcq, kpq := t.arc(p, c), t.arc(c, q), t.arc(p, q)
	tr := t.of(r.v)
	if r.brk != nil && r.a[i] > r.z[i]+tol {
		// Breaks that fit nowhere, even without c.
		return 0, ReasonBreak
	}
	leave := r.a[i] + t.service[p]
	if r.brk != nil {
		leave = t.rested(r, i, leave)
	}
	why := t.timeCheck(r, c, i, leave, tr.minutes[kpc], tr.minutes[kcq], 0, 0)
	if why != "" && r.brk != nil {
		why = t.splitCheck(r, c, i, tr.minutes[kpc], tr.minutes[kcq], why)
	}
	if why != "" {
		return 0, why
	}
	if r.km+tr.km[kpc]+tr.km[kcq]-tr.km[kpq] > t.maxKm[r.v]+tol {
		return 0, ReasonRouteLimits
	}
	return tr.price(kpc) + tr.price(kcq) - tr.price(kpq), ""
}

// timeCheck is check's timing of c after position i of r, leaving there
// at leave: r's breaks from to to (exclusive) are taken after c.
func (t *tables) timeCheck(r *route, c int32, i int, leave, toC, fromC float64, from, to int) Reason {
	arrive := leave + toC
	if arrive > t.late[c]+tol {
		return ReasonTimeWindow
	}
	done := fmax(arrive, t.early[c]) + t.service[c]
	for k := from; k < to; k++ {
		var ok bool
		if done, ok = take(&t.brks[r.v][k], done); !ok {
			return ReasonBreak
		}
	}
	if done+fromC > r.z[i+1]+tol {
		if i+1 == len(r.stops)+1 {
			if done+fromC > t.p.Vehicles[r.v].ShiftEnd+tol {
				return ReasonShiftEnd
			}
			return ReasonRouteLimits
		}
		return ReasonTimeWindow
	}
	return ""
}

// insert is r with stop c at position i+1 (after position i): r itself
// when gen built it, a new route of generation gen otherwise, built in
// one of free's routes when it has any (free may be nil).
func (t *tables) insert(r *route, c int32, i int, gen uint64, free *[]*route) *route {
	if r.gen != gen || gen == 0 || r.brk != nil || t.extras {
		old := reuse(free)
		stops := spareStops(old, len(r.stops)+routeSpare)
		stops = append(append(append(stops, r.stops[:i]...), c), r.stops[i:]...)
		nr := t.rebuild(old, r.v, stops)
		nr.gen = gen
		return nr
	}
	p, q := t.node(r, i), t.node(r, i+1)
	kpc, kcq, kpq := t.arc(p, c), t.arc(c, q), t.arc(p, q)
	tr := t.of(r.v)
	r.km += tr.km[kpc] + tr.km[kcq] - tr.km[kpq]
	pc, cq := tr.price(kpc), tr.price(kcq)
	r.cost += pc + cq - r.leg[i]
	d := &t.demand[c]
	r.load[0], r.load[1], r.load[2] = r.load[0]+d[0], r.load[1]+d[1], r.load[2]+d[2]
	r.needs |= t.needs[c]
	if len(r.a) == cap(r.a) || len(r.z) == cap(r.z) || len(r.leg) == cap(r.leg) {
		// One buffer for the three, with room for as many stops again
		// as it holds (at least routeSpare), rather than three appends
		// that each allocate.
		a, z, leg := positions(len(r.stops), max(routeSpare, len(r.stops)))
		copy(a, r.a)
		copy(z, r.z)
		copy(leg, r.leg)
		r.a, r.z, r.leg = a, z, leg
	}
	if len(r.stops) == cap(r.stops) {
		r.stops = append(make([]int32, 0, 2*len(r.stops)+routeSpare), r.stops...)
	}
	r.stops = append(r.stops, 0)
	copy(r.stops[i+1:], r.stops[i:])
	r.stops[i] = c
	r.leg = append(r.leg, 0)
	copy(r.leg[i+2:], r.leg[i+1:])
	r.leg[i], r.leg[i+1] = pc, cq
	m := len(r.stops)
	// Positions up to i keep their earliest starts, those after i+1 their
	// latest starts (one place further on).
	r.a = append(r.a, 0)
	r.z = append(r.z, 0)
	copy(r.z[i+2:], r.z[i+1:m+1])
	// Where a recomputed start equals the one the same stop had before,
	// every start beyond it (earliest starts after it, latest before it)
	// is the one it had: the same arithmetic on the same numbers.
	a, z := r.a, r.z
	old := a[i+1] // the earliest start of the stop now at i+2, before
	a[i+1] = fmax(a[i]+t.service[p]+tr.minutes[t.arc(p, c)], t.early[c])
	prev := c
	for j := i + 2; j <= m+1; j++ {
		cur := t.end[r.v]
		if j <= m {
			cur = r.stops[j-1]
		}
		aj := fmax(a[j-1]+t.service[prev]+tr.minutes[t.arc(prev, cur)], t.early[cur])
		if aj == old {
			// a[j:m+1] still holds the old starts of positions j+1 on.
			copy(a[j+1:m+2], a[j:m+1])
			a[j] = aj
			break
		}
		old, a[j] = a[j], aj
		prev = cur
	}
	next := t.node(r, i+2)
	z[i+1] = fmin(t.late[c], z[i+2]-tr.minutes[t.arc(c, next)]-t.service[c])
	next = c
	for j := i; j >= 0; j-- {
		cur := t.start[r.v]
		if j > 0 {
			cur = r.stops[j-1]
		}
		zj := fmin(t.late[cur], z[j+1]-tr.minutes[t.arc(cur, next)]-t.service[cur])
		if zj == z[j] {
			break
		}
		z[j] = zj
		next = cur
	}
	return r
}

// without is r without the stops for which drop is true, built in one
// of free's routes when it has any (free may be nil).
func (t *tables) without(r *route, drop func(k int) bool, gen uint64, free *[]*route) *route {
	old := reuse(free)
	stops := spareStops(old, len(r.stops)+routeSpare)
	for k, s := range r.stops {
		if !drop(k) {
			stops = append(stops, s)
		}
	}
	if len(stops) == 0 {
		if old != nil {
			*free = append(*free, old)
		}
		return t.empty[r.v]
	}
	nr := t.rebuild(old, r.v, stops)
	nr.gen = gen
	return nr
}

// reuse takes a route from free, nil when it has none (or free is nil).
func reuse(free *[]*route) *route {
	if free == nil || len(*free) == 0 {
		return nil
	}
	l := *free
	r := l[len(l)-1]
	*free = l[:len(l)-1]
	return r
}

// spareStops is an empty list of stops with room for n: old's, a route
// no plan holds any more, when it has that room.
func spareStops(old *route, n int) []int32 {
	if old != nil && cap(old.stops) >= n {
		return old.stops[:0]
	}
	return make([]int32, 0, n)
}
