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
	// Breaks are the vehicle's breaks, taken in this order, each where
	// the vehicle is then (after the shift starts or a stop's service,
	// before it drives on); several may follow one another at one place.
	Breaks []Break
	// Costs is the vehicle's cost model; nil is DefaultCosts.
	Costs *Costs
}

// Break is a rest of Minutes (more than 0) that begins at or after Start
// and ends by End.
type Break struct {
	Start, End, Minutes float64
}

// Costs is a vehicle's cost model: FuelPerKm litres a kilometre (bought
// at FuelPrice), PerKm USD a kilometre besides fuel, PerHour USD an hour
// of route time (the driver's).
type Costs struct {
	FuelPerKm, PerKm, PerHour float64
}

// DefaultCosts is the cost model of a vehicle without one: 12 L/100 km
// and 25 USD an hour of driver time.
func DefaultCosts() Costs { return Costs{FuelPerKm: FuelPerKm, PerHour: DriverPerHour} }

// costs is v's cost model.
func (v *Vehicle) costs() Costs {
	if v.Costs == nil {
		return DefaultCosts()
	}
	return *v.Costs
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
	GoalCost                 // fuel, distance and driver time priced by each vehicle's Costs
	GoalFuel                 // litres by each vehicle's Costs, kilometres as a tie breaker
	GoalWeighted             // Problem.Weights of time, fuel and cost (objective.go)
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
	// Weights are GoalWeighted's shares of time, fuel and cost.
	Weights Weights
	// Balance is the price, in the goal's units, of a minute of the
	// longest route (from its shift start to its return); 0: none.
	Balance float64
	// Quality is the price, in the goal's units, of a minute between a
	// stop's window opening and its service start, times its priority's
	// weight (QualityWeight); 0: none.
	Quality float64
	// Efficiency is the price, in the goal's units, of a minute of each
	// route with stops (from its shift start to its return: driving,
	// waiting, service and breaks); 0: none.
	Efficiency float64
	// Overload is the share of each capacity a route may carry beyond it
	// (0: none), each unit over priced OverloadPrice in the goal's units.
	Overload, OverloadPrice float64
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
