package optimization

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/vrp"
)

// The request's bounds: the fleets of the largest Gehring–Homberger
// instances (1,000 customers, 250 vehicles).
const (
	MaxVehicles      = 250
	MaxDestinations  = 1000
	MaxMatrixSize    = MaxDestinations + 2*MaxVehicles
	DefaultTimeLimit = 2.0  // seconds
	MaxTimeLimit     = 60.0 // seconds
)

// Place is a location.
type Place struct {
	Latitude  *float64 `json:"latitude" required:"true"`
	Longitude *float64 `json:"longitude" required:"true"`
	Address   string   `json:"address,omitempty" doc:"at most 500 characters"`
}

// Capacity of a vehicle; missing fields are unconstrained.
type Capacity struct {
	Weight   *float64 `json:"weight,omitempty"`
	Volume   *float64 `json:"volume,omitempty"`
	Packages *float64 `json:"packages,omitempty" doc:"a whole number of packages, 0 or more"`
}

// Vehicle of the request.
type Vehicle struct {
	VehicleID     string        `json:"vehicle_id" required:"true" doc:"unique in the request; 1 to 200 characters, no control character"`
	Capacity      *Capacity     `json:"capacity,omitempty"`
	StartLocation *Place        `json:"start_location,omitempty" doc:"required unless start_index is given with a matrix"`
	EndLocation   *Place        `json:"end_location,omitempty" doc:"default the start"`
	StartIndex    *int          `json:"start_index,omitempty" doc:"row of matrix where the vehicle starts; required with a matrix"`
	EndIndex      *int          `json:"end_index,omitempty" doc:"row of matrix where the vehicle ends; default start_index"`
	DriverID      string        `json:"driver_id,omitempty" doc:"1 to 200 characters, no control character"`
	ShiftStart    string        `json:"shift_start,omitempty" doc:"HH:MM or HH:MM:SS, default 08:00"`
	ShiftEnd      string        `json:"shift_end,omitempty" doc:"HH:MM or HH:MM:SS, default 18:00"`
	BreakWindows  []BreakWindow `json:"break_windows,omitempty" doc:"at most 6, in order of start: the driver's breaks, each placed by the solver inside its window, in order, where the vehicle is"`
	VehicleType   string        `json:"vehicle_type,omitempty" enum:"van,car,auto,truck,electric,bicycle,pedestrian,bus,motorcycle,other" doc:"truck, bicycle or pedestrian picks that road costing (the others travel as auto); the type also gives the cost model: van 12, car or auto 8, truck 30, bus 35, motorcycle 5, electric, bicycle and pedestrian 0 L/100 km; other or left out, the default model (12 L/100 km) by car; a motorcycle carries no pallet, oversized item or liftgate; any other value is refused; see docs/optimization.md"`
	Restrictions  []string      `json:"restrictions,omitempty" enum:"refrigerated,hazmat,liftgate,pallet,oversized" doc:"capabilities the vehicle provides: refrigerated, hazmat, liftgate, pallet, oversized (a truck provides pallet and oversized unlisted; a bicycle or pedestrian cannot provide pallet, oversized, liftgate or hazmat)"`
	// The cost model beyond the interface: each replaces its vehicle
	// type's figure.
	FuelConsumption *float64 `json:"fuel_consumption_l_per_100km,omitempty" doc:"litres per 100 km, 0 to 1000; default the vehicle type's"`
	CostPerHour     *float64 `json:"cost_per_hour,omitempty" doc:"USD per hour of route time (the driver), 0 to 1000; default the vehicle type's (25)"`
	CostPerKm       *float64 `json:"cost_per_km,omitempty" doc:"USD per km besides fuel (wear, electricity), 0 to 1000; default the vehicle type's"`
}

