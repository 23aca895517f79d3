package optimization

import (
	"fmt"
	"math"
	"time"
)

// Summary of an optimization.
type Summary struct {
	TotalVehicles     int     `json:"total_vehicles"`
	TotalDestinations int     `json:"total_destinations"`
	OptimizationTime  float64 `json:"optimization_time" doc:"seconds"`
	AlgorithmUsed     string  `json:"algorithm_used"`
	ConfidenceScore   float64 `json:"confidence_score"`
}

// Performance of the plan.
type Performance struct {
	TotalDistance           float64 `json:"total_distance" doc:"kilometers"`
	TotalTime               float64 `json:"total_time" doc:"minutes"`
	FuelConsumptionEstimate float64 `json:"fuel_consumption_estimate" doc:"liters at 12 L/100 km"`
	CostEstimate            float64 `json:"cost_estimate" doc:"USD: fuel at 1.05/L plus 25/h of driver time"`
	DeliveryEfficiency      float64 `json:"delivery_efficiency" doc:"share of destinations assigned"`
	TimeWindowCompliance    float64 `json:"time_window_compliance" doc:"percent of stops within their window"`
}

// Improvement against the first feasible plan (before local search).
type Improvement struct {
	DistanceSaved         float64 `json:"distance_saved"`
	TimeSaved             float64 `json:"time_saved"`
	FuelSaved             float64 `json:"fuel_saved"`
	CostSaved             float64 `json:"cost_saved"`
	ImprovementPercentage float64 `json:"improvement_percentage"`
}

// RouteSummary of one vehicle.
type RouteSummary struct {
	TotalDistance   float64 `json:"total_distance"`
	TotalTime       float64 `json:"total_time"`
	TotalStops      int     `json:"total_stops"`
	EstimatedFuel   float64 `json:"estimated_fuel"`
	RouteEfficiency float64 `json:"route_efficiency" doc:"service time over route time"`
}

// StopView is one stop of a route.
type StopView struct {
	Sequence        int     `json:"sequence"`
	DestinationID   string  `json:"destination_id"`
	Location        Place   `json:"location"`
	ArrivalTime     string  `json:"arrival_time" doc:"HH:MM"`
	DepartureTime   string  `json:"departure_time" doc:"HH:MM"`
	ActivityType    string  `json:"activity_type"`
	ServiceDuration float64 `json:"service_duration"`
	Packages        float64 `json:"packages"`
	DeliveryNotes   string  `json:"delivery_notes,omitempty"`
}

// Factor of the plan.
type Factor struct {
	Factor string  `json:"factor"`
	Weight float64 `json:"weight"`
	Impact string  `json:"impact"`
}

// Details of a route's optimization.
type Details struct {
	OptimizationFactors []Factor `json:"optimization_factors"`
	AlternativeRoutes   []any    `json:"alternative_routes"`
	ConfidenceLevel     float64  `json:"confidence_level"`
}

// RouteView is one vehicle's route.
type RouteView struct {
	VehicleID                string       `json:"vehicle_id"`
	DriverID                 string       `json:"driver_id"`
	RouteSummary             RouteSummary `json:"route_summary"`
	RouteSequence            []StopView   `json:"route_sequence"`
	RouteOptimizationDetails Details      `json:"route_optimization_details"`
}

// Unassigned is a destination no vehicle could take.
type Unassigned struct {
	DestinationID   string   `json:"destination_id"`
	Reason          string   `json:"reason" enum:"capacity,time_window,shift_end,route_limits"`
	Recommendations []string `json:"recommendations"`
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
	OptimizationSummary    Summary      `json:"optimization_summary"`
	PerformanceMetrics     Performance  `json:"performance_metrics"`
	ImprovementSummary     Improvement  `json:"improvement_summary"`
	OptimizedRoutes        []RouteView  `json:"optimized_routes"`
	UnassignedDestinations []Unassigned `json:"unassigned_destinations"`
	OptimizationInsights   Insights     `json:"optimization_insights"`
}

func r2(v float64) float64 { return math.Round(v*100) / 100 }

var advice = map[string][]string{
	"capacity":     {"add a vehicle or a second run", "split the delivery"},
	"time_window":  {"widen the time window", "start a shift earlier"},
	"shift_end":    {"extend a shift", "add a vehicle"},
	"route_limits": {"raise max_route_duration or max_route_distance"},
}

