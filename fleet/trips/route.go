package trips

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/store"
)

// RouteQuery is GET /v1/trips/{trip_id}/route after parsing.
type RouteQuery struct {
	IncludeWaypoints    bool
	IncludeTrafficData  bool
	IncludeAlternatives bool
	SimplifyGeometry    bool
	Precision           int // 1-8
}

// Geometry is a GeoJSON LineString of [longitude, latitude].
type Geometry struct {
	Type        string      `json:"type" enum:"LineString"`
	Coordinates [][]float64 `json:"coordinates" source:"computed" doc:"match matched: along the roads the points were matched to, joined by straight legs through the points matched to no road; match none: straight legs between the stored points"`
	TotalPoints int         `json:"total_points" doc:"points stored for the trip"`
	Simplified  bool        `json:"simplified"`
	Precision   int         `json:"precision"`
	Match       string      `json:"match" enum:"matched,none" source:"computed" doc:"matched: with --osm some of the points were matched to the roads and the line follows them; none: no road network, or no two successive points matched, and the line joins the points"`
	// MatchedDistanceKm is the distance along the roads of the matched
	// stretches; nil when none.
	MatchedDistanceKm *float64 `json:"matched_distance_km" source:"computed" doc:"km along the roads through the successive matched points (the stretches between them and points matched to no road, or a GPS jump, are left out); null with match none"`
	MatchedPoints     int      `json:"matched_points" source:"computed" doc:"points matched to a road; 0 with match none"`
}

// RouteAnalytics summarizes the driven route.
type RouteAnalytics struct {
	TotalDistanceKm          float64  `json:"total_distance_km" source:"computed"`
	EstimatedDurationMinutes float64  `json:"estimated_duration_minutes" source:"computed" doc:"the track's length (gps_distance_km, as the waypoints' distances) at the trip's typical cruising speed"`
	ActualDurationMinutes    float64  `json:"actual_duration_minutes" source:"computed"`
	EfficiencyScore          float64  `json:"efficiency_score" source:"computed" doc:"0-100: straight-line distance between the track's ends over the track's length (the uploaded points, also when distance_km is the odometer's), less idling"`
	DeviationPercentage      float64  `json:"deviation_percentage" source:"computed" doc:"the track's length (the uploaded points, also when distance_km is the odometer's) over the straight-line distance between its ends, minus 100"`
	FuelEfficiencyRating     string   `json:"fuel_efficiency_rating" enum:"excellent,good,fair,poor,unknown" source:"computed" doc:"from the trip's fuel_efficiency_kmpl: excellent 14 or more, good 11, fair 8, else poor; unknown when it burnt no fuel to rate (an electric vehicle, or no distance)"`
	RouteComplexity          string   `json:"route_complexity" enum:"low,medium,high" source:"computed"`
	ElevationGainMeters      *float64 `json:"elevation_gain_meters" source:"computed" doc:"from the points' altitude_meters; null when no two consecutive points had one"`
	HighwayPercentage        float64  `json:"highway_percentage" source:"computed" doc:"share of distance on motorways and trunks (with --osm, the roads the points were matched to); off the roads, or without --osm, at 80 km/h or more"`
	CityDrivingPercentage    float64  `json:"city_driving_percentage" source:"computed" doc:"share of distance on other roads limited to 60 km/h or less (with --osm); off the roads, or without --osm, under 50 km/h"`
}

// Waypoint is a notable point of the route.
type Waypoint struct {
	WaypointID          string    `json:"waypoint_id"`
	Latitude            float64   `json:"latitude"`
	Longitude           float64   `json:"longitude"`
	WaypointType        string    `json:"waypoint_type" enum:"start,turn,stop,end"`
	Address             *string   `json:"address" doc:"the start's and the end's as the trip's start and end locations gave them; null elsewhere: points are not reverse geocoded"`
	DistanceFromStartKm float64   `json:"distance_from_start_km" source:"computed"`
	EstimatedArrival    time.Time `json:"estimated_arrival_time" source:"computed" doc:"at the trip's cruising speed from the start; UTC, to the millisecond"`
	ActualArrival       time.Time `json:"actual_arrival_time"`
	DelayMinutes        float64   `json:"delay_minutes" source:"computed"`
}

