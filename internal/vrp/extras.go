package vrp

import "math"

// The plan's price beyond arcs, vehicles and penalties (tables.extras):
// each route's overload, service-quality and duration terms
// (route.extra), and the longest route's minutes (solution.longest),
// each priced as the Problem says.

// minutes is r's duration: from its vehicle's shift start to its
// earliest return, waits, services and breaks included.
func (t *tables) minutes(r *route) float64 {
	return r.a[len(r.stops)+1] - t.p.Vehicles[r.v].ShiftStart
}

// over is the load beyond vehicle v's capacities, summed over the three
// dimensions.
func (t *tables) over(v int32, load *[3]float64) float64 {
	var u float64
	for d, c := range t.capacity[v] {
		if load[d] > c {
			u += load[d] - c
		}
	}
	return u
}

// extraOf is r's price beyond its arcs: its overload, and every stop's
// minutes from its window's opening to its earliest service start times
// its quality weight.
func (t *tables) extraOf(r *route) float64 {
	var x float64
	if t.p.Overload > 0 {
		x += t.p.OverloadPrice * t.over(r.v, &r.load)
	}
	if t.p.Quality > 0 {
		for i, s := range r.stops {
			x += t.qw[s] * (r.a[i+1] - t.early[s])
		}
	}
	if t.p.Efficiency > 0 && len(r.stops) > 0 {
		x += t.p.Efficiency * t.minutes(r)
	}
	return x
}

// insertExtra estimates what inserting stop c after position i of r adds
// to s's price beyond the arcs: the overload exactly; c's own
// service-quality term from its earliest start (the stops after it may
// be pushed later too); and the longest route's growth, when r would
// outgrow it by the driving and service c adds (a wait may absorb some).
// The search's acceptance prices every candidate exactly (total).
func (t *tables) insertExtra(s *solution, r *route, c int32, i int) float64 {
	var x float64
	p, q := t.node(r, i), t.node(r, i+1)
	tr := t.of(r.v)
	if t.p.Overload > 0 {
		load := r.load
		for d := range load {
			load[d] += t.demand[c][d]
		}
		x += t.p.OverloadPrice * (t.over(r.v, &load) - t.over(r.v, &r.load))
	}
	if t.p.Quality > 0 {
		start := fmax(t.depart(r, i)+tr.minutes[t.arc(p, c)], t.early[c])
		x += t.qw[c] * (start - t.early[c])
	}
	if t.p.Balance > 0 {
		grow := tr.minutes[t.arc(p, c)] + t.service[c] + tr.minutes[t.arc(c, q)] - tr.minutes[t.arc(p, q)]
		if d := t.minutes(r) + fmax(grow, 0); d > s.longest {
			x += t.p.Balance * (d - s.longest)
		}
	}
	if t.p.Efficiency > 0 {
		// c's detour, its wait and its service push the return later by
		// at most their sum (a later wait may absorb some); an empty
		// route starts its minutes
		arrive := t.depart(r, i) + tr.minutes[t.arc(p, c)]
		grow := fmax(arrive, t.early[c]) - t.depart(r, i) + t.service[c] + tr.minutes[t.arc(c, q)] - tr.minutes[t.arc(p, q)]
		if len(r.stops) == 0 {
			grow += t.minutes(r)
		}
		x += t.p.Efficiency * fmax(grow, 0)
	}
	return x
}

// extraBound is more than the extras of any plan can add up to (the
// longest route and every stop's wait bounded by the fleet's horizon),
// or 0 when the horizon is open: a left-out stop's penalty adds it, so
// that serving a stop always pays.
func (t *tables) extraBound() float64 {
	p := t.p
	if p.Balance <= 0 && p.Quality <= 0 && p.Efficiency <= 0 {
		return 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for v := range p.Vehicles {
		lo, hi = math.Min(lo, p.Vehicles[v].ShiftStart), math.Max(hi, t.zEnd[v])
	}
	for i := range p.Stops {
		lo = math.Min(lo, p.Stops[i].Early)
	}
	h := hi - lo
	if math.IsInf(h, 0) || math.IsNaN(h) {
		return 0
	}
	b := p.Balance * h
	for _, w := range t.qw {
		b += w * h
	}
	b += p.Efficiency * h * float64(len(p.Vehicles))
	return b
}