func assemble(req *Request, pr *problem, routes [][]int, unassigned map[int]string, before float64, took time.Duration) Result {
	res := Result{FleetID: req.FleetID, OptimizedRoutes: []RouteView{}, UnassignedDestinations: []Unassigned{},
		OptimizationInsights: Insights{Bottlenecks: []string{}, Recommendations: []string{}}}
	totalKm, totalMin, stops, onTime := 0.0, 0.0, 0, 0
	for vi, r := range routes {
		v := &pr.vehicles[vi]
		ev := pr.eval(v, r)
		rv := RouteView{VehicleID: req.Vehicles[vi].VehicleID, DriverID: req.Vehicles[vi].DriverID, RouteSequence: []StopView{},
			RouteOptimizationDetails: Details{AlternativeRoutes: []any{}, ConfidenceLevel: 0.85,
				OptimizationFactors: []Factor{{"distance", 0.6, "primary objective"}, {"time_windows", 0.3, "hard constraint"}, {"capacity", 0.1, "hard constraint"}}}}
		service := 0.0
		for k, si := range r {
			st := pr.stops[si]
			d := req.Destinations[st.idx]
			pk := 0.0
			if d.DeliveryRequirements != nil {
				pk = d.DeliveryRequirements.Packages
			}
			rv.RouteSequence = append(rv.RouteSequence, StopView{Sequence: k + 1, DestinationID: d.DestinationID, Location: *d.Location,
				ArrivalTime: clock(ev.arrive[k]), DepartureTime: clock(ev.start[k] + st.service), ActivityType: "delivery", ServiceDuration: st.service,
				Packages: pk, DeliveryNotes: d.DeliveryNotes})
			service += st.service
			if ev.start[k] <= st.late {
				onTime++
			}
		}
		rv.RouteSummary = RouteSummary{TotalDistance: r2(ev.km), TotalTime: r2(ev.mins), TotalStops: len(r), EstimatedFuel: r2(ev.km * 0.12)}
		if ev.mins > 0 {
			rv.RouteSummary.RouteEfficiency = r2(service / ev.mins)
		}
		if len(r) > 0 {
			totalKm, totalMin, stops = totalKm+ev.km, totalMin+ev.mins, stops+len(r)
			res.OptimizedRoutes = append(res.OptimizedRoutes, rv)
		}
	}
	counts := map[string]int{}
	for si, why := range unassigned {
		counts[why]++
		res.UnassignedDestinations = append(res.UnassignedDestinations, Unassigned{DestinationID: req.Destinations[pr.stops[si].idx].DestinationID, Reason: why, Recommendations: advice[why]})
	}
	for why, n := range counts {
		res.OptimizationInsights.Bottlenecks = append(res.OptimizationInsights.Bottlenecks, fmt.Sprintf("%d destination(s) unassigned: %s", n, why))
		res.OptimizationInsights.Recommendations = append(res.OptimizationInsights.Recommendations, advice[why]...)
	}
	fuel := totalKm * 0.12
	res.PerformanceMetrics = Performance{TotalDistance: r2(totalKm), TotalTime: r2(totalMin), FuelConsumptionEstimate: r2(fuel),
		CostEstimate: r2(fuel*1.05 + totalMin/60*25), DeliveryEfficiency: r2(float64(stops) / float64(len(pr.stops)))}
	if stops > 0 {
		res.PerformanceMetrics.TimeWindowCompliance = r2(100 * float64(onTime) / float64(stops))
	}
	saved := math.Max(0, before-totalKm)
	res.ImprovementSummary = Improvement{DistanceSaved: r2(saved), TimeSaved: r2(minutes(saved)), FuelSaved: r2(saved * 0.12), CostSaved: r2(saved*0.12*1.05 + minutes(saved)/60*25)}
	if before > 0 {
		res.ImprovementSummary.ImprovementPercentage = r2(100 * saved / before)
	}
	res.OptimizationSummary = Summary{TotalVehicles: len(pr.vehicles), TotalDestinations: len(pr.stops), OptimizationTime: r2(took.Seconds()),
		AlgorithmUsed: "cheapest_insertion+relocate+2opt", ConfidenceScore: r2(0.6 + 0.4*res.PerformanceMetrics.DeliveryEfficiency)}
	return res
}