// Suggestion is an optimization suggestion.
type Suggestion struct {
	SuggestionID             string             `json:"suggestion_id"`
	Type                     string             `json:"type"`
	Title                    string             `json:"title"`
	Description              string             `json:"description"`
	PotentialSavings         map[string]float64 `json:"potential_savings" source:"computed" doc:"time_minutes, fuel_liters, cost_usd; time_minutes is negative for a suggestion that costs time (keeping to the limit: the speeding stretches driven at their limits)"`
	ImplementationComplexity string             `json:"implementation_complexity" enum:"low,medium,high"`
}

// Route is the route data of a trip.
type Route struct {
	TripID                  string              `json:"trip_id"`
	RouteStatus             string              `json:"route_status" enum:"active,completed,analyzing" doc:"active while the trip is active or paused, completed once it is stopped; analyzing is not answered: the route is built at each request"`
	RouteGeometry           Geometry            `json:"route_geometry"`
	RouteAnalytics          RouteAnalytics      `json:"route_analytics"`
	Waypoints               []Waypoint          `json:"waypoints,omitempty"`
	TrafficAnalysis         *TrafficAnalysis    `json:"traffic_analysis,omitempty"`
	AlternativeRoutes       *[]AlternativeRoute `json:"alternative_routes,omitempty" doc:"with include_alternatives: the quickest routes by car from the trip's first point to its last on the road network (--osm), at free-flow speeds and at the fleet's observed speeds when any apply; empty for a round trip (ends under 100 m apart) or a place off the roads; null without a road network"`
	OptimizationSuggestions []Suggestion        `json:"optimization_suggestions"`
	RoadMatching            *RoadStats          `json:"road_matching" doc:"what the road matcher beside the uploads made of the trip's points for speeding, as last stored (with a speeding event, at the stop, and with the trip's next upload after the matcher judged points); null without --osm or before its first write"`
}

// fuel price used for cost estimates, USD per liter (documented).
const fuelUSDPerLiter = 1.05

// Route builds the route data of a trip from its stored points.
func (s *Service) Route(ctx context.Context, org, env, id string, q RouteQuery) (Route, error) {
	sc := scope(org, env)
	t, st, err := s.get(ctx, sc, id)
	if err != nil {
		return Route{}, err
	}
	pts, err := s.points(ctx, sc, id)
	if err != nil {
		return Route{}, err
	}
	if len(pts) < 2 {
		return Route{}, &ShortDataError{Message: fmt.Sprintf("the route needs at least 2 location points; the trip has %d", len(pts)),
			Fields: map[string]string{"locations_count": fmt.Sprintf("is %d; at least 2 are needed", len(pts))}}
	}
	a := s.analyticsOf(&st)
	r := Route{TripID: id, RouteStatus: "completed", OptimizationSuggestions: []Suggestion{}}
	if t.Status == store.TripActive || t.Status == store.TripPaused {
		r.RouteStatus = "active"
	}
	matched := s.matchTrip(pts)
	r.RouteGeometry = routeGeometry(pts, matched, q)
	r.RoadMatching = st.Roads
	var ms []mapmatch.Match
	if matched != nil {
		ms = matched.Matches
	}
	prof := profileOf(pts, bandsOf(ms), st.Pauses)
	straight := geo.Distance(pts[0].pos(), pts[len(pts)-1].pos()) / 1000
	cruise := cruisingSpeed(prof.speeds)
	turns := turnIndexes(pts, prof.across)
	r.RouteAnalytics = routeAnalytics(a, prof, straight, cruise, len(turns))
	if q.IncludeWaypoints {
		r.Waypoints = waypoints(t, pts, turns, prof, cruise)
	}
	rates := s.fuelRates(&st, a)
	if q.IncludeTrafficData {
		r.TrafficAnalysis = traffic(pts, prof, cruise, rates.idlePerHour)
	}
	if q.IncludeAlternatives {
		r.AlternativeRoutes = new([]AlternativeRoute) // points at nil: encoded null
		if s.router != nil {
			alts := s.alternatives(ctx, sc, pts, a, rates)
			r.AlternativeRoutes = &alts
		}
	}
	var limit limitSavings
	if a.HarshEvents.Speeding > 0 {
		events, err := s.storedEvents(ctx, sc, id)
		if err != nil {
			return Route{}, err
		}
		limit = atTheLimit(pts, events, rates)
	}
	r.OptimizationSuggestions = suggestions(r.OptimizationSuggestions, a, rates, r.RouteAnalytics.DeviationPercentage, straight, cruise, limit)
	return r, nil
}

