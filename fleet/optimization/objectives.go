package optimization

import (
	"fmt"
	"math"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Goals are the values of optimization_goals this service carries out.
var Goals = []string{"minimize_time", "minimize_distance", "minimize_fuel", "minimize_cost", "minimize_vehicles", "balance_workload",
	"maximize_service_quality", "maximize_efficiency"}

// travelGoals price travel: the first one listed decides.
var travelGoals = map[string]vrp.Goal{"minimize_time": vrp.GoalTime, "minimize_distance": vrp.GoalDistance, "minimize_fuel": vrp.GoalFuel,
	"minimize_cost": vrp.GoalCost}

// tieGoals are the travel goal that breaks each travel goal's ties
// (vrp's tie breaker: kilometres, or driving minutes under distance): the
// one later travel goal a plan priced by the first can honour.
var tieGoals = map[vrp.Goal]string{vrp.GoalTime: "minimize_distance", vrp.GoalDistance: "minimize_time", vrp.GoalFuel: "minimize_distance"}

// The objective's terms beyond travel, each priced in minutes of driving
// at 40 km/h in the default vehicle under the travel objective
// (vrp.Problem.MinutePrice), and the overload a route may carry.
const (
	balanceMinutes    = 10.0 // per minute of the longest route
	qualityMinutes    = 1.0  // per minute from window opening to service start, times 1, 2, 4, 8 by priority
	efficiencyMinutes = 1.0  // per minute of every route with stops, shift start to return
	overloadMinutes   = 60.0 // per unit (kg, m³, package) over a capacity
	overloadShare     = 0.2  // at most 20 % over each capacity
)

// MaxCostFigure bounds fuel_consumption_l_per_100km, cost_per_hour and
// cost_per_km.
const MaxCostFigure = 1000.0

// typeCosts are the cost models of the vehicle types: litres per
// kilometre, USD per kilometre besides fuel, USD per hour. A type not
// listed (and no type) has vrp.DefaultCosts, 12 L/100 km and 25 USD/h.
var typeCosts = map[string]vrp.Costs{
	"van":        {FuelPerKm: 0.12, PerHour: vrp.DriverPerHour},
	"car":        {FuelPerKm: 0.08, PerHour: vrp.DriverPerHour},
	"auto":       {FuelPerKm: 0.08, PerHour: vrp.DriverPerHour},
	"truck":      {FuelPerKm: 0.30, PerHour: vrp.DriverPerHour},
	"electric":   {PerKm: 0.05, PerHour: vrp.DriverPerHour},
	"bicycle":    {PerHour: vrp.DriverPerHour},
	"pedestrian": {PerHour: vrp.DriverPerHour},
	"bus":        {FuelPerKm: 0.35, PerHour: vrp.DriverPerHour},
	"motorcycle": {FuelPerKm: 0.05, PerHour: vrp.DriverPerHour},
	"other":      vrp.DefaultCosts(),
}

// VehicleTypes are the vehicle_type values the optimizer has a cost
// model and a road costing for (typeCosts, costing), the types of a
// vehicle profile (PUT /v1/vehicles: car, van, truck, bus, motorcycle,
// other) among them, so that a profile's type is taken as it is; other
// is the default model, as a vehicle without a type. Any other value is
// refused, never priced and routed as if left out: "Truck" or "lorry"
// would go as a van by car.
var VehicleTypes = []string{"van", "car", "auto", "truck", "electric", "bicycle", "pedestrian", "bus", "motorcycle", "other"}

// vehicleCosts is vehicle f's cost model: its type's, each figure the
// vehicle sets replacing the type's; bad names a figure out of range
// and a type outside VehicleTypes.
func vehicleCosts(bad map[string]string, f string, v Vehicle) *vrp.Costs {
	c, ok := typeCosts[v.VehicleType]
	if !ok {
		if v.VehicleType != "" {
			bad[f+".vehicle_type"] = enum.Refusal(VehicleTypes...)
		}
		c = vrp.DefaultCosts()
	}
	set := func(field string, x *float64, dst *float64, scale float64) {
		if x == nil {
			return
		}
		if !(*x >= 0 && *x <= MaxCostFigure) {
			bad[f+"."+field] = fmt.Sprintf("must be 0 to %v", MaxCostFigure)
			return
		}
		*dst = *x * scale
	}
	set("fuel_consumption_l_per_100km", v.FuelConsumption, &c.FuelPerKm, 0.01)
	set("cost_per_hour", v.CostPerHour, &c.PerHour, 1)
	set("cost_per_km", v.CostPerKm, &c.PerKm, 1)
	return &c
}

// laterGoal says why travel goal g, listed after the first travel goal
// (which prices travel as first), cannot be honoured.
func laterGoal(goals []string, first vrp.Goal, g string) string {
	name := ""
	for _, x := range goals {
		if travelGoals[x] == first {
			name = x
			break
		}
	}
	msg := name + " prices travel (the first travel goal listed)"
	if tie := tieGoals[first]; tie != "" {
		msg += " and breaks its ties by " + tie + " only"
	} else {
		msg += " and leaves no ties for another travel goal to break"
	}
	return msg + ": list " + g + " first to price travel by it"
}

// objective reads the goals, the priority weights, capacity strictness
// and the fields that cannot be honoured into pr: the first travel goal
// or, when a weight is given, the weights price travel (a later travel
// goal only as the first one's tie breaker); minimize_vehicles
// puts routes first; balance_workload, maximize_service_quality,
// maximize_efficiency and vehicle_capacity_strict false add their terms.
func objective(bad map[string]string, r *Request, pr *vrp.Problem) {
	c := r.Constraints
	if c == nil {
		c = &Constraints{}
	}
	w := vrp.Weights{Time: c.DeliveryTimePriority, Fuel: c.FuelEfficiencyPriority, Cost: c.CostPriority}
	for field, x := range map[string]float64{"delivery_time_priority": w.Time, "fuel_efficiency_priority": w.Fuel, "cost_priority": w.Cost} {
		if !(x >= 0) || math.IsInf(x, 0) {
			bad["constraints."+field] = "must be a number >= 0"
		}
	}
	weighted := w.Time+w.Fuel+w.Cost > 0
	pr.Goal = vrp.GoalTime
	decided, balance, quality, efficiency := false, false, false, false
	for i, g := range r.OptimizationGoals {
		field := fmt.Sprintf("optimization_goals[%d]", i)
		if goal, ok := travelGoals[g]; ok {
			if weighted {
				bad[field] = "the *_priority weights of constraints price travel; give either them or " + g
			} else if !decided {
				pr.Goal, decided = goal, true
			} else if goal != pr.Goal && g != tieGoals[pr.Goal] {
				bad[field] = laterGoal(r.OptimizationGoals, pr.Goal, g)
			}
			continue
		}
		switch g {
		case "minimize_vehicles":
			pr.MinimizeVehicles = true
		case "balance_workload":
			balance = true
		case "maximize_service_quality":
			quality = true
		case "maximize_efficiency":
			efficiency = true
		default:
			bad[field] = enum.Refusal(Goals...)
		}
	}
	if weighted {
		pr.Goal, pr.Weights = vrp.GoalWeighted, w
	}
	unit := pr.MinutePrice()
	if balance {
		pr.Balance = balanceMinutes * unit
	}
	if quality {
		pr.Quality = qualityMinutes * unit
	}
	if efficiency {
		pr.Efficiency = efficiencyMinutes * unit
	}
	if c.VehicleCapacityStrict != nil && !*c.VehicleCapacityStrict {
		pr.Overload, pr.OverloadPrice = overloadShare, overloadMinutes*unit
	}
	if r.DriverPreferences {
		bad["driver_preferences"] = "not supported: the service holds no driver preferences; send false or leave it out"
	}
}