// Requirements of a delivery.
type Requirements struct {
	Weight          float64  `json:"weight,omitempty"`
	Volume          float64  `json:"volume,omitempty"`
	Packages        float64  `json:"packages,omitempty" doc:"a whole number of packages, 0 or more"`
	SpecialHandling []string `json:"special_handling,omitempty" enum:"refrigerated,hazmat,liftgate,pallet,oversized" doc:"capabilities the serving vehicle must provide (its restrictions): refrigerated, hazmat, liftgate, pallet, oversized"`
}

// Window is a time window.
type Window struct {
	Earliest        string   `json:"earliest,omitempty" doc:"HH:MM or HH:MM:SS"`
	Latest          string   `json:"latest,omitempty" doc:"HH:MM or HH:MM:SS"`
	ServiceDuration *float64 `json:"service_duration,omitempty" doc:"minutes, may be fractional and may be 0, default 5"`
}

// Destination of the request.
type Destination struct {
	DestinationID        string        `json:"destination_id" required:"true" doc:"unique in the request; 1 to 200 characters, no control character"`
	Location             *Place        `json:"location,omitempty" doc:"required unless location_index is given with a matrix"`
	LocationIndex        *int          `json:"location_index,omitempty" doc:"row of matrix of the destination; required with a matrix"`
	DeliveryRequirements *Requirements `json:"delivery_requirements,omitempty"`
	TimeWindow           *Window       `json:"time_window,omitempty"`
	Priority             string        `json:"priority,omitempty" enum:"low,normal,high,urgent" doc:"when not every destination fits, higher priorities are kept first"`
	CustomerID           string        `json:"customer_id,omitempty" doc:"the customer's id, given back on the destination's route_sequence entry; 1 to 200 characters, no control character"`
	DeliveryNotes        string        `json:"delivery_notes,omitempty" doc:"at most 2000 characters"`
}

// Constraints of the request.
type Constraints struct {
	MaxRouteDuration        *float64        `json:"max_route_duration,omitempty" doc:"minutes from the shift start to the return, more than 0; absent: the shift alone bounds the route"`
	MaxRouteDistance        *float64        `json:"max_route_distance,omitempty" doc:"kilometers, more than 0; absent: no limit"`
	DriverBreakRequirements bool            `json:"driver_break_requirements,omitempty" doc:"true: a vehicle without break_windows whose shift (or max_route_duration, when shorter) is longer than 8 h takes 30 minutes beginning at most 8 h into its shift and ending at least 8 h before its latest return, so that it never drives 8 h without a break (the US hours-of-service 30-minute rule); over 16 h 30 min needs break_windows"`
	VehicleCapacityStrict   *bool           `json:"vehicle_capacity_strict,omitempty" doc:"default true: capacities are hard limits; false: a route may carry up to 20 % over each capacity, every unit over priced as an hour of driving and reported in capacity_overload"`
	TimeWindowViolations    string          `json:"time_window_violations,omitempty" enum:"none,allow" doc:"allow: a late arrival is counted, not refused"`
	TrafficRestrictions     map[string]bool `json:"traffic_restrictions,omitempty" doc:"avoid_toll_roads, avoid_highways, avoid_ferries: true leaves those roads out of the road network's travel costs (with --osm); true is refused with the request's matrix or without a road network; any other key is refused"`
	FuelEfficiencyPriority  float64         `json:"fuel_efficiency_priority,omitempty" doc:">= 0: the weight of fuel in the objective (with delivery_time_priority and cost_priority; only their ratios count)"`
	DeliveryTimePriority    float64         `json:"delivery_time_priority,omitempty" doc:">= 0: the weight of driving time in the objective"`
	CostPriority            float64         `json:"cost_priority,omitempty" doc:">= 0: the weight of cost (each vehicle's model) in the objective"`
}

// Matrix is the caller's own travel costs between locations, such as
// another routing engine's: row i, column j is from location i to
// location j. It may be asymmetric. Vehicles and destinations then name
// their rows (start_index, end_index, location_index).
type Matrix struct {
	Durations [][]float64 `json:"durations,omitempty" doc:"seconds, square, numbers >= 0; default the distances at 40 km/h"`
	Distances [][]float64 `json:"distances,omitempty" doc:"kilometers, square, numbers >= 0, the size of durations; default the durations at 40 km/h"`
}

