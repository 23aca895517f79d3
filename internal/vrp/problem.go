package vrp

import (
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// Reason says which constraint kept a stop out of every route.
type Reason string

// The reasons, in the words the API answers with.
const (
	ReasonCapacity    Reason = "capacity"     // weight, volume or packages over a vehicle's capacity
	ReasonTimeWindow  Reason = "time_window"  // arrival after the stop's latest time
	ReasonShiftEnd    Reason = "shift_end"    // back at the end location after the shift ends
	ReasonRouteLimits Reason = "route_limits" // over MaxMinutes or MaxKm
	// ReasonCapability: no vehicle provides every need of the stop
	// (Stop.Needs against Vehicle.Has).
	ReasonCapability Reason = "missing_capability"
	// ReasonBreak: the vehicle's break fits nowhere in its window.
	ReasonBreak Reason = "break_window"
)

// Stop is a destination. Times are minutes (from midnight for the API,
// from the depot's opening in a Solomon instance).
type Stop struct {
	Lat, Lon                 float64 // degrees; plane X and Y when Problem.Planar
	Loc                      int     // row of Problem.Matrix, when it is set
	Weight, Volume, Packages float64
	Early, Late              float64 // the time window; Late is +Inf when open
	Service                  float64 // minutes spent at the stop
	Priority                 int     // 0 (low) to 3 (urgent); higher is kept first when not all fit
	// Needs is a set of capabilities (one bit each, the caller's
	// vocabulary) a vehicle must have to serve the stop: Needs&^Has == 0.
	Needs uint64
}

// Vehicle is one vehicle of the fleet. A capacity or limit of +Inf is
// unconstrained.
type Vehicle struct {
	StartLat, StartLon float64
	EndLat, EndLon     float64
	StartLoc, EndLoc   int // rows of Problem.Matrix, when it is set
	CapWeight          float64
	CapVolume          float64
	CapPackages        float64
	ShiftStart         float64 // minutes; the vehicle leaves its start then
	ShiftEnd           float64 // minutes; it must be back at its end by then
	MaxMinutes         float64 // longest route, in minutes
	MaxKm              float64 // longest route, in kilometres (plane units when Planar)
	// Profile picks the vehicle's travel when Problem.Matrix is set: 0
	// (or a number with no matrix of its own) travels by Matrix, k > 0 by
	// Problem.Profiles[k-1], such as the road costs of its costing.
	Profile int
	// Has is the set of capabilities the vehicle provides (Stop.Needs).
	Has uint64
	// A break of BreakMinutes (0: none) begins at or after BreakStart
	// and ends by BreakEnd, at the place the vehicle is at then (after
	// the shift starts or a stop's service, before it drives on).
	BreakStart, BreakEnd, BreakMinutes float64
}

// Serves reports whether vehicle v has every capability stop s needs.
func (v *Vehicle) Serves(s *Stop) bool { return s.Needs&^v.Has == 0 }

// Matrix is the travel between a caller's locations, row-major:
// Minutes[i*Size+j] and Km[i*Size+j] from location i to location j. It
// may be asymmetric.
type Matrix struct {
	Size    int
	Minutes []float64
	Km      []float64
}

// Goal is what the solver minimises once every stop it can place is
// placed (and, with Problem.MinimizeVehicles, once the fewest routes are
// found).
type Goal uint8

// The goals. Time is driving time: waiting and service are what the
// windows make them whatever the order.
const (
	GoalDistance Goal = iota // kilometres, driving minutes as a tie breaker
	GoalTime                 // driving minutes, kilometres as a tie breaker
	GoalCost                 // fuel and driver time priced by the cost model
)

// Problem is a VRPTW instance. The solver only reads it.
type Problem struct {
	Stops    []Stop
	Vehicles []Vehicle
	// AllowLate counts an arrival after a stop's window instead of
	// refusing it.
	AllowLate bool
	// Planar takes coordinates as plane units and travel time as equal
	// to distance (the Solomon benchmark's convention); otherwise
	// coordinates are degrees and travel follows the road model (Km,
	// Minutes).
	Planar bool
	// Matrix, when set, gives the travel between locations instead of
	// the coordinates: stops are at Stop.Loc, vehicles leave from
	// Vehicle.StartLoc and end at Vehicle.EndLoc.
	Matrix *Matrix
	// Profiles are further travel matrices over Matrix's locations (each
	// of Matrix.Size), for vehicles whose Profile names them; a fleet of
	// cars and bicycles drives the same places at different costs.
	Profiles []*Matrix
	// Goal is the objective after coverage.
	Goal Goal
	// MinimizeVehicles puts the number of routes before the goal.
	MinimizeVehicles bool
}

// The road model: the great-circle distance lengthened by Detour,
// driven at SpeedKmh.
const (
	Detour   = 1.3
	SpeedKmh = 40.0
)

// The cost model of a plan (Plan): fuel at FuelPerKm litres per
// kilometre (12 L/100 km), bought at FuelPrice USD a litre, and the
// driver's time at DriverPerHour USD an hour.
const (
	FuelPerKm     = 0.12
	FuelPrice     = 1.05
	DriverPerHour = 25.0
)

// Km is the road model's distance in kilometres between two positions.
func Km(lat1, lon1, lat2, lon2 float64) float64 {
	return geo.Distance(geo.Point{Lat: lat1, Lon: lon1}, geo.Point{Lat: lat2, Lon: lon2}) / 1000 * Detour
}

// Minutes is the road model's driving time over km kilometres.
func Minutes(km float64) float64 { return km / SpeedKmh * 60 }

// place is a position a route passes: coordinates and a matrix row.
type place struct {
	lat, lon float64
	loc      int
}

func (s *Stop) place() place     { return place{s.Lat, s.Lon, s.Loc} }
func (v *Vehicle) start() place  { return place{v.StartLat, v.StartLon, v.StartLoc} }
func (v *Vehicle) finish() place { return place{v.EndLat, v.EndLon, v.EndLoc} }

// travel is the matrix vehicle v travels by, nil without Problem.Matrix.
func (p *Problem) travel(v *Vehicle) *Matrix {
	if k := v.Profile; p.Matrix != nil && k > 0 && k <= len(p.Profiles) && p.Profiles[k-1] != nil {
		return p.Profiles[k-1]
	}
	return p.Matrix
}

// leg is the distance and the driving time from a to b by m, or by the
// coordinates when m is nil.
func (p *Problem) leg(m *Matrix, a, b place) (km, minutes float64) {
	if m != nil {
		k := a.loc*m.Size + b.loc
		return m.Km[k], m.Minutes[k]
	}
	if p.Planar {
		d := math.Hypot(a.lat-b.lat, a.lon-b.lon)
		return d, d
	}
	d := Km(a.lat, a.lon, b.lat, b.lon)
	return d, Minutes(d)
}

// arcCost is the goal's price of driving km kilometres in minutes.
func (g Goal) arcCost(km, minutes float64) float64 {
	switch g {
	case GoalTime:
		return minutes + 0.001*km
	case GoalCost:
		return km*FuelPerKm*FuelPrice + minutes/60*DriverPerHour
	}
	return km + 0.001*minutes
}

// Schedule is the evaluation of one vehicle's route.
type Schedule struct {
	OK      bool
	Why     Reason // the broken constraint when !OK
	Km      float64
	Minutes float64   // from the shift start to the return
	Late    int       // stops begun after their window (AllowLate only)
	Arrive  []float64 // per stop of the route
	Start   []float64 // per stop: service begins, after any wait
	// BreakAfter is how many stops of the route come before the
	// vehicle's break, -1 without one; BreakStart is when it begins.
	BreakAfter int
	BreakStart float64
}

// Eval times vehicle v along route (indexes into Stops), waiting at a
// stop until its window opens. A failed Schedule stops at the first
// broken constraint. It walks the route from its start and is the
// reference the solver's constant-time checks agree with. A vehicle with
// a break takes it where the route ends soonest (the latest such place
// on a tie), trying every place in turn.
func (p *Problem) Eval(v int, route []int) Schedule {
	return p.eval(&p.Vehicles[v], route)
}

func (p *Problem) eval(v *Vehicle, route []int) Schedule {
	for _, si := range route {
		if !v.Serves(&p.Stops[si]) {
			return Schedule{Why: ReasonCapability, BreakAfter: -1}
		}
	}
	if v.BreakMinutes <= 0 {
		return p.timeline(v, route, -1)
	}
	var best Schedule
	for k := 0; k <= len(route); k++ {
		s := p.timeline(v, route, k)
		if k == 0 || s.OK && (!best.OK || s.Minutes <= best.Minutes) || !best.OK && !s.OK && s.Why != ReasonBreak {
			best = s
		}
	}
	return best
}

// timeline times vehicle v along route with its break after brk stops
// (none when brk < 0).
func (p *Problem) timeline(v *Vehicle, route []int, brk int) Schedule {
	s := Schedule{OK: true, Arrive: make([]float64, len(route)), Start: make([]float64, len(route)), BreakAfter: brk}
	t := v.ShiftStart
	at := v.start()
	mx := p.travel(v)
	rest := func() bool {
		t = max(t, v.BreakStart)
		s.BreakStart = t
		if t > v.BreakEnd-v.BreakMinutes {
			s.OK, s.Why = false, ReasonBreak
			return false
		}
		t += v.BreakMinutes
		return true
	}
	var w, vol, pk float64
	for i, si := range route {
		if i == brk && !rest() {
			return s
		}
		st := &p.Stops[si]
		d, m := p.leg(mx, at, st.place())
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
		w, vol, pk = w+st.Weight, vol+st.Volume, pk+st.Packages
		at = st.place()
	}
	if brk == len(route) && !rest() {
		return s
	}
	if w > v.CapWeight || vol > v.CapVolume || pk > v.CapPackages {
		s.OK, s.Why = false, ReasonCapacity
		return s
	}
	d, m := p.leg(mx, at, v.finish())
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
// its own and, when none can, the constraint that refused it.
// A vehicle without the stop's capabilities names the reason only when
// no vehicle has them.
func (p *Problem) Servable(i int) (bool, Reason) {
	why := ReasonCapacity
	for v := range p.Vehicles {
		s := p.eval(&p.Vehicles[v], []int{i})
		if s.OK {
			return true, ""
		}
		if s.Why != ReasonCapability || v == 0 || why == ReasonCapability {
			why = s.Why
		}
	}
	return false, why
}
