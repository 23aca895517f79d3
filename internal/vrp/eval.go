package vrp

import (
	"math"
	"slices"
)

// Schedule is the evaluation of one vehicle's route.
type Schedule struct {
	OK      bool
	Why     Reason // the broken constraint when !OK
	Km      float64
	Minutes float64   // from the shift start to the return
	Late    int       // stops begun after their window (AllowLate only)
	Arrive  []float64 // per stop of the route
	Start   []float64 // per stop: service begins, after any wait
	// BreakAfter is, per break of the vehicle in order, how many stops
	// of the route come before it; BreakStart when it begins.
	BreakAfter []int
	BreakStart []float64
	// Over is the load beyond each capacity (weight, volume, packages),
	// which only Problem.Overload allows.
	Over [3]float64
}

// Eval times vehicle v along route (indexes into Stops), waiting at a
// stop until its window opens. A failed Schedule stops at the first
// broken constraint. It walks the route from its start and is the
// reference the solver's constant-time checks agree with. A vehicle with
// breaks takes them, in order, where the route returns soonest (restAt).
func (p *Problem) Eval(v int, route []int) Schedule {
	return p.eval(&p.Vehicles[v], route)
}

func (p *Problem) eval(v *Vehicle, route []int) Schedule {
	for _, si := range route {
		if !v.Serves(&p.Stops[si]) {
			return Schedule{Why: ReasonCapability}
		}
	}
	if len(v.Breaks) == 0 {
		return p.timeline(v, route, nil)
	}
	if at, ok := p.restAt(v, route); ok {
		return p.timeline(v, route, at)
	}
	// No place of the breaks keeps the route on time: the constraint
	// that fails without them, or the breaks themselves.
	if s := p.timeline(v, route, nil); !s.OK {
		return s
	}
	return Schedule{Why: ReasonBreak}
}

// restAt places v's breaks along route, in order, so that the vehicle
// returns soonest: after how many stops each is taken. Leaving a place
// earlier never makes anything later fail, so keeping per place and per
// number of breaks taken only the earliest departure is exact (dynamic
// programming over places and breaks). It reports false when no placing
// keeps every window, the breaks' own and the shift's.
func (p *Problem) restAt(v *Vehicle, route []int) ([]int, bool) {
	k := len(v.Breaks)
	m := len(route)
	inf := math.Inf(1)
	dep := make([]float64, k+1) // per breaks taken: the earliest departure
	took := make([]bool, (m+1)*(k+1))
	for j := range dep {
		dep[j] = inf
	}
	dep[0] = v.ShiftStart
	mx := p.travel(v)
	at := v.start()
	for i := 0; i <= m; i++ {
		if i > 0 {
			st := &p.Stops[route[i-1]]
			_, mins := p.leg(mx, at, st.place())
			for j := range dep {
				a := math.Max(dep[j]+mins, st.Early)
				if a > st.Late+tol && !p.AllowLate {
					dep[j] = inf
					continue
				}
				dep[j] = a + st.Service
			}
			at = st.place()
		}
		for j, b := range v.Breaks {
			if math.IsInf(dep[j], 1) {
				continue
			}
			s := math.Max(dep[j], b.Start)
			if s > b.End-b.Minutes+tol {
				continue
			}
			if e := s + b.Minutes; e < dep[j+1]-tol {
				dep[j+1], took[i*(k+1)+j+1] = e, true
			}
		}
	}
	_, mins := p.leg(mx, at, v.finish())
	if back := dep[k] + mins; math.IsInf(back, 1) || back > v.ShiftEnd+tol || back-v.ShiftStart > v.MaxMinutes+tol {
		return nil, false
	}
	out := make([]int, k)
	for i, j := m, k; j > 0; {
		if took[i*(k+1)+j] {
			j--
			out[j] = i
			continue
		}
		i--
	}
	return out, true
}

