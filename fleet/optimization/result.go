package optimization

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// Summary of an optimization.
type Summary struct {
	TotalVehicles     int     `json:"total_vehicles"`
	TotalDestinations int     `json:"total_destinations"`
	OptimizationTime  float64 `json:"optimization_time" doc:"seconds"`
	AlgorithmUsed     string  `json:"algorithm_used"`
	ConfidenceScore   float64 `json:"confidence_score" source:"computed" doc:"the share of the independent searches (2, each with its own seed and style) whose best plan costs within 0.1 % of the plan kept: 1 when every search found it again, 0.5 when one did not"`
	CostSource        string  `json:"cost_source" enum:"matrix,road_network,road_network_traffic,great_circle" doc:"where travel costs came from: the request's matrix, the server's road graph at free-flow speeds, the road graph with cars timed at the speeds the fleet was observed driving (real_time_traffic), or great-circle distance (no road graph loaded)"`
	Repeatable        bool    `json:"repeatable" doc:"the search ran its whole course, so the same request and seed give the same routes; false when the time limit cut it short"`
}

// Performance of the plan.
type Performance struct {
	TotalDistance           float64  `json:"total_distance" doc:"kilometers"`
	TotalTime               float64  `json:"total_time" doc:"minutes"`
	FuelConsumptionEstimate float64  `json:"fuel_consumption_estimate" doc:"liters: each route's distance at its vehicle's consumption"`
	CostEstimate            float64  `json:"cost_estimate" doc:"USD: each route's fuel at 1.05/L, distance at its vehicle's cost_per_km and time at its cost_per_hour"`
	DeliveryEfficiency      float64  `json:"delivery_efficiency" doc:"share of destinations assigned"`
	TimeWindowCompliance    *float64 `json:"time_window_compliance" doc:"percent of the served destinations whose service begins within their time_window (all day without one), the windows as sent even with time_windows false; null when none is served: there is no share of none"`
	// CapacityOverload is the load carried beyond capacities, with
	// vehicle_capacity_strict false.
	CapacityOverload *Load `json:"capacity_overload,omitempty" doc:"with vehicle_capacity_strict false: the load carried beyond the vehicles' capacities, summed over the routes"`
}

// Load is an amount in the capacity's dimensions.
type Load struct {
	Weight   float64 `json:"weight"`
	Volume   float64 `json:"volume"`
	Packages float64 `json:"packages"`
}

// Improvement against the first feasible plan (before local search).
type Improvement struct {
	DistanceSaved         float64  `json:"distance_saved" doc:"kilometers the search saved against the first plan (built by insertion before the search); 0 where it saved none"`
	TimeSaved             float64  `json:"time_saved" doc:"minutes of route time (shift start to return) saved against the first plan; 0 where none"`
	FuelSaved             float64  `json:"fuel_saved" doc:"liters saved against the first plan, by each vehicle's consumption; 0 where none"`
	CostSaved             float64  `json:"cost_saved" doc:"USD saved against the first plan, by each vehicle's cost model; 0 where none"`
	ImprovementPercentage *float64 `json:"improvement_percentage" doc:"distance_saved as a percent of the first plan's distance; null when the first plan drove none (it served nothing, or every leg costs 0 km): there is no percent of 0 km"`
}

// RouteSummary of one vehicle.
type RouteSummary struct {
	TotalDistance   float64 `json:"total_distance" doc:"kilometers"`
	TotalTime       float64 `json:"total_time" doc:"minutes from the shift start to the return: driving, waits, service and breaks"`
	TotalStops      int     `json:"total_stops" doc:"the deliveries"`
	EstimatedFuel   float64 `json:"estimated_fuel" doc:"liters: the distance at the vehicle's consumption"`
	RouteEfficiency float64 `json:"route_efficiency" doc:"service time over route time"`
	EstimatedCost   float64 `json:"estimated_cost" doc:"USD by the vehicle's cost model: fuel at 1.05/L, distance at cost_per_km, route time at cost_per_hour"`
	// CapacityOverload is what the route carries beyond its vehicle's
	// capacities, with vehicle_capacity_strict false.
	CapacityOverload *Load `json:"capacity_overload,omitempty" doc:"with vehicle_capacity_strict false: the load beyond the vehicle's capacity in each dimension, priced in the objective"`
}

