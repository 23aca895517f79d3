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
)

// Stop is a destination. Times are minutes (from midnight for the API,
// from the depot's opening in a Solomon instance).
type Stop struct {
	Lat, Lon                 float64 // degrees; plane X and Y when Problem.Planar
	Weight, Volume, Packages float64
	Early, Late              float64 // the time window; Late is +Inf when open
	Service                  float64 // minutes spent at the stop
	Priority                 int     // higher is inserted first
}

// Vehicle is one vehicle of the fleet. A capacity or limit of +Inf is
// unconstrained.
type Vehicle struct {
	StartLat, StartLon float64
	EndLat, EndLon     float64
	CapWeight          float64
	CapVolume          float64
	CapPackages        float64
	ShiftStart         float64 // minutes; the vehicle leaves its start then
	ShiftEnd           float64 // minutes; it must be back at its end by then
	MaxMinutes         float64 // longest route, in minutes
	MaxKm              float64 // longest route, in kilometres (plane units when Planar)
}

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

func (p *Problem) dist(lat1, lon1, lat2, lon2 float64) float64 {
	if p.Planar {
		return math.Hypot(lat1-lat2, lon1-lon2)
	}
	return Km(lat1, lon1, lat2, lon2)
}

func (p *Problem) travel(d float64) float64 {
	if p.Planar {
		return d
	}
	return Minutes(d)
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
}

// Eval times vehicle v along route (indexes into Stops), waiting at a
// stop until its window opens. A failed Schedule stops at the first
// broken constraint.
func (p *Problem) Eval(v int, route []int) Schedule {
	return p.eval(&p.Vehicles[v], route)
}

func (p *Problem) eval(v *Vehicle, route []int) Schedule {
	s := Schedule{OK: true, Arrive: make([]float64, len(route)), Start: make([]float64, len(route))}
	t := v.ShiftStart
	lat, lon := v.StartLat, v.StartLon
	var w, vol, pk float64
	for i, si := range route {
		st := &p.Stops[si]
		d := p.dist(lat, lon, st.Lat, st.Lon)
		s.Km += d
		t += p.travel(d)
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
		lat, lon = st.Lat, st.Lon
	}
	if w > v.CapWeight || vol > v.CapVolume || pk > v.CapPackages {
		s.OK, s.Why = false, ReasonCapacity
		return s
	}
	d := p.dist(lat, lon, v.EndLat, v.EndLon)
	s.Km += d
	t += p.travel(d)
	s.Minutes = t - v.ShiftStart
	if t > v.ShiftEnd {
		s.OK, s.Why = false, ReasonShiftEnd
	}
	if s.Minutes > v.MaxMinutes || s.Km > v.MaxKm {
		s.OK, s.Why = false, ReasonRouteLimits
	}
	return s
}

// objective is what the solver minimises: distance, with time as a tie
// breaker.
func objective(s Schedule) float64 { return s.Km + 0.001*s.Minutes }
