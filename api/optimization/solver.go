// Package optimization plans multi-vehicle routes with capacities, time
// windows and shifts (a VRPTW): cheapest feasible insertion in priority
// and deadline order, then relocate and 2-opt moves until none helps or
// the time budget ends. Travel is the great-circle distance with a 1.3
// detour factor at 40 km/h (documented in docs/optimization.md).
package optimization

import (
	"math"
	"sort"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
)

// stop is a destination as the solver sees it.
type stop struct {
	idx         int
	lat, lon    float64
	w, v, p     float64 // weight, volume, packages
	early, late float64 // minutes from midnight; late = +Inf when open
	service     float64
	priority    int
}

// fleetVehicle as the solver sees it.
type fleetVehicle struct {
	idx                    int
	sLat, sLon, eLat, eLon float64
	capW, capV, capP       float64 // +Inf when unconstrained
	shiftStart, shiftEnd   float64
	maxDur, maxKm          float64
}

type problem struct {
	stops     []stop
	vehicles  []fleetVehicle
	allowLate bool
	// planar: coordinates are plane units and travel time equals
	// distance (the Solomon benchmark convention)
	planar bool
}

func (pr *problem) dist(lat1, lon1, lat2, lon2 float64) float64 {
	if pr.planar {
		return math.Hypot(lat1-lat2, lon1-lon2)
	}
	return km(lat1, lon1, lat2, lon2)
}

func (pr *problem) travel(d float64) float64 {
	if pr.planar {
		return d
	}
	return minutes(d)
}

const detour, kmh = 1.3, 40.0

func km(lat1, lon1, lat2, lon2 float64) float64 {
	return geo.Distance(geo.Point{Lat: lat1, Lon: lon1}, geo.Point{Lat: lat2, Lon: lon2}) / 1000 * detour
}

func minutes(k float64) float64 { return k / kmh * 60 }

// schedule is a route's evaluation.
type schedule struct {
	ok       bool
	km, mins float64
	late     int
	arrive   []float64
	start    []float64
	why      string
}

func (pr *problem) eval(v *fleetVehicle, route []int) schedule {
	s := schedule{ok: true, arrive: make([]float64, len(route)), start: make([]float64, len(route))}
	t := v.shiftStart
	lat, lon := v.sLat, v.sLon
	var w, vol, pk float64
	for i, si := range route {
		st := &pr.stops[si]
		d := pr.dist(lat, lon, st.lat, st.lon)
		s.km += d
		t += pr.travel(d)
		s.arrive[i] = t
		if t < st.early {
			t = st.early
		}
		if t > st.late {
			if !pr.allowLate {
				s.ok, s.why = false, "time_window"
				return s
			}
			s.late++
		}
		s.start[i] = t
		t += st.service
		w, vol, pk = w+st.w, vol+st.v, pk+st.p
		lat, lon = st.lat, st.lon
	}
	if w > v.capW || vol > v.capV || pk > v.capP {
		s.ok, s.why = false, "capacity"
		return s
	}
	d := pr.dist(lat, lon, v.eLat, v.eLon)
	s.km += d
	t += pr.travel(d)
	s.mins = t - v.shiftStart
	if t > v.shiftEnd {
		s.ok, s.why = false, "shift_end"
	}
	if s.mins > v.maxDur || s.km > v.maxKm {
		s.ok, s.why = false, "route_limits"
	}
	return s
}

func cost(s schedule) float64 { return s.km + 0.001*s.mins }

// solve returns routes per vehicle (stop indexes) and the unassigned stops
// with their reason; budget bounds the improvement phase.
func (pr *problem) solve(budget time.Duration) ([][]int, map[int]string, float64) {
	routes := make([][]int, len(pr.vehicles))
	evals := make([]schedule, len(pr.vehicles))
	for i := range pr.vehicles {
		evals[i] = pr.eval(&pr.vehicles[i], nil)
	}
	order := make([]int, len(pr.stops))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := pr.stops[order[a]], pr.stops[order[b]]
		if sa.priority != sb.priority {
			return sa.priority > sb.priority
		}
		return sa.late < sb.late
	})
	unassigned := map[int]string{}
	for _, si := range order {
		bestV, bestPos, bestDelta := -1, -1, math.Inf(1)
		why := "capacity"
		for vi := range pr.vehicles {
			r := routes[vi]
			for pos := 0; pos <= len(r); pos++ {
				cand := make([]int, 0, len(r)+1)
				cand = append(append(append(cand, r[:pos]...), si), r[pos:]...)
				ev := pr.eval(&pr.vehicles[vi], cand)
				if !ev.ok {
					why = ev.why
					continue
				}
				if d := cost(ev) - cost(evals[vi]); d < bestDelta {
					bestV, bestPos, bestDelta = vi, pos, d
				}
			}
		}
		if bestV < 0 {
			unassigned[si] = why
			continue
		}
		r := routes[bestV]
		routes[bestV] = append(append(append([]int{}, r[:bestPos]...), si), r[bestPos:]...)
		evals[bestV] = pr.eval(&pr.vehicles[bestV], routes[bestV])
	}
	before := 0.0
	for _, e := range evals {
		before += e.km
	}
	deadline := time.Now().Add(budget)
	for improved := true; improved && time.Now().Before(deadline); {
		improved = false
		// 2-opt inside each route
		for vi, r := range routes {
			for i := 0; i < len(r)-1 && time.Now().Before(deadline); i++ {
				for j := i + 1; j < len(r); j++ {
					cand := append([]int{}, r...)
					for a, b := i, j; a < b; a, b = a+1, b-1 {
						cand[a], cand[b] = cand[b], cand[a]
					}
					if ev := pr.eval(&pr.vehicles[vi], cand); ev.ok && cost(ev) < cost(evals[vi])-1e-9 {
						routes[vi], evals[vi], r, improved = cand, ev, cand, true
					}
				}
			}
		}
		// relocate a stop to another position or vehicle
		for va := range routes {
			for i := 0; i < len(routes[va]) && time.Now().Before(deadline); i++ {
				si := routes[va][i]
				rest := append(append([]int{}, routes[va][:i]...), routes[va][i+1:]...)
				evRest := pr.eval(&pr.vehicles[va], rest)
				if !evRest.ok {
					continue
				}
				gain := cost(evals[va]) - cost(evRest)
				for vb := range routes {
					base := routes[vb]
					baseEv := evals[vb]
					if vb == va {
						base, baseEv = rest, evRest
					}
					for pos := 0; pos <= len(base); pos++ {
						cand := append(append(append([]int{}, base[:pos]...), si), base[pos:]...)
						ev := pr.eval(&pr.vehicles[vb], cand)
						if !ev.ok {
							continue
						}
						if add := cost(ev) - cost(baseEv); add < gain-1e-9 {
							if vb == va {
								routes[va], evals[va] = cand, ev
							} else {
								routes[va], evals[va] = rest, evRest
								routes[vb], evals[vb] = cand, ev
							}
							improved = true
							goto next
						}
					}
				}
			next:
			}
		}
	}
	return routes, unassigned, before
}
