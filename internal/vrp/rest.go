package vrp

import "math"

// take is when a vehicle ready at tm ends break b, and whether b can
// begin by its latest start.
func take(b *Break, tm float64) (float64, bool) {
	s := fmax(tm, b.Start)
	if s > b.End-b.Minutes+tol {
		return 0, false
	}
	return s + b.Minutes, true
}

// depart is when r's vehicle leaves position i at the earliest: after
// the service, and after the breaks it takes there.
func (t *tables) depart(r *route, i int) float64 {
	d := r.a[i] + t.service[t.node(r, i)]
	if r.brk != nil {
		d = t.rested(r, i, d)
	}
	return d
}

// rested is when r's vehicle, ready at d, ends the breaks it takes at
// position i.
func (t *tables) rested(r *route, i int, d float64) float64 {
	for k, at := range r.brk {
		if int(at) == i {
			b := &t.brks[r.v][k]
			d = fmax(d, b.Start) + b.Minutes
		}
	}
	return d
}

// forward sets r's earliest starts from position from on.
func (t *tables) forward(r *route, from int) {
	tr := t.of(r.v)
	prev := t.node(r, from-1)
	for i := from; i <= len(r.stops)+1; i++ {
		cur := t.node(r, i)
		r.a[i] = fmax(t.depart(r, i-1)+tr.minutes[t.arc(prev, cur)], t.early[cur])
		prev = cur
	}
}

// backward sets r's latest starts from position from down to 0. A break
// taken at a position must begin by the latest departure that keeps the
// rest on time, less its length, and by its own latest start; when its
// window opens after that, no start there is on time.
func (t *tables) backward(r *route, from int) {
	tr := t.of(r.v)
	next := t.node(r, from+1)
	for i := from; i >= 0; i-- {
		cur := t.node(r, i)
		leave := r.z[i+1] - tr.minutes[t.arc(cur, next)]
		for k := len(r.brk) - 1; k >= 0; k-- {
			if int(r.brk[k]) != i {
				continue
			}
			b := &t.brks[r.v][k]
			leave = fmin(leave, b.End) - b.Minutes
			if b.Start > leave+tol {
				leave = math.Inf(-1)
			}
		}
		r.z[i] = fmin(t.late[cur], leave-t.service[cur])
		next = cur
	}
}

// placeBreaks sets r.brk (r timed without breaks so far): its vehicle's
// breaks, in order, where the route returns soonest. Leaving a position
// earlier never makes anything later fail, so keeping, per position and
// per number of breaks taken, only the earliest departure is exact
// (dynamic programming; Problem.restAt is the same search over a walked
// route). Several breaks may be taken at one position. When no placing
// is on time every break goes after the last position, whose check then
// fails.
func (t *tables) placeBreaks(r *route) {
	bs := t.brks[r.v]
	nb, m := len(bs), len(r.stops)
	r.brk = make([]int32, nb)
	tr := t.of(r.v)
	inf := math.Inf(1)
	dep := make([]float64, nb+1)
	took := make([]bool, (m+1)*(nb+1))
	for j := range dep {
		dep[j] = inf
	}
	dep[0] = r.a[0] + t.service[t.start[r.v]]
	prev := t.start[r.v]
	for i := 0; i <= m; i++ {
		if i > 0 {
			cur := r.stops[i-1]
			mins := tr.minutes[t.arc(prev, cur)]
			for j := range dep {
				a := fmax(dep[j]+mins, t.early[cur])
				if a > t.late[cur]+tol {
					dep[j] = inf
					continue
				}
				dep[j] = a + t.service[cur]
			}
			prev = cur
		}
		for j := range bs {
			if math.IsInf(dep[j], 1) {
				continue
			}
			if e, ok := take(&bs[j], dep[j]); ok && e < dep[j+1]-tol {
				dep[j+1], took[i*(nb+1)+j+1] = e, true
			}
		}
	}
	if back := dep[nb] + tr.minutes[t.arc(prev, t.end[r.v])]; math.IsInf(back, 1) || back > t.zEnd[r.v]+tol {
		for k := range r.brk {
			r.brk[k] = int32(m)
		}
		return
	}
	for i, j := m, nb; j > 0; {
		if took[i*(nb+1)+j] {
			j--
			r.brk[j] = int32(i)
			continue
		}
		i--
	}
}

// splitCheck tries stop c after position i of r, where r takes some of
// its breaks, with the first of those breaks before c and the others
// after it, for every split but all before (check's first try); it
// returns "" when one keeps the route on time, why otherwise.
func (t *tables) splitCheck(r *route, c int32, i int, toC, fromC float64, why Reason) Reason {
	lo, hi := -1, -1
	for k, at := range r.brk {
		if int(at) == i {
			if lo < 0 {
				lo = k
			}
			hi = k + 1
		}
	}
	if lo < 0 {
		return why
	}
	leave := r.a[i] + t.service[t.node(r, i)]
	for j := lo; j < hi; j++ {
		if j > lo {
			var ok bool
			if leave, ok = take(&t.brks[r.v][j-1], leave); !ok {
				return why
			}
		}
		if t.timeCheck(r, c, i, leave, toC, fromC, j, hi) == "" {
			return ""
		}
	}
	return why
}
