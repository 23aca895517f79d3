package vrp

import "math"

// tol absorbs rounding in the time and limit checks.
const tol = 1e-9

// route is one vehicle's stops with what makes an insertion check
// constant-time: per position (0 is the start, len(stops)+1 the end) the
// earliest service start a and the latest service start z that keeps
// every later stop and the return on time, plus the load and distance.
// A route is never changed once built: solutions share them.
type route struct {
	v     int32
	stops []int32
	a, z  []float64
	load  [3]float64
	km    float64
	cost  float64 // the goal's price of its arcs
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

// newRoute builds vehicle v's route over stops, which it keeps.
func (t *tables) newRoute(v int32, stops []int32) *route {
	m := len(stops)
	buf := make([]float64, 2*(m+2))
	r := &route{v: v, stops: stops, a: buf[:m+2], z: buf[m+2:]}
	ve := &t.p.Vehicles[v]
	r.a[0] = ve.ShiftStart
	prev := t.start[v]
	for i := 1; i <= m+1; i++ {
		cur := t.node(r, i)
		k := t.arc(prev, cur)
		r.km += t.m.Km[k]
		r.cost += t.cost[k]
		r.a[i] = math.Max(r.a[i-1]+t.service[prev]+t.m.Minutes[k], t.early[cur])
		prev = cur
	}
	r.z[m+1] = t.zEnd[v]
	next := t.end[v]
	for i := m; i >= 0; i-- {
		cur := t.node(r, i)
		r.z[i] = math.Min(t.late[cur], r.z[i+1]-t.m.Minutes[t.arc(cur, next)]-t.service[cur])
		next = cur
	}
	for _, s := range stops {
		for d := 0; d < 3; d++ {
			r.load[d] += t.demand[s][d]
		}
	}
	return r
}

// fits reports whether stop c's demand fits r's vehicle beside its load.
func (t *tables) fits(r *route, c int32) bool {
	cp := &t.capacity[r.v]
	for d := 0; d < 3; d++ {
		if r.load[d]+t.demand[c][d] > cp[d]+tol {
			return false
		}
	}
	return true
}

// check prices inserting stop c between positions i and i+1 of r, in
// constant time, and says which constraint refuses it otherwise.
func (t *tables) check(r *route, c int32, i int) (float64, Reason) {
	p, q := t.node(r, i), t.node(r, i+1)
	kpc, kcq, kpq := t.arc(p, c), t.arc(c, q), t.arc(p, q)
	arrive := r.a[i] + t.service[p] + t.m.Minutes[kpc]
	if arrive > t.late[c]+tol {
		return 0, ReasonTimeWindow
	}
	begin := math.Max(arrive, t.early[c])
	if begin+t.service[c]+t.m.Minutes[kcq] > r.z[i+1]+tol {
		if i+1 == len(r.stops)+1 {
			if begin+t.service[c]+t.m.Minutes[kcq] > t.p.Vehicles[r.v].ShiftEnd+tol {
				return 0, ReasonShiftEnd
			}
			return 0, ReasonRouteLimits
		}
		return 0, ReasonTimeWindow
	}
	if r.km+t.m.Km[kpc]+t.m.Km[kcq]-t.m.Km[kpq] > t.maxKm[r.v]+tol {
		return 0, ReasonRouteLimits
	}
	return t.cost[kpc] + t.cost[kcq] - t.cost[kpq], ""
}

// insert is r with stop c at position i+1 (after position i).
func (t *tables) insert(r *route, c int32, i int) *route {
	stops := make([]int32, 0, len(r.stops)+1)
	stops = append(append(append(stops, r.stops[:i]...), c), r.stops[i:]...)
	return t.newRoute(r.v, stops)
}

// without is r without the stops for which drop is true.
func (t *tables) without(r *route, drop func(k int) bool) *route {
	stops := make([]int32, 0, len(r.stops))
	for k, s := range r.stops {
		if !drop(k) {
			stops = append(stops, s)
		}
	}
	if len(stops) == 0 {
		return t.empty[r.v]
	}
	return t.newRoute(r.v, stops)
}