// Options of the search.
type Options struct {
	TimeLimitSeconds *float64 `json:"time_limit_seconds,omitempty" doc:"the answer's time in seconds (road matrices and search), more than 0 and at most 60, default 2"`
	Seed             *int64   `json:"seed,omitempty" doc:"random seed, >= 0, default 0: the same request and seed give the same routes"`
	Alternatives     *int     `json:"alternatives,omitempty" doc:"runner-up plans to return, 0 to 5, default 0: the cheapest other plans the search met, in alternative_plans and in each route's alternative_routes"`
}

// Request is POST /api/v1/fleet/optimization/routes.
type Request struct {
	FleetID           string        `json:"fleet_id" required:"true" doc:"1 to 200 characters, no control character"`
	Vehicles          []Vehicle     `json:"vehicles" required:"true"`
	Destinations      []Destination `json:"destinations" required:"true"`
	Constraints       *Constraints  `json:"constraints,omitempty"`
	OptimizationGoals []string      `json:"optimization_goals,omitempty" enum:"minimize_time,minimize_distance,minimize_fuel,minimize_cost,minimize_vehicles,balance_workload,maximize_service_quality,maximize_efficiency" doc:"minimize_time, minimize_distance, minimize_fuel, minimize_cost (the first of these prices travel, default minimize_time; a later one only breaks its ties: minimize_distance after minimize_time or minimize_fuel, minimize_time after minimize_distance, any other later one is refused), minimize_vehicles (fewest routes first), balance_workload (the longest route), maximize_service_quality (early service, high priority first), maximize_efficiency (every route's minutes from shift start to return: less waiting)"`
	TimeWindows       *bool         `json:"time_windows,omitempty" doc:"default true; false: the plan ignores the destinations' windows, which still count in time_window_compliance"`
	RealTimeTraffic   *bool         `json:"real_time_traffic,omitempty" doc:"default true: cars' travel on the road network is timed at the speeds the organization's own trips were driven on each road over the last 28 days, in the hours of the week the shifts span today (UTC), free-flow where none were observed (cost_source road_network_traffic when any were). Absent, a request with a matrix or on a server without a road network is planned on those costs (cost_source says which; the insights say why); true as sent is refused there. false: free-flow"`
	DriverPreferences bool          `json:"driver_preferences,omitempty" doc:"false or absent; true is refused (the service holds no driver preferences)"`
	Matrix            *Matrix       `json:"matrix,omitempty"`
	Options           *Options      `json:"options,omitempty"`
}

// notNegative names each of the weight, volume and packages of the object
// named field that is negative, and packages that are not a whole number:
// a package is carried whole, so 1.5 packages are no load a route can
// state.
func notNegative(bad map[string]string, field string, weight, volume, packages float64) {
	for _, d := range []struct {
		name string
		v    float64
	}{{"weight", weight}, {"volume", volume}, {"packages", packages}} {
		if d.v < 0 {
			bad[field+"."+d.name] = "must not be negative"
		}
	}
	if packages >= 0 && packages != math.Trunc(packages) {
		bad[field+".packages"] = "must be a whole number of packages"
	}
}

// clockRefusal is the message for a time of day that does not parse.
const clockRefusal = "must be HH:MM or HH:MM:SS"

// clockTime parses HH:MM or HH:MM:SS into minutes from midnight; "" is def.
func clockTime(s string, def float64) (float64, bool) {
	if s == "" {
		return def, true
	}
	layout := "15:04"
	if strings.Count(s, ":") == 2 {
		layout = "15:04:05"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return 0, false
	}
	return float64(t.Hour()*60+t.Minute()) + float64(t.Second())/60, true
}