// routeGeometry is the route's line: along the matched roads where
// there are any, else straight between the points; simplified and
// rounded as q asks.
func routeGeometry(pts []Point, matched *mapmatch.Result, q RouteQuery) Geometry {
	coords, km, n := matchedLine(pts, matched)
	if coords == nil {
		coords = make([][2]float64, len(pts))
		for i, p := range pts {
			coords[i] = [2]float64{p.Lon, p.Lat}
		}
	}
	g := geometry(coords, len(pts), q)
	g.Match = "none"
	if km != nil {
		g.Match, g.MatchedDistanceKm, g.MatchedPoints = "matched", km, n
	}
	return g
}

// geometry is a line of total points' route, simplified and rounded as
// q asks.
func geometry(coords [][2]float64, total int, q RouteQuery) Geometry {
	if q.SimplifyGeometry {
		tol := math.Pow(10, -float64(q.Precision)) * 5 // half a unit of the last kept decimal
		coords = simplify(coords, math.Max(tol, 1e-6))
	}
	scale := math.Pow(10, float64(q.Precision))
	g := Geometry{Type: "LineString", TotalPoints: total, Simplified: q.SimplifyGeometry, Precision: q.Precision}
	for _, c := range coords {
		g.Coordinates = append(g.Coordinates, []float64{math.Round(c[0]*scale) / scale, math.Round(c[1]*scale) / scale})
	}
	return g
}

// routeAnalytics rates the driven route; straight is the distance between
// its ends and cruise the trip's cruising speed.
func routeAnalytics(a Analytics, prof profile, straight, cruise float64, turns int) RouteAnalytics {
	ra := RouteAnalytics{TotalDistanceKm: round(a.DistanceKm, 3), ActualDurationMinutes: a.DurationMinutes}
	// the route's time and shape are the track's, as its waypoints are,
	// against the straight line between its ends, both by GPS: an
	// odometer's distance also counts what was driven before the first
	// point and after the last, and is in whole units, and would show a
	// detour, a time or turns per km the track does not have
	track := a.GPSDistanceKm
	if prof.altitudes {
		g := round(prof.gainM, 1)
		ra.ElevationGainMeters = &g
	}
	if cruise > 0 {
		ra.EstimatedDurationMinutes = round(track/cruise*60, 2)
	}
	if total := prof.totalKm(); total > 0 {
		ra.HighwayPercentage = round(100*prof.highwayKm/total, 1)
		ra.CityDrivingPercentage = round(100*prof.cityKm/total, 1)
	}
	if straight > 0.05 && track > 0 {
		ra.DeviationPercentage = round(math.Max(0, 100*(track/straight-1)), 1)
	}
	idleShare := 0.0
	if a.DurationMinutes > 0 {
		idleShare = math.Min(1, a.IdleTimeMinutes/a.DurationMinutes)
	}
	directness := 1.0
	if track > 0.05 {
		directness = math.Min(1, straight/track)
	}
	ra.EfficiencyScore = round(100*(0.6*directness+0.4*(1-idleShare)), 1)
	switch k := a.FuelEfficiency.FuelEfficiencyKmpl; {
	case k == nil || !(*k > 0):
		ra.FuelEfficiencyRating = "unknown"
	case *k >= 14:
		ra.FuelEfficiencyRating = "excellent"
	case *k >= 11:
		ra.FuelEfficiencyRating = "good"
	case *k >= 8:
		ra.FuelEfficiencyRating = "fair"
	default:
		ra.FuelEfficiencyRating = "poor"
	}
	switch perKm := float64(turns) / math.Max(track, 1); {
	case perKm > 2:
		ra.RouteComplexity = "high"
	case perKm > 0.5:
		ra.RouteComplexity = "medium"
	default:
		ra.RouteComplexity = "low"
	}
	return ra
}