// StopView is one stop of a route.
type StopView struct {
	Sequence        int     `json:"sequence"`
	DestinationID   string  `json:"destination_id,omitempty" doc:"absent on break and depot entries"`
	Location        *Place  `json:"location,omitempty" doc:"absent on a break: the vehicle waits where it is"`
	LocationIndex   *int    `json:"location_index,omitempty"`
	ArrivalTime     string  `json:"arrival_time" doc:"HH:MM, or HH:MM:SS when the request gave a time with seconds"`
	DepartureTime   string  `json:"departure_time" doc:"HH:MM, or HH:MM:SS when the request gave a time with seconds"`
	ActivityType    string  `json:"activity_type" enum:"depot_start,delivery,break,depot_end"`
	ServiceDuration float64 `json:"service_duration" doc:"minutes at the stop; a break's length"`
	Packages        float64 `json:"packages"`
	CustomerID      string  `json:"customer_id,omitempty" doc:"the destination's customer_id as sent; absent on break and depot entries and where none was sent"`
	DeliveryNotes   string  `json:"delivery_notes,omitempty"`
}

// Factor of the plan.
type Factor struct {
	Factor string   `json:"factor"`
	Weight *float64 `json:"weight" doc:"the term's price in the objective, in driving minutes (one minute of driving at 40 km/h by the default vehicle under the travel price) per unit of the term: the travel goal 1, workload_balance 10 per minute, service_quality and efficiency 1 per minute, capacity 60 per unit over; with constraints' *_priority weights each travel term's share of the travel price. null for what is not priced: coverage and vehicles (decided before every priced term) and hard constraints"`
	Impact string   `json:"impact"`
}

// Details of a route's optimization.
type Details struct {
	OptimizationFactors []Factor           `json:"optimization_factors"`
	AlternativeRoutes   []AlternativeRoute `json:"alternative_routes" source:"computed" doc:"null unless options.alternatives asks for runner-up plans; then this vehicle's route in each runner-up plan where it differs from this one (an empty list: every runner-up plan drives it as here)"`
	ConfidenceLevel     float64            `json:"confidence_level" source:"computed" doc:"the share of the independent searches whose best plan has a route of these stops (in any order, on any vehicle)"`
}

// AlternativeRoute is a vehicle's route in a runner-up plan.
type AlternativeRoute struct {
	RouteID                  string   `json:"route_id" doc:"plan-N/vehicle_id"`
	Name                     string   `json:"name" doc:"runner-up plan N"`
	Plan                     int      `json:"plan" doc:"the runner-up plan's number in alternative_plans, from 1"`
	DestinationIDs           []string `json:"destination_ids" doc:"in visiting order; empty when the vehicle stays at its depot in that plan"`
	DistanceKm               float64  `json:"distance_km"`
	EstimatedDurationMinutes float64  `json:"estimated_duration_minutes"`
	TotalStops               int      `json:"total_stops"`
	EfficiencyScore          float64  `json:"efficiency_score" doc:"service time over route time, as route_efficiency"`
	TimeDifferenceMinutes    float64  `json:"time_difference_minutes" doc:"this route's minutes minus the chosen route's"`
	FuelCostDifferenceUSD    float64  `json:"fuel_cost_difference_usd" doc:"this route's fuel at 1.05 USD/L minus the chosen route's"`
	TradeOffs                TradeOff `json:"trade_offs"`
}

// TradeOff compares a runner-up route, and its plan, with the chosen
// ones: each figure the runner-up's minus the chosen one's.
type TradeOff struct {
	DistanceDifferenceKm      float64 `json:"distance_difference_km"`
	CostDifferenceUSD         float64 `json:"cost_difference_usd" doc:"by the vehicle's cost model"`
	PlanDistanceDifferenceKm  float64 `json:"plan_distance_difference_km"`
	PlanTimeDifferenceMinutes float64 `json:"plan_time_difference_minutes"`
	PlanCostDifferenceUSD     float64 `json:"plan_cost_difference_usd"`
	PlanVehiclesDifference    int     `json:"plan_vehicles_difference" doc:"routes used"`
	PlanUnassignedDifference  int     `json:"plan_unassigned_difference" doc:"destinations left out"`
}