// clock writes minutes from midnight as HH:MM, or HH:MM:SS when seconds.
func clock(m float64, seconds bool) string {
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return ""
	}
	if seconds {
		ss := int(math.Round(m * 60))
		return fmt.Sprintf("%02d:%02d:%02d", (ss/3600)%24, ss/60%60, ss%60)
	}
	mm := int(math.Round(m))
	return fmt.Sprintf("%02d:%02d", (mm/60)%24, mm%60)
}

// usesSeconds reports whether any time of the request has seconds.
func usesSeconds(r *Request) bool {
	has := func(s string) bool { return strings.Count(s, ":") == 2 }
	for _, v := range r.Vehicles {
		if has(v.ShiftStart) || has(v.ShiftEnd) {
			return true
		}
		for _, w := range v.BreakWindows {
			if has(w.Start) || has(w.End) {
				return true
			}
		}
	}
	for _, d := range r.Destinations {
		if w := d.TimeWindow; w != nil && (has(w.Earliest) || has(w.Latest)) {
			return true
		}
	}
	return false
}

// place validates the place named field: its latitude and longitude are
// named each by its own path (vehicles[0].start_location.latitude), as
// every other request of the API names a place's coordinates.
func place(bad map[string]string, field string, p *Place) (float64, float64) {
	if p == nil {
		bad[field] = "is required"
		return 0, 0
	}
	var lat, lon float64
	switch {
	case p.Latitude == nil:
		bad[field+".latitude"] = "is required"
	case math.IsNaN(*p.Latitude) || *p.Latitude < -90 || *p.Latitude > 90:
		bad[field+".latitude"] = "must be between -90 and 90"
	default:
		lat = *p.Latitude
	}
	switch {
	case p.Longitude == nil:
		bad[field+".longitude"] = "is required"
	case math.IsNaN(*p.Longitude) || *p.Longitude < -180 || *p.Longitude > 180:
		bad[field+".longitude"] = "must be between -180 and 180"
	default:
		lon = *p.Longitude
	}
	if utf8.RuneCountInString(p.Address) > maxAddress {
		bad[field+".address"] = fmt.Sprintf("must be at most %d characters", maxAddress)
	}
	return lat, lon
}

// The longest id, address and notes the request takes, in characters:
// those of every other request of the API (a trip's vehicle and driver, an
// event's source, a trip's places, an incident's notes), as the plan's
// ids, addresses and notes are carried into its routes and the events its
// apply publishes.
const (
	maxID      = 200
	maxAddress = 500
	maxNotes   = 2000 // as an incident's description or notes
)

// checkID names an id of the request (field) that holds a control
// character or is longer than maxID characters, unless field is already
// named.
func checkID(bad map[string]string, field, id string) {
	if _, named := bad[field]; named {
		return
	}
	switch {
	case jsonpath.HasControl(id):
		bad[field] = jsonpath.ControlRefusal
	case utf8.RuneCountInString(id) > maxID:
		bad[field] = fmt.Sprintf("must be at most %d characters", maxID)
	}
}

func capOf(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}

var prio = map[string]int{"low": 0, "": 1, "normal": 1, "high": 2, "urgent": 3}

// built is a validated request: the problem and how to solve it.
type built struct {
	pr        *vrp.Problem
	timeLimit time.Duration
	seed      uint64
	alts      int           // runner-up plans asked for
	traffic   bool          // real_time_traffic true or absent: the fleet's observed speeds where there are any
	asked     bool          // real_time_traffic true as sent: refused where no speeds can be read
	avoid     routing.Avoid // the kinds of road traffic_restrictions leave out
}

// build validates a request into a problem; bad names each refused field.
// Check names every field of r at fault, by path (the checks of the
// request itself, which need no road network and change nothing); empty
// when there is none.
func (r *Request) Check() map[string]string {
	_, bad := build(r)
	return bad
}

