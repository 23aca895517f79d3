package trips

import (
	"context"
	"math"

	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/roadspeed"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
)

// Router finds routes on the road network (*routing.Graph).
type Router interface {
	Route(req routing.Request) routing.Result
}

// speedReader reads the speeds an organization's fleet drove
// (roadspeed.Table, roadspeed.Shared), when the service counts them.
type speedReader interface {
	Observed(ctx context.Context, org string, hours []int) *roadspeed.Speeds
}

// AlternativeRoute is another way from the trip's first point to its
// last, found on the road network.
type AlternativeRoute struct {
	RouteID                  string    `json:"route_id" enum:"quickest_free_flow,quickest_observed"`
	Name                     string    `json:"name"`
	DistanceKm               float64   `json:"distance_km" source:"computed"`
	EstimatedDurationMinutes float64   `json:"estimated_duration_minutes" source:"computed" doc:"driving time, without stops"`
	EfficiencyScore          float64   `json:"efficiency_score" source:"computed" doc:"this route's distance over the track's length (gps_distance_km, also when distance_km is the odometer's; 1: the trip drove no farther)"`
	FuelSavingsLiters        float64   `json:"fuel_savings_liters" source:"computed" doc:"the fuel of the distance the track (gps_distance_km) ran beyond this route's, at the trip's own consumption (its fuel over its distance, else its vehicle model's, 8 L/100 km by default; 0 for an electric vehicle); negative when this route is longer"`
	TimeSavingsMinutes       float64   `json:"time_savings_minutes" source:"computed" doc:"the trip's moving time (its duration less its idle time) less this route's duration; negative when the trip was quicker"`
	TradeOffs                TradeOffs `json:"trade_offs"`
}

// TradeOffs says what an alternative route was judged by.
type TradeOffs struct {
	Speeds               string  `json:"speeds" enum:"free_flow,observed" doc:"free_flow: the road network's speeds by road class and posted limit; observed: the speeds the organization's own trips were driven on each road in the trip's hours of the week over the last 28 days, free flow elsewhere"`
	ObservedRoadSegments int     `json:"observed_road_segments" doc:"road edges and directions timed at observed speeds"`
	DistanceDifferenceKm float64 `json:"distance_difference_km" source:"computed" doc:"this route's distance less the track's length (gps_distance_km)"`
}

// minAlternativeKm: a trip whose last point lies nearer its first has no
// route between them worth comparing (a round trip).
const minAlternativeKm = 0.1

// alternatives are the quickest routes by car from pts' first point to
// its last: at free-flow speeds, and at the speeds sc's fleet was
// observed driving in the trip's hours when the service counts them and
// any apply. None for a round trip or a place off the roads.
func (s *Service) alternatives(ctx context.Context, sc store.Scope, pts []Point, a Analytics, rates fuelRates) []AlternativeRoute {
	out := []AlternativeRoute{}
	first, last := pts[0], pts[len(pts)-1]
	if geo.Distance(first.pos(), last.pos()) < minAlternativeKm*1000 {
		return out
	}
	req := routing.Request{Sources: [][2]float64{{first.Lat, first.Lon}}, Targets: [][2]float64{{last.Lat, last.Lon}}, Costing: routing.Auto}
	moving := math.Max(0, a.DurationMinutes-a.IdleTimeMinutes)
	perKm := rates.perKm
	// the routes join the track's ends: they are measured against the
	// track, not an odometer's distance, which also counts what was
	// driven before the first point and after the last
	driven := a.GPSDistanceKm
	add := func(id, name, speeds string, observed int, c routing.Cost) {
		if !c.OK {
			return
		}
		km, min := c.Meters/1000, c.Seconds/60
		eff := 0.0
		if driven > 0 {
			eff = math.Min(1, km/driven)
		}
		out = append(out, AlternativeRoute{RouteID: id, Name: name, DistanceKm: round(km, 3), EstimatedDurationMinutes: round(min, 2),
			EfficiencyScore: round(eff, 3), FuelSavingsLiters: round((driven-km)*perKm, 3), TimeSavingsMinutes: round(moving-min, 2),
			TradeOffs: TradeOffs{Speeds: speeds, ObservedRoadSegments: observed, DistanceDifferenceKm: round(km-driven, 3)}})
	}
	add("quickest_free_flow", "quickest by the road network", "free_flow", 0, s.router.Route(req).Costs[0][0])
	if sr, ok := s.speeds.(speedReader); ok {
		var hours []int
		for t := first.Time().Truncate(3600e9); !t.After(last.Time()); t = t.Add(3600e9) {
			hours = append(hours, roadspeed.HourOfWeek(t))
		}
		if sp := sr.Observed(ctx, sc.Org, hours); sp.Edges > 0 {
			req.Observed = sp.Speed
			add("quickest_observed", "quickest at the fleet's observed speeds", "observed", sp.Edges, s.router.Route(req).Costs[0][0])
		}
	}
	return out
}