// AlternativePlan is a runner-up plan as a whole.
type AlternativePlan struct {
	Plan                    int      `json:"plan" doc:"from 1, cheapest first by what the search minimises"`
	TotalDistance           float64  `json:"total_distance" doc:"kilometers"`
	TotalTime               float64  `json:"total_time" doc:"minutes"`
	FuelConsumptionEstimate float64  `json:"fuel_consumption_estimate" doc:"liters"`
	CostEstimate            float64  `json:"cost_estimate" doc:"USD"`
	VehiclesUsed            int      `json:"vehicles_used"`
	UnassignedDestinations  int      `json:"unassigned_destinations"`
	TimeWindowCompliance    *float64 `json:"time_window_compliance" doc:"percent of the plan's served destinations whose service begins within their time_window, as performance_metrics.time_window_compliance; null when the plan serves none"`
	RoutesChanged           int      `json:"routes_changed" doc:"vehicles whose route differs from the chosen plan's"`
	// Routes are the plan's every route, the unchanged ones too.
	Routes []PlanRoute `json:"routes" doc:"every vehicle with destinations in this plan, in request order, with its destinations in visiting order (vehicles idle in the chosen plan included)"`
}

// PlanRoute is one vehicle's destinations in a runner-up plan.
type PlanRoute struct {
	VehicleID      string   `json:"vehicle_id"`
	DriverID       *string  `json:"driver_id" doc:"the vehicle's driver_id as sent; null when the vehicle has none"`
	DestinationIDs []string `json:"destination_ids"`
	DistanceKm     float64  `json:"distance_km"`
}

// RouteView is one vehicle's route.
type RouteView struct {
	VehicleID                string       `json:"vehicle_id"`
	DriverID                 *string      `json:"driver_id" doc:"the vehicle's driver_id as sent; null when the vehicle has none"`
	RouteSummary             RouteSummary `json:"route_summary"`
	RouteSequence            []StopView   `json:"route_sequence"`
	RouteOptimizationDetails Details      `json:"route_optimization_details"`
}

// Unassigned is a destination no vehicle could take: crowded out of the
// plan, or one no vehicle can serve even on a route of its own.
type Unassigned struct {
	DestinationID string `json:"destination_id"`
	Reason        string `json:"reason" enum:"capacity,time_window,shift_end,route_limits,missing_capability,break_window" doc:"the constraint that kept it out: time_window when a window (its own or a served stop's) leaves no place for it; shift_end or route_limits when the shift's end or max_route_duration/max_route_distance does; missing_capability when no vehicle provides every capability its special_handling needs; break_window when a vehicle's break leaves it no time"`
	// MissingCapabilities are what the vehicle closest to serving it
	// lacks, with missing_capability.
	MissingCapabilities []string `json:"missing_capabilities,omitempty" doc:"with missing_capability: the capabilities of special_handling that the vehicle closest to serving it lacks"`
	// ReasonDetail says the reason in words, for every vehicle when
	// none can serve it alone.
	ReasonDetail    string   `json:"reason_detail" doc:"the reason in words. When no vehicle can serve it even on a route of its own: each distinct cause with the vehicles it refuses, 'no vehicle can serve it on a route of its own: vehicles a, b lack refrigerated; vehicle c cannot carry its weight' (reason is then the constraint most vehicles refuse it with, the earliest vehicle's on a tie, missing_capability only when no vehicle provides its special_handling); otherwise that it was crowded out by the other destinations, naming a vehicle that could serve it alone"`
	Recommendations []string `json:"recommendations" doc:"what would let it in, each true of the request: split the delivery only when it is over every vehicle's capacity in some dimension; add a vehicle only when some vehicle could serve it on a route of its own; when none could, the advice of every constraint the vehicles refuse it with, the reason's first"`
}