func build(r *Request) (*built, map[string]string) {
	bad := map[string]string{}
	b := &built{pr: &vrp.Problem{}, timeLimit: time.Duration(DefaultTimeLimit * float64(time.Second))}
	if strings.TrimSpace(r.FleetID) == "" {
		bad["fleet_id"] = "is required"
	}
	checkID(bad, "fleet_id", r.FleetID)
	if len(r.Vehicles) == 0 || len(r.Vehicles) > MaxVehicles {
		bad["vehicles"] = fmt.Sprintf("1 to %d vehicles are required", MaxVehicles)
	}
	if len(r.Destinations) == 0 || len(r.Destinations) > MaxDestinations {
		bad["destinations"] = fmt.Sprintf("1 to %d destinations are required", MaxDestinations)
	}
	b.options(bad, r.Options)
	size := matrix(bad, b.pr, r.Matrix)
	c := r.Constraints
	if c != nil {
		switch c.TimeWindowViolations {
		case "", "none":
		case "allow":
			b.pr.AllowLate = true
		default:
			bad["constraints.time_window_violations"] = enum.Refusal("none", "allow")
		}
		if d := c.MaxRouteDuration; d != nil && !(*d > 0) {
			bad["constraints.max_route_duration"] = "must be greater than 0"
		}
		if d := c.MaxRouteDistance; d != nil && !(*d > 0) {
			bad["constraints.max_route_distance"] = "must be greater than 0"
		}
		b.avoid = trafficRestrictions(bad, c.TrafficRestrictions)
	}
	objective(bad, r, b.pr)
	b.traffic = r.RealTimeTraffic == nil || *r.RealTimeTraffic
	b.asked = r.RealTimeTraffic != nil && *r.RealTimeTraffic
	seen := map[string]bool{}
	for i, v := range r.Vehicles {
		b.pr.Vehicles = append(b.pr.Vehicles, vehicle(bad, fmt.Sprintf("vehicles[%d]", i), v, c, size, seen))
	}
	useWindows := r.TimeWindows == nil || *r.TimeWindows
	for i, d := range r.Destinations {
		b.pr.Stops = append(b.pr.Stops, destination(bad, fmt.Sprintf("destinations[%d]", i), d, useWindows, size, seen))
	}
	return b, bad
}

// options reads the search options.
func (b *built) options(bad map[string]string, o *Options) {
	if o == nil {
		return
	}
	if l := o.TimeLimitSeconds; l != nil {
		if !(*l > 0 && *l <= MaxTimeLimit) {
			bad["options.time_limit_seconds"] = fmt.Sprintf("must be more than 0 and at most %v", MaxTimeLimit)
		} else {
			b.timeLimit = time.Duration(*l * float64(time.Second))
		}
	}
	if s := o.Seed; s != nil {
		if *s < 0 {
			bad["options.seed"] = "must not be negative"
		} else {
			b.seed = uint64(*s)
		}
	}
	if a := o.Alternatives; a != nil {
		if *a < 0 || *a > MaxAlternatives {
			bad["options.alternatives"] = fmt.Sprintf("must be 0 to %d", MaxAlternatives)
		} else {
			b.alts = *a
		}
	}
}

// MaxAlternatives bounds options.alternatives.
const MaxAlternatives = 5