// timeline times vehicle v along route with break k after at[k] stops
// (none when at is nil).
func (p *Problem) timeline(v *Vehicle, route []int, at []int) Schedule {
	s := Schedule{OK: true, Arrive: make([]float64, len(route)), Start: make([]float64, len(route))}
	if at != nil {
		s.BreakAfter, s.BreakStart = at, make([]float64, len(at))
	}
	t := v.ShiftStart
	here := v.start()
	mx := p.travel(v)
	rest := func(i int) bool {
		for k, b := range v.Breaks {
			if at == nil || at[k] != i {
				continue
			}
			t = max(t, b.Start)
			s.BreakStart[k] = t
			if t > b.End-b.Minutes {
				s.OK, s.Why = false, ReasonBreak
				return false
			}
			t += b.Minutes
		}
		return true
	}
	var load [3]float64
	for i, si := range route {
		if !rest(i) {
			return s
		}
		st := &p.Stops[si]
		d, m := p.leg(mx, here, st.place())
		s.Km += d
		t += m
		s.Arrive[i] = t
		if t < st.Early {
			t = st.Early
		}
		if t > st.Late {
			if !p.AllowLate {
				s.OK, s.Why = false, ReasonTimeWindow
				return s
			}
			s.Late++
		}
		s.Start[i] = t
		t += st.Service
		load[0], load[1], load[2] = load[0]+st.Weight, load[1]+st.Volume, load[2]+st.Packages
		here = st.place()
	}
	if !rest(len(route)) {
		return s
	}
	for d, c := range [3]float64{v.CapWeight, v.CapVolume, v.CapPackages} {
		if load[d] > c {
			s.Over[d] = load[d] - c
			if load[d] > c*(1+p.Overload) {
				s.OK, s.Why = false, ReasonCapacity
				return s
			}
		}
	}
	d, m := p.leg(mx, here, v.finish())
	s.Km += d
	t += m
	s.Minutes = t - v.ShiftStart
	if t > v.ShiftEnd {
		s.OK, s.Why = false, ReasonShiftEnd
	}
	if s.Minutes > v.MaxMinutes || s.Km > v.MaxKm {
		s.OK, s.Why = false, ReasonRouteLimits
	}
	return s
}

// Servable reports whether some vehicle can serve stop i on a route of
// its own and, when none can, the constraint that refuses it: the one
// most vehicles refuse it with (Commonest of Refusals), so the reason
// is every vehicle's when they all refuse it alike.
func (p *Problem) Servable(i int) (bool, Reason) {
	why := make([]Reason, len(p.Vehicles))
	for v := range p.Vehicles {
		s := p.eval(&p.Vehicles[v], []int{i})
		if s.OK {
			return true, ""
		}
		why[v] = s.Why
	}
	return false, Commonest(why)
}

// Refusals is the constraint each vehicle refuses stop i with on a
// route of its own, by vehicle; "" for a vehicle that can serve it.
func (p *Problem) Refusals(i int) []Reason {
	why := make([]Reason, len(p.Vehicles))
	for v := range p.Vehicles {
		if s := p.eval(&p.Vehicles[v], []int{i}); !s.OK {
			why[v] = s.Why
		}
	}
	return why
}

// Commonest is the reason most of why give, the earliest of them on a
// tie, ignoring "" (a vehicle that serves the stop). A vehicle without
// the stop's capabilities counts only when no vehicle has them: the
// stop is then refused for missing_capability, and otherwise for what
// keeps the vehicles that have them from it. With no reason at all it
// is capacity.
func Commonest(why []Reason) Reason {
	count := map[Reason]int{}
	for _, w := range why {
		count[w]++
	}
	best := Reason("")
	for _, w := range why { // in order: the earliest wins a tie
		if w != "" && w != ReasonCapability && (best == "" || count[w] > count[best]) {
			best = w
		}
	}
	switch {
	case best != "":
		return best
	case slices.Contains(why, ReasonCapability):
		return ReasonCapability
	}
	return ReasonCapacity
}