// waypoints are the start, the turns up to the hundredth waypoint and the
// end, each with its arrival at the cruising speed, after the pauses on
// the way, and the actual one.
func waypoints(t store.Trip, pts []Point, turns []int, prof profile, cruise float64) []Waypoint {
	var wps []Waypoint
	first := pts[0]
	cum := prof.cum
	add := func(kind string, i int) {
		p := pts[i]
		at := p.Time()
		est := first.Time().Add(time.Duration(prof.paused[i] * float64(time.Minute)))
		if cruise > 0 {
			est = est.Add(time.Duration(cum[i] / cruise * float64(time.Hour)))
		}
		wps = append(wps, Waypoint{WaypointID: fmt.Sprintf("wp_%d", len(wps)+1), Latitude: p.Lat, Longitude: p.Lon,
			WaypointType: kind, DistanceFromStartKm: round(cum[i], 3), EstimatedArrival: apitime.Of(est), ActualArrival: at,
			DelayMinutes: round(math.Max(0, at.Sub(est).Minutes()), 2)})
	}
	add("start", 0)
	for _, i := range turns {
		if len(wps) >= 100 {
			break
		}
		add("turn", i)
	}
	add("end", len(pts)-1)
	if t.StartLocation != nil && t.StartLocation.Address != "" {
		wps[0].Address = &t.StartLocation.Address
	}
	if t.EndLocation != nil && t.EndLocation.Address != "" {
		wps[len(wps)-1].Address = &t.EndLocation.Address
	}
	return wps
}

// fuelRates are what a trip burns: liters per km driven and per hour
// idling; and its vehicle model's base consumption (liters per km at
// steady speeds up to 90 km/h) and the share of it spent on air drag at
// 90 km/h, which grows with the square of the speed above
// (docs/analytics.md, Fuel).
type fuelRates struct {
	perKm, idlePerHour float64
	basePerKm, aero    float64
}

// fuelRates are the rates of the trip of st with analytics a: per km its
// own fuel over its distance when it burnt any, else its vehicle model's
// consumption; per hour idling its vehicle model's (a profile's
// consumption scales the default 0.8 L/h). An electric vehicle burns
// none.
func (s *Service) fuelRates(st *state, a Analytics) fuelRates {
	v, _ := s.vehicle(st.Profile)
	if v.Electric {
		return fuelRates{}
	}
	r := fuelRates{perKm: positiveOr(v.LitersPer100Km, analytics.DefaultLitersPer100Km) / 100,
		idlePerHour: positiveOr(v.IdleLitersPerHour, analytics.DefaultIdleLitersPerHour),
		basePerKm:   positiveOr(v.LitersPer100Km, analytics.DefaultLitersPer100Km) / 100, aero: positiveOr(v.AeroShare, analytics.DefaultAeroShare)}
	if f := a.FuelEfficiency.FuelConsumedLiters; f > 0 && a.DistanceKm > 0 {
		r.perKm = f / a.DistanceKm
	}
	return r
}