// Insights of the plan.
type Insights struct {
	Bottlenecks     []string `json:"bottlenecks"`
	Recommendations []string `json:"recommendations"`
}

// Result is a stored optimization.
type Result struct {
	OptimizationID         string       `json:"optimization_id"`
	Status                 string       `json:"status" enum:"completed,applied"`
	FleetID                string       `json:"fleet_id"`
	CreatedAt              time.Time    `json:"created_at"`
	AppliedAt              *time.Time   `json:"applied_at,omitempty"`
	AppliedPlan            *int         `json:"applied_plan,omitempty" doc:"the runner-up plan applied (its number in alternative_plans); absent when the chosen plan was"`
	OptimizationSummary    Summary      `json:"optimization_summary"`
	PerformanceMetrics     Performance  `json:"performance_metrics"`
	ImprovementSummary     Improvement  `json:"improvement_summary"`
	OptimizedRoutes        []RouteView  `json:"optimized_routes"`
	UnassignedDestinations []Unassigned `json:"unassigned_destinations"`
	OptimizationInsights   Insights     `json:"optimization_insights"`
	// AlternativePlans are the runner-up plans options.alternatives asks
	// for.
	AlternativePlans []AlternativePlan `json:"alternative_plans,omitempty" doc:"with options.alternatives: the runner-up plans, cheapest first (fewer may exist than asked for); each vehicle's route in them is in its alternative_routes"`
}

func r2(v float64) float64 { return math.Round(v*100) / 100 }

// factors are the terms a plan of pr, built from req, was made under, in
// order, each with its price in the objective: driving minutes per unit
// of the term (travel, the reference, 1), nil for what is not priced
// (coverage and the number of vehicles come before every priced term;
// hard constraints refuse). Windows the plan ignores are no factor.
func factors(req *Request, pr *vrp.Problem) []Factor {
	unit := pr.MinutePrice()
	price := func(x float64) *float64 {
		v := r2(x / unit)
		return &v
	}
	fs := []Factor{{"coverage", nil, "destinations served first, higher priority first"}}
	if pr.MinimizeVehicles {
		fs = append(fs, Factor{"vehicles", nil, "fewest routes, after coverage and before every priced term"})
	}
	if pr.Goal == vrp.GoalWeighted {
		w := pr.Weights
		sum := w.Time + w.Fuel + w.Cost
		for _, f := range []struct {
			name string
			x    float64
		}{{"driving_time", w.Time}, {"fuel", w.Fuel}, {"cost", w.Cost}} {
			if f.x > 0 {
				share := r2(f.x / sum)
				fs = append(fs, Factor{f.name, &share, "objective: its share of the travel price, by constraints' priority weights"})
			}
		}
	} else {
		goal := map[vrp.Goal]string{vrp.GoalDistance: "distance", vrp.GoalTime: "driving_time", vrp.GoalCost: "cost", vrp.GoalFuel: "fuel"}[pr.Goal]
		one := 1.0
		fs = append(fs, Factor{goal, &one, "objective: the travel price"})
	}
	if pr.Balance > 0 {
		fs = append(fs, Factor{"workload_balance", price(pr.Balance), "the longest route's minutes, each worth 10 minutes of driving"})
	}
	if pr.Quality > 0 {
		fs = append(fs, Factor{"service_quality", price(pr.Quality), "minutes from window opening to service, weighted 1, 2, 4, 8 by priority"})
	}
	if pr.Efficiency > 0 {
		fs = append(fs, Factor{"efficiency", price(pr.Efficiency), "every route's minutes from shift start to return (driving, waiting, service, breaks), each worth a minute of driving"})
	}
	switch {
	case req.TimeWindows != nil && !*req.TimeWindows:
	case pr.AllowLate:
		fs = append(fs, Factor{"time_windows", nil, "no service before a window opens; a late arrival is allowed and counted in time_window_compliance, not priced"})
	default:
		fs = append(fs, Factor{"time_windows", nil, "hard constraint"})
	}
	if pr.Overload > 0 {
		return append(fs, Factor{"capacity", price(pr.OverloadPrice), "up to 20 % over, each unit over worth an hour of driving"})
	}
	return append(fs, Factor{"capacity", nil, "hard constraint"})
}