// matrix validates the caller's matrix into pr.Matrix and returns its
// size (0 without one).
func matrix(bad map[string]string, pr *vrp.Problem, m *Matrix) int {
	if m == nil {
		return 0
	}
	if m.Durations == nil && m.Distances == nil {
		bad["matrix"] = "durations or distances are required"
		return 0
	}
	n := len(m.Durations)
	if m.Durations == nil {
		n = len(m.Distances)
	}
	if n == 0 || n > MaxMatrixSize {
		bad["matrix"] = fmt.Sprintf("1 to %d locations are required", MaxMatrixSize)
		return 0
	}
	if m.Durations != nil && m.Distances != nil && len(m.Distances) != n {
		bad["matrix.distances"] = fmt.Sprintf("has %d rows, durations %d", len(m.Distances), n)
		return 0
	}
	mx := &vrp.Matrix{Size: n, Minutes: make([]float64, n*n), Km: make([]float64, n*n)}
	ok := square(bad, "matrix.durations", m.Durations, n, mx.Minutes, 1.0/60) &&
		square(bad, "matrix.distances", m.Distances, n, mx.Km, 1)
	if !ok {
		return 0
	}
	switch {
	case m.Durations == nil:
		for k, km := range mx.Km {
			mx.Minutes[k] = vrp.Minutes(km)
		}
	case m.Distances == nil:
		for k, min := range mx.Minutes {
			mx.Km[k] = min / 60 * vrp.SpeedKmh
		}
	}
	pr.Matrix = mx
	return n
}

// square copies rows, n×n numbers >= 0, into dst times scale; nil rows
// are absent and accepted.
func square(bad map[string]string, field string, rows [][]float64, n int, dst []float64, scale float64) bool {
	if rows == nil {
		return true
	}
	for i, row := range rows {
		if len(row) != n {
			bad[fmt.Sprintf("%s[%d]", field, i)] = fmt.Sprintf("has %d entries; the matrix is %d×%d", len(row), n, n)
			return false
		}
		for j, v := range row {
			if !(v >= 0) || math.IsInf(v, 0) {
				bad[fmt.Sprintf("%s[%d][%d]", field, i, j)] = "must be a finite number >= 0"
				return false
			}
			dst[i*n+j] = v * scale
		}
	}
	return true
}

// index validates a matrix row; size is 0 without a matrix.
func index(bad map[string]string, field string, ix *int, size int) int {
	if size == 0 {
		bad[field] = "needs a matrix"
		return 0
	}
	if *ix < 0 || *ix >= size {
		bad[field] = fmt.Sprintf("must be 0 to %d, a row of the matrix", size-1)
		return 0
	}
	return *ix
}

// vehicle validates vehicle f of the request.
func vehicle(bad map[string]string, f string, v Vehicle, c *Constraints, size int, seen map[string]bool) vrp.Vehicle {
	if v.VehicleID == "" || seen["v"+v.VehicleID] {
		bad[f+".vehicle_id"] = "is required and unique"
	}
	checkID(bad, f+".vehicle_id", v.VehicleID)
	checkID(bad, f+".driver_id", v.DriverID)
	seen["v"+v.VehicleID] = true
	fv := vrp.Vehicle{CapWeight: math.Inf(1), CapVolume: math.Inf(1), CapPackages: math.Inf(1), MaxMinutes: math.Inf(1), MaxKm: math.Inf(1)}
	switch {
	case v.StartIndex != nil:
		fv.StartLoc = index(bad, f+".start_index", v.StartIndex, size)
		fv.EndLoc = fv.StartLoc
	case size > 0:
		bad[f+".start_index"] = "is required with a matrix"
	}
	if v.EndIndex != nil {
		fv.EndLoc = index(bad, f+".end_index", v.EndIndex, size)
	}
	if v.StartLocation != nil || size == 0 {
		fv.StartLat, fv.StartLon = place(bad, f+".start_location", v.StartLocation)
		fv.EndLat, fv.EndLon = fv.StartLat, fv.StartLon
	}
	if v.EndLocation != nil {
		fv.EndLat, fv.EndLon = place(bad, f+".end_location", v.EndLocation)
	}
	if v.Capacity != nil {
		fv.CapWeight, fv.CapVolume, fv.CapPackages = capOf(v.Capacity.Weight), capOf(v.Capacity.Volume), capOf(v.Capacity.Packages)
		notNegative(bad, f+".capacity", fv.CapWeight, fv.CapVolume, fv.CapPackages)
	}
	var ok1, ok2 bool
	fv.ShiftStart, ok1 = clockTime(v.ShiftStart, 8*60)
	fv.ShiftEnd, ok2 = clockTime(v.ShiftEnd, 18*60)
	switch {
	case !ok1 || !ok2:
		if !ok1 {
			bad[f+".shift_start"] = clockRefusal
		}
		if !ok2 {
			bad[f+".shift_end"] = clockRefusal
		}
	case fv.ShiftEnd <= fv.ShiftStart:
		bad[f+".shift_end"] = "must be after shift_start"
	}
	if c != nil && c.MaxRouteDuration != nil && *c.MaxRouteDuration > 0 {
		fv.MaxMinutes = *c.MaxRouteDuration
	}
	if c != nil && c.MaxRouteDistance != nil && *c.MaxRouteDistance > 0 {
		fv.MaxKm = *c.MaxRouteDistance
	}
	fv.Has = vehicleCapabilities(bad, f, v)
	fv.Costs = vehicleCosts(bad, f, v)
	switch {
	case ok1 && ok2 && fv.ShiftEnd > fv.ShiftStart:
		breaks(bad, f, v, c, &fv)
	case len(v.BreakWindows) > MaxBreaks:
		bad[f+".break_windows"] = fmt.Sprintf("at most %d break windows per vehicle", MaxBreaks)
	default:
		// the windows' own fields are named beside the shift's problem;
		// how they fit the shift waits for a shift
		windowFields(bad, f, v.BreakWindows)
	}
	return fv
}