func positiveOr(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

// limitSavings is what driving the trip's speeding stretches at their
// limits would have changed: the fuel saved (liters) and the time it
// takes longer (minutes).
type limitSavings struct {
	liters, minutes float64
}

// atTheLimit prices the speeding events of a trip of points pts at the
// limits they were judged by: each step between two points within an
// event, driven at v over the limit L, by the fuel model (the drag term
// above 90 km/h, base × aero × d × (max(v,90)² − max(L,90)²) / 90²: a
// speeding below 90 km/h costs the model no fuel) and by its time at L
// instead of v. v is the steps' reported speeds as the trip's analytics
// take them (the mean of the two ends, the one reported, else distance
// over time).
func atTheLimit(pts []Point, events []storedEvent, rates fuelRates) limitSavings {
	var out limitSavings
	for _, e := range events {
		lim := e.Metrics.SpeedLimitKmh
		if e.Type != detect.TypeSpeeding || !(lim > 0) {
			continue
		}
		from, to := e.Start.UnixMilli(), e.End.UnixMilli()
		for i := 1; i < len(pts); i++ {
			a, b := pts[i-1], pts[i]
			if a.TS < from || b.TS > to || b.TS <= a.TS {
				continue
			}
			d := geo.Distance(a.pos(), b.pos()) / 1000
			v := b.Speed
			switch {
			case !math.IsNaN(a.Speed) && !math.IsNaN(b.Speed):
				v = (a.Speed + b.Speed) / 2
			case math.IsNaN(b.Speed) && !math.IsNaN(a.Speed):
				v = a.Speed
			case math.IsNaN(v):
				v = d / (float64(b.TS-a.TS) / 3.6e6)
			}
			if !(v > lim) || d <= 0 {
				continue
			}
			hi, at := math.Max(v, 90), math.Max(lim, 90)
			out.liters += rates.basePerKm * rates.aero * d * (hi*hi - at*at) / (90 * 90)
			out.minutes += (d/lim - d/v) * 60
		}
	}
	return out
}

// lost is minutes of time a suggestion costs as a saving: negative, and
// 0 (not -0) when it rounds to none.
func lost(minutes float64) float64 {
	if m := round(minutes, 1); m > 0 {
		return -m
	}
	return 0
}

// suggestions appends to out what would make the trip cheaper: less
// idling (for a vehicle that burns fuel idling), a more direct route,
// keeping to the limit (limit: what that saves and costs); fuel at the
// trip's rates.
func suggestions(out []Suggestion, a Analytics, rates fuelRates, deviationPct, straight, cruise float64, limit limitSavings) []Suggestion {
	if a.IdleTimeMinutes > 5 && rates.idlePerHour > 0 {
		l := a.IdleTimeMinutes / 60 * rates.idlePerHour
		out = append(out, Suggestion{SuggestionID: "sg_idle", Type: "reduce_idling", Title: "Reduce idling",
			Description:              fmt.Sprintf("The vehicle idled %.0f minutes; switching the engine off on stops longer than a minute saves fuel.", a.IdleTimeMinutes),
			PotentialSavings:         map[string]float64{"time_minutes": 0, "fuel_liters": round(l, 2), "cost_usd": round(l*fuelUSDPerLiter, 2)},
			ImplementationComplexity: "low"})
	}
	if deviationPct > 40 {
		extra := math.Max(0, a.GPSDistanceKm-straight*1.3) // the track's detour, as deviationPct measures it
		out = append(out, Suggestion{SuggestionID: "sg_route", Type: "route_planning", Title: "Plan a more direct route",
			Description: "The route was much longer than the direct distance between its ends.",
			PotentialSavings: map[string]float64{"time_minutes": round(extra/math.Max(cruise, 30)*60, 1), "fuel_liters": round(extra*rates.perKm, 2),
				"cost_usd": round(extra*rates.perKm*fuelUSDPerLiter, 2)}, ImplementationComplexity: "medium"})
	}
	if a.HarshEvents.Speeding > 0 {
		out = append(out, Suggestion{SuggestionID: "sg_speed", Type: "speed_management", Title: "Keep to the limit",
			Description: "Speeding raises fuel use and risk; cruise control on highways helps.", PotentialSavings: map[string]float64{
				"time_minutes": lost(limit.minutes), "fuel_liters": round(limit.liters, 2), "cost_usd": round(limit.liters*fuelUSDPerLiter, 2)},
			ImplementationComplexity: "low"})
	}
	return out
}