// advice is what would let unassigned destination i in, left out for
// why: what would change that constraint for it, each true of the
// request. A destination some vehicle could serve on a route of its own
// was crowded out by the others, so another vehicle takes it; one that
// none could serve alone needs the constraint itself changed, and the
// other constraints that keep other vehicles from it (a vehicle lacking
// its special_handling aside) are advised on too, after why's.
func advice(pr *vrp.Problem, i int, why vrp.Reason) []string {
	servable, _ := pr.Servable(i)
	out := causeAdvice(pr, i, why, servable)
	if !servable {
		for _, r := range pr.Refusals(i) {
			if r == why || r == vrp.ReasonCapability {
				continue
			}
			for _, a := range causeAdvice(pr, i, r, false) {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// causeAdvice is the advice of advice for one constraint, why.
func causeAdvice(pr *vrp.Problem, i int, why vrp.Reason, servable bool) []string {
	var out []string
	switch why {
	case vrp.ReasonCapacity:
		out = capacityAdvice(pr, i, servable)
	case vrp.ReasonTimeWindow:
		out = []string{"widen the time window"}
		if !servable {
			// even a vehicle driving straight to it from its shift's
			// start arrives after the window closes
			out = append(out, "start a shift earlier")
		}
	case vrp.ReasonShiftEnd:
		out = []string{"extend a shift"}
	case vrp.ReasonRouteLimits:
		out = []string{limitsAdvice(pr, i, servable)}
	case vrp.ReasonBreak:
		out = []string{"move or widen the break window"}
	}
	if servable && why != vrp.ReasonCapacity {
		out = append(out, "add a vehicle")
	}
	return out
}

// capacityAdvice is the advice for destination i left out for capacity:
// splitting it only when its demand is over the largest capacity of the
// vehicles that could carry it in some dimension (then no vehicle of the
// fleet takes it whole); otherwise another vehicle or run when some
// vehicle could carry it on a route of its own, or a vehicle with room
// for all of it at once when none could.
func capacityAdvice(pr *vrp.Problem, i int, servable bool) []string {
	st := &pr.Stops[i]
	var most, mostAll [3]float64 // the largest capacities: of the vehicles that provide its needs, of all
	for v := range pr.Vehicles {
		ve := &pr.Vehicles[v]
		caps := [3]float64{ve.CapWeight, ve.CapVolume, ve.CapPackages}
		for d := range caps {
			mostAll[d] = max(mostAll[d], caps[d])
			if ve.Serves(st) {
				most[d] = max(most[d], caps[d])
			}
		}
	}
	var over []string
	overAll := true
	for d, need := range [3]float64{st.Weight, st.Volume, st.Packages} {
		if need > most[d] {
			over = append(over, []string{"weight", "volume", "packages"}[d])
			overAll = overAll && need > mostAll[d]
		}
	}
	switch {
	case len(over) > 0:
		whose, add := "every vehicle's capacity", "add a vehicle with the capacity for its "
		if !overAll {
			whose, add = "the capacity of every vehicle that provides its special_handling", "add a vehicle that provides its special_handling with the capacity for its "
		}
		return []string{"split the delivery: its " + strings.Join(over, " and ") + " is over " + whose, add + strings.Join(over, " and ")}
	case servable:
		return []string{"add a vehicle or a second run"}
	}
	return []string{"add a vehicle with the capacity for its weight, volume and packages together"}
}

// limitsAdvice names the route limits to raise for destination i: those
// a route of its own is over when no vehicle can serve it alone
// (servable false), otherwise those the request sets.
func limitsAdvice(pr *vrp.Problem, i int, servable bool) string {
	minutes, km := false, false
	for v := range pr.Vehicles {
		ve := &pr.Vehicles[v]
		if servable {
			minutes, km = minutes || !math.IsInf(ve.MaxMinutes, 1), km || !math.IsInf(ve.MaxKm, 1)
			continue
		}
		if s := pr.Eval(v, []int{i}); s.Why == vrp.ReasonRouteLimits {
			minutes, km = minutes || s.Minutes > ve.MaxMinutes, km || s.Km > ve.MaxKm
		}
	}
	switch {
	case minutes && !km:
		return "raise max_route_duration"
	case km && !minutes:
		return "raise max_route_distance"
	}
	return "raise max_route_duration or max_route_distance"
}

// assemble encodes a solution of the problem built from req; took is the
// time the costs and the solver took, source where the costs came from.
func assemble(req *Request, pr *vrp.Problem, sol vrp.Solution, took time.Duration, source string) Result {
	pl := pr.Plan(sol)
	secs := usesSeconds(req)
	res := Result{FleetID: req.FleetID, OptimizedRoutes: []RouteView{}, UnassignedDestinations: []Unassigned{},
		OptimizationInsights: Insights{Bottlenecks: []string{}, Recommendations: []string{}}}
	for _, rt := range pl.Routes {
		v := req.Vehicles[rt.Vehicle]
		rv := RouteView{VehicleID: v.VehicleID, DriverID: driver(v), RouteSequence: []StopView{},
			RouteOptimizationDetails: Details{OptimizationFactors: factors(req, pr)}}
		if rt.Vehicle < len(sol.RouteAgreement) {
			rv.RouteOptimizationDetails.ConfidenceLevel = r2(sol.RouteAgreement[rt.Vehicle])
		}
		seq := func(sv StopView) {
			sv.Sequence = len(rv.RouteSequence) + 1
			rv.RouteSequence = append(rv.RouteSequence, sv)
		}
		pause := func(k int) {
			for _, b := range rt.Breaks {
				if b.After == k {
					seq(StopView{ArrivalTime: clock(b.Start, secs), DepartureTime: clock(b.Start+b.Minutes, secs), ActivityType: "break", ServiceDuration: b.Minutes})
				}
			}
		}
		start, end := depots(req, rt.Vehicle)
		start.ArrivalTime, start.DepartureTime = clock(pr.Vehicles[rt.Vehicle].ShiftStart, secs), clock(pr.Vehicles[rt.Vehicle].ShiftStart, secs)
		seq(start)
		for k, vis := range rt.Visits {
			pause(k)
			st := &pr.Stops[vis.Stop]
			d := req.Destinations[vis.Stop]
			seq(StopView{DestinationID: d.DestinationID, Location: d.Location, LocationIndex: d.LocationIndex, ArrivalTime: clock(vis.Arrive, secs),
				DepartureTime: clock(vis.Depart, secs), ActivityType: "delivery", ServiceDuration: st.Service, Packages: st.Packages, CustomerID: d.CustomerID, DeliveryNotes: d.DeliveryNotes})
		}
		pause(len(rt.Visits))
		back := pr.Vehicles[rt.Vehicle].ShiftStart + rt.Minutes
		end.ArrivalTime, end.DepartureTime = clock(back, secs), clock(back, secs)
		seq(end)
		rv.RouteSummary = RouteSummary{TotalDistance: r2(rt.Km), TotalTime: r2(rt.Minutes), TotalStops: len(rt.Visits), EstimatedFuel: r2(rt.Fuel),
			RouteEfficiency: r2(rt.Efficiency), EstimatedCost: r2(rt.Cost), CapacityOverload: overload(pr, rt.Over)}
		res.OptimizedRoutes = append(res.OptimizedRoutes, rv)
	}
	if sol.Alternatives != nil {
		alternatives(&res, req, pr, sol, pl)
	}
	counts := map[vrp.Reason]int{}
	var reasons []vrp.Reason // in order of first appearance
	for _, m := range pl.Unassigned {
		if counts[m.Reason] == 0 {
			reasons = append(reasons, m.Reason)
		}
		counts[m.Reason]++
		un := Unassigned{DestinationID: req.Destinations[m.Stop].DestinationID, Reason: string(m.Reason), ReasonDetail: reasonDetail(req, pr, m.Stop, m.Reason)}
		if m.Reason == vrp.ReasonCapability {
			un.MissingCapabilities = missing(pr, m.Stop)
			un.Recommendations = []string{"add a vehicle whose restrictions list " + strings.Join(un.MissingCapabilities, ", ")}
		} else {
			un.Recommendations = advice(pr, m.Stop, m.Reason)
		}
		res.UnassignedDestinations = append(res.UnassignedDestinations, un)
		for _, rec := range un.Recommendations {
			if !slices.Contains(res.OptimizationInsights.Recommendations, rec) {
				res.OptimizationInsights.Recommendations = append(res.OptimizationInsights.Recommendations, rec)
			}
		}
	}
	for _, why := range reasons {
		res.OptimizationInsights.Bottlenecks = append(res.OptimizationInsights.Bottlenecks, fmt.Sprintf("%d destination(s) unassigned: %s", counts[why], why))
	}
	res.PerformanceMetrics = Performance{TotalDistance: r2(pl.Km), TotalTime: r2(pl.Minutes), FuelConsumptionEstimate: r2(pl.Fuel),
		CostEstimate: r2(pl.Cost), DeliveryEfficiency: r2(pl.Efficiency), TimeWindowCompliance: compliance(req, pr, pl), CapacityOverload: overload(pr, pl.Over)}
	res.ImprovementSummary = Improvement{DistanceSaved: r2(pl.Saved.Km), TimeSaved: r2(pl.Saved.Minutes), FuelSaved: r2(pl.Saved.Fuel),
		CostSaved: r2(pl.Saved.Cost)}
	if sol.InitialKm > 0 {
		pct := r2(pl.Saved.Percent)
		res.ImprovementSummary.ImprovementPercentage = &pct
	}
	res.OptimizationSummary = Summary{TotalVehicles: len(pr.Vehicles), TotalDestinations: len(pr.Stops), OptimizationTime: r2(took.Seconds()),
		AlgorithmUsed: "sisr", ConfidenceScore: r2(sol.Agreement), CostSource: source, Repeatable: !sol.Cut}
	return res
}

// driver is a vehicle's driver_id as the answer gives it: nil when the
// vehicle has none.
func driver(v Vehicle) *string {
	if v.DriverID == "" {
		return nil
	}
	id := v.DriverID
	return &id
}

// compliance is the percent of pl's served destinations whose service
// begins inside the time window the request gives them (nil when none is
// served). The windows are the destinations' own, whether the plan was
// held to them or not (time_windows false): a stop served before its
// window opens or after it closes is outside it.
func compliance(req *Request, pr *vrp.Problem, pl vrp.Plan) *float64 {
	if pl.Served == 0 {
		return nil
	}
	in := 0
	for _, rt := range pl.Routes {
		for _, vis := range rt.Visits {
			begin := vis.Depart - pr.Stops[vis.Stop].Service
			if early, late := window(req.Destinations[vis.Stop].TimeWindow); begin >= early-1e-9 && begin <= late+1e-9 {
				in++
			}
		}
	}
	pct := r2(100 * float64(in) / float64(pl.Served))
	return &pct
}

// window is a destination's time window as sent, in minutes: all day
// without one.
func window(tw *Window) (early, late float64) {
	early, late = 0, math.Inf(1)
	if tw == nil {
		return early, late
	}
	if e, ok := clockTime(tw.Earliest, 0); ok {
		early = e
	}
	if l, ok := clockTime(tw.Latest, math.Inf(1)); ok {
		late = l
	}
	return early, late
}

// alternatives adds the runner-up plans to res: alternative_plans, and
// in each route's alternative_routes that vehicle's route in every
// runner-up plan where it differs.
func alternatives(res *Result, req *Request, pr *vrp.Problem, sol vrp.Solution, pl vrp.Plan) {
	for i := range res.OptimizedRoutes {
		res.OptimizedRoutes[i].RouteOptimizationDetails.AlternativeRoutes = []AlternativeRoute{}
	}
	used := func(routes [][]int) int {
		n := 0
		for _, r := range routes {
			if len(r) > 0 {
				n++
			}
		}
		return n
	}
	for k, a := range sol.Alternatives {
		n := k + 1
		apl := pr.Plan(vrp.Solution{Routes: a.Routes})
		ap := AlternativePlan{Plan: n, TotalDistance: r2(apl.Km), TotalTime: r2(apl.Minutes), FuelConsumptionEstimate: r2(apl.Fuel),
			CostEstimate: r2(apl.Cost), VehiclesUsed: used(a.Routes), UnassignedDestinations: a.Unassigned, TimeWindowCompliance: compliance(req, pr, apl)}
		byVehicle := map[int]vrp.Route{}
		for _, rt := range apl.Routes {
			byVehicle[rt.Vehicle] = rt
		}
		ap.Routes = []PlanRoute{}
		for v, r := range a.Routes {
			if !slices.Equal(r, sol.Routes[v]) {
				ap.RoutesChanged++
			}
			if len(r) == 0 {
				continue
			}
			route := PlanRoute{VehicleID: req.Vehicles[v].VehicleID, DriverID: driver(req.Vehicles[v]), DistanceKm: r2(byVehicle[v].Km)}
			for _, si := range r {
				route.DestinationIDs = append(route.DestinationIDs, req.Destinations[si].DestinationID)
			}
			ap.Routes = append(ap.Routes, route)
		}
		res.AlternativePlans = append(res.AlternativePlans, ap)
		for i, rv := range res.OptimizedRoutes { // one per route of pl, in its order
			c := pl.Routes[i]
			v := c.Vehicle
			if slices.Equal(a.Routes[v], sol.Routes[v]) {
				continue
			}
			alt := byVehicle[v] // zero when the vehicle stays at its depot
			ids := []string{}
			for _, vis := range alt.Visits {
				ids = append(ids, req.Destinations[vis.Stop].DestinationID)
			}
			ar := AlternativeRoute{RouteID: fmt.Sprintf("plan-%d/%s", n, rv.VehicleID), Name: fmt.Sprintf("runner-up plan %d", n), Plan: n,
				DestinationIDs: ids, DistanceKm: r2(alt.Km), EstimatedDurationMinutes: r2(alt.Minutes), TotalStops: len(alt.Visits),
				EfficiencyScore: r2(alt.Efficiency), TimeDifferenceMinutes: r2(alt.Minutes - c.Minutes), FuelCostDifferenceUSD: r2((alt.Fuel - c.Fuel) * vrp.FuelPrice),
				TradeOffs: TradeOff{DistanceDifferenceKm: r2(alt.Km - c.Km), CostDifferenceUSD: r2(alt.Cost - c.Cost),
					PlanDistanceDifferenceKm: r2(apl.Km - pl.Km), PlanTimeDifferenceMinutes: r2(apl.Minutes - pl.Minutes), PlanCostDifferenceUSD: r2(apl.Cost - pl.Cost),
					PlanVehiclesDifference: ap.VehiclesUsed - len(pl.Routes), PlanUnassignedDifference: a.Unassigned - len(pl.Unassigned)}}
			d := &res.OptimizedRoutes[i].RouteOptimizationDetails
			d.AlternativeRoutes = append(d.AlternativeRoutes, ar)
		}
	}
}

// overload is a load beyond capacity as the answer gives it: nil when
// overloads are not allowed, rounded to hundredths otherwise.
func overload(pr *vrp.Problem, over [3]float64) *Load {
	if pr.Overload <= 0 {
		return nil
	}
	return &Load{Weight: r2(over[0]), Volume: r2(over[1]), Packages: r2(over[2])}
}

// depots are the depot_start and depot_end entries of vehicle v's route:
// where it starts and ends, as the request gave them.
func depots(req *Request, v int) (start, end StopView) {
	rv := req.Vehicles[v]
	start = StopView{ActivityType: "depot_start", Location: rv.StartLocation, LocationIndex: rv.StartIndex}
	end = StopView{ActivityType: "depot_end", Location: rv.StartLocation, LocationIndex: rv.StartIndex}
	if rv.EndLocation != nil {
		end.Location = rv.EndLocation
	}
	if rv.EndIndex != nil {
		end.LocationIndex = rv.EndIndex
		end.Location = rv.EndLocation
	}
	return start, end
}