// destination validates destination f of the request.
func destination(bad map[string]string, f string, d Destination, useWindows bool, size int, seen map[string]bool) vrp.Stop {
	if d.DestinationID == "" || seen["d"+d.DestinationID] {
		bad[f+".destination_id"] = "is required and unique"
	}
	checkID(bad, f+".destination_id", d.DestinationID)
	checkID(bad, f+".customer_id", d.CustomerID)
	if utf8.RuneCountInString(d.DeliveryNotes) > maxNotes {
		bad[f+".delivery_notes"] = fmt.Sprintf("must be at most %d characters", maxNotes)
	}
	seen["d"+d.DestinationID] = true
	st := vrp.Stop{Early: 0, Late: math.Inf(1), Service: 5}
	switch {
	case d.LocationIndex != nil:
		st.Loc = index(bad, f+".location_index", d.LocationIndex, size)
	case size > 0:
		bad[f+".location_index"] = "is required with a matrix"
	}
	if d.Location != nil || size == 0 {
		st.Lat, st.Lon = place(bad, f+".location", d.Location)
	}
	if q := d.DeliveryRequirements; q != nil {
		notNegative(bad, f+".delivery_requirements", q.Weight, q.Volume, q.Packages)
		st.Weight, st.Volume, st.Packages = q.Weight, q.Volume, q.Packages
		st.Needs = capabilityBits(bad, f+".delivery_requirements.special_handling", q.SpecialHandling)
	}
	if tw := d.TimeWindow; tw != nil {
		e, ok1 := clockTime(tw.Earliest, 0)
		l, ok2 := clockTime(tw.Latest, math.Inf(1))
		switch {
		case !ok1 || !ok2:
			if !ok1 {
				bad[f+".time_window.earliest"] = clockRefusal
			}
			if !ok2 {
				bad[f+".time_window.latest"] = clockRefusal
			}
		case l < e:
			bad[f+".time_window.latest"] = "must not be before earliest"
		}
		if tw.ServiceDuration != nil && !(*tw.ServiceDuration >= 0 && *tw.ServiceDuration <= 24*60) {
			bad[f+".time_window.service_duration"] = "must be 0 to 1440 minutes"
		}
		if useWindows {
			st.Early, st.Late = e, l
		}
		if tw.ServiceDuration != nil {
			st.Service = *tw.ServiceDuration
		}
	}
	p, ok := prio[d.Priority]
	if !ok {
		bad[f+".priority"] = enum.Refusal("low", "normal", "high", "urgent")
	}
	st.Priority = p
	return st
}
