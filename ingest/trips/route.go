package trips

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
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
	Coordinates [][]float64 `json:"coordinates"`
	TotalPoints int         `json:"total_points" doc:"points stored for the trip"`
	Simplified  bool        `json:"simplified"`
	Precision   int         `json:"precision"`
}

// RouteAnalytics summarizes the driven route.
type RouteAnalytics struct {
	TotalDistanceKm          float64 `json:"total_distance_km"`
	EstimatedDurationMinutes float64 `json:"estimated_duration_minutes" doc:"distance at the trip's typical cruising speed"`
	ActualDurationMinutes    float64 `json:"actual_duration_minutes"`
	EfficiencyScore          float64 `json:"efficiency_score" doc:"0-100: straight-line distance over driven distance, less idling"`
	DeviationPercentage      float64 `json:"deviation_percentage" doc:"driven distance over straight-line distance, minus 100"`
	FuelEfficiencyRating     string  `json:"fuel_efficiency_rating" enum:"excellent,good,fair,poor"`
	RouteComplexity          string  `json:"route_complexity" enum:"low,medium,high"`
	ElevationGainMeters      float64 `json:"elevation_gain_meters"`
	HighwayPercentage        float64 `json:"highway_percentage" doc:"share of distance at 80 km/h or more"`
	CityDrivingPercentage    float64 `json:"city_driving_percentage" doc:"share of distance under 50 km/h"`
}

// Waypoint is a notable point of the route.
type Waypoint struct {
	WaypointID          string    `json:"waypoint_id"`
	Latitude            float64   `json:"latitude"`
	Longitude           float64   `json:"longitude"`
	WaypointType        string    `json:"waypoint_type" enum:"start,turn,stop,end"`
	Address             string    `json:"address"`
	DistanceFromStartKm float64   `json:"distance_from_start_km"`
	EstimatedArrival    time.Time `json:"estimated_arrival_time"`
	ActualArrival       time.Time `json:"actual_arrival_time"`
	DelayMinutes        float64   `json:"delay_minutes"`
}

// CongestedSegment is a stretch driven well under the trip's cruising speed.
type CongestedSegment struct {
	SegmentID       string  `json:"segment_id"`
	StartKm         float64 `json:"start_km"`
	EndKm           float64 `json:"end_km"`
	CongestionLevel string  `json:"congestion_level" enum:"moderate,heavy"`
	DelayMinutes    float64 `json:"delay_minutes"`
	AverageSpeedKmh float64 `json:"average_speed_kmh"`
}

// PeakHours says whether the trip ran in peak hours.
type PeakHours struct {
	IsPeakHours            bool    `json:"is_peak_hours"`
	PeakPeriod             string  `json:"peak_period"`
	AdditionalDelayMinutes float64 `json:"additional_delay_minutes"`
	CongestionFactor       float64 `json:"congestion_factor"`
}

// TrafficAnalysis is derived from the trip's own speeds (no external
// traffic feed): segments far under the cruising speed are congested.
type TrafficAnalysis struct {
	AverageCongestionLevel float64            `json:"average_congestion_level" doc:"0-1"`
	TrafficDelayMinutes    float64            `json:"traffic_delay_minutes"`
	FuelCostImpactUSD      float64            `json:"fuel_cost_impact_usd"`
	CongestedSegments      []CongestedSegment `json:"congested_segments"`
	PeakHoursImpact        PeakHours          `json:"peak_hours_impact"`
	IncidentReports        []any              `json:"incident_reports"`
}

// Suggestion is an optimization suggestion.
type Suggestion struct {
	SuggestionID             string             `json:"suggestion_id"`
	Type                     string             `json:"type"`
	Title                    string             `json:"title"`
	Description              string             `json:"description"`
	PotentialSavings         map[string]float64 `json:"potential_savings"`
	ImplementationComplexity string             `json:"implementation_complexity" enum:"low,medium,high"`
}

// Route is the route data of a trip.
type Route struct {
	TripID                  string           `json:"trip_id"`
	RouteStatus             string           `json:"route_status" enum:"active,completed,analyzing"`
	RouteGeometry           Geometry         `json:"route_geometry"`
	RouteAnalytics          RouteAnalytics   `json:"route_analytics"`
	Waypoints               []Waypoint       `json:"waypoints,omitempty"`
	TrafficAnalysis         *TrafficAnalysis `json:"traffic_analysis,omitempty"`
	AlternativeRoutes       []any            `json:"alternative_routes,omitempty" doc:"needs the routing engine; empty in this release"`
	OptimizationSuggestions []Suggestion     `json:"optimization_suggestions"`
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
		return Route{}, ErrInsufficientData
	}
	a := s.analyticsOf(&st)
	r := Route{TripID: id, RouteStatus: "completed", OptimizationSuggestions: []Suggestion{}}
	if t.Status == store.TripActive || t.Status == store.TripPaused {
		r.RouteStatus = "active"
	}
	// geometry
	coords := make([][2]float64, len(pts))
	for i, p := range pts {
		coords[i] = [2]float64{p.Lon, p.Lat}
	}
	if q.SimplifyGeometry {
		tol := math.Pow(10, -float64(q.Precision)) * 5 // half a unit of the last kept decimal
		coords = simplify(coords, math.Max(tol, 1e-6))
	}
	scale := math.Pow(10, float64(q.Precision))
	r.RouteGeometry = Geometry{Type: "LineString", TotalPoints: len(pts), Simplified: q.SimplifyGeometry, Precision: q.Precision}
	for _, c := range coords {
		r.RouteGeometry.Coordinates = append(r.RouteGeometry.Coordinates, []float64{math.Round(c[0]*scale) / scale, math.Round(c[1]*scale) / scale})
	}
	// analytics from the points
	var cum []float64
	total, gain, highway, city, moving := 0.0, 0.0, 0.0, 0.0, 0.0
	cum = append(cum, 0)
	speeds := make([]float64, len(pts))
	for i := 1; i < len(pts); i++ {
		d := geo.Distance(pts[i-1].pos(), pts[i].pos()) / 1000
		dt := float64(pts[i].TS-pts[i-1].TS) / 3.6e6
		v := pts[i].Speed
		if math.IsNaN(v) && dt > 0 {
			v = d / dt
		}
		speeds[i] = v
		total += d
		cum = append(cum, total)
		switch {
		case v >= 80:
			highway += d
		case v < 50:
			city += d
		}
		if v > 5 {
			moving += dt
		}
		if !math.IsNaN(pts[i].Altitude) && !math.IsNaN(pts[i-1].Altitude) && pts[i].Altitude > pts[i-1].Altitude {
			gain += pts[i].Altitude - pts[i-1].Altitude
		}
	}
	first, last := pts[0], pts[len(pts)-1]
	straight := geo.Distance(first.pos(), last.pos()) / 1000
	cruise := cruisingSpeed(speeds)
	ra := RouteAnalytics{TotalDistanceKm: round(a.DistanceKm, 3), ActualDurationMinutes: a.DurationMinutes, ElevationGainMeters: round(gain, 1)}
	if cruise > 0 {
		ra.EstimatedDurationMinutes = round(a.DistanceKm/cruise*60, 2)
	}
	if total > 0 {
		ra.HighwayPercentage = round(100*highway/total, 1)
		ra.CityDrivingPercentage = round(100*city/total, 1)
	}
	if straight > 0.05 && a.DistanceKm > 0 {
		ra.DeviationPercentage = round(math.Max(0, 100*(a.DistanceKm/straight-1)), 1)
	}
	idleShare := 0.0
	if a.DurationMinutes > 0 {
		idleShare = math.Min(1, a.IdleTimeMinutes/a.DurationMinutes)
	}
	directness := 1.0
	if a.DistanceKm > 0.05 {
		directness = math.Min(1, straight/a.DistanceKm)
	}
	ra.EfficiencyScore = round(100*(0.6*directness+0.4*(1-idleShare)), 1)
	switch k := a.FuelEfficiency.FuelEfficiencyKmpl; {
	case k >= 14:
		ra.FuelEfficiencyRating = "excellent"
	case k >= 11:
		ra.FuelEfficiencyRating = "good"
	case k >= 8:
		ra.FuelEfficiencyRating = "fair"
	default:
		ra.FuelEfficiencyRating = "poor"
	}
	turns := turnIndexes(pts)
	switch perKm := float64(len(turns)) / math.Max(a.DistanceKm, 1); {
	case perKm > 2:
		ra.RouteComplexity = "high"
	case perKm > 0.5:
		ra.RouteComplexity = "medium"
	default:
		ra.RouteComplexity = "low"
	}
	r.RouteAnalytics = ra
	if q.IncludeWaypoints {
		add := func(kind string, i int) {
			p := pts[i]
			at := p.Time()
			est := first.Time()
			if cruise > 0 {
				est = est.Add(time.Duration(cum[i] / cruise * float64(time.Hour)))
			}
			r.Waypoints = append(r.Waypoints, Waypoint{WaypointID: fmt.Sprintf("wp_%d", len(r.Waypoints)+1), Latitude: p.Lat, Longitude: p.Lon,
				WaypointType: kind, DistanceFromStartKm: round(cum[i], 3), EstimatedArrival: est, ActualArrival: at,
				DelayMinutes: round(math.Max(0, at.Sub(est).Minutes()), 2)})
		}
		add("start", 0)
		for _, i := range turns {
			if len(r.Waypoints) >= 100 {
				break
			}
			add("turn", i)
		}
		add("end", len(pts)-1)
		if t.StartLocation != nil {
			r.Waypoints[0].Address = t.StartLocation.Address
		}
		if t.EndLocation != nil {
			r.Waypoints[len(r.Waypoints)-1].Address = t.EndLocation.Address
		}
	}
	if q.IncludeTrafficData {
		r.TrafficAnalysis = traffic(pts, speeds, cum, cruise, a)
	}
	if q.IncludeAlternatives {
		r.AlternativeRoutes = []any{}
	}
	if a.IdleTimeMinutes > 5 {
		r.OptimizationSuggestions = append(r.OptimizationSuggestions, Suggestion{SuggestionID: "sg_idle", Type: "reduce_idling", Title: "Reduce idling",
			Description:              fmt.Sprintf("The vehicle idled %.0f minutes; switching the engine off on stops longer than a minute saves fuel.", a.IdleTimeMinutes),
			PotentialSavings:         map[string]float64{"time_minutes": 0, "fuel_liters": round(a.IdleTimeMinutes/60*0.8, 2), "cost_usd": round(a.IdleTimeMinutes/60*0.8*fuelUSDPerLiter, 2)},
			ImplementationComplexity: "low"})
	}
	if ra.DeviationPercentage > 40 {
		extra := a.DistanceKm - straight*1.3
		r.OptimizationSuggestions = append(r.OptimizationSuggestions, Suggestion{SuggestionID: "sg_route", Type: "route_planning", Title: "Plan a more direct route",
			Description: "The route was much longer than the direct distance between its ends.",
			PotentialSavings: map[string]float64{"time_minutes": round(math.Max(0, extra)/math.Max(cruise, 30)*60, 1), "fuel_liters": round(math.Max(0, extra)*0.08, 2),
				"cost_usd": round(math.Max(0, extra)*0.08*fuelUSDPerLiter, 2)}, ImplementationComplexity: "medium"})
	}
	if a.HarshEvents.Speeding > 0 {
		r.OptimizationSuggestions = append(r.OptimizationSuggestions, Suggestion{SuggestionID: "sg_speed", Type: "speed_management", Title: "Keep to the limit",
			Description: "Speeding raises fuel use and risk; cruise control on highways helps.", PotentialSavings: map[string]float64{"time_minutes": 0,
				"fuel_liters": round(a.FuelEfficiency.FuelConsumedLiters*0.05, 2), "cost_usd": round(a.FuelEfficiency.FuelConsumedLiters*0.05*fuelUSDPerLiter, 2)},
			ImplementationComplexity: "low"})
	}
	return r, nil
}

// cruisingSpeed is the median of moving speeds (km/h).
func cruisingSpeed(speeds []float64) float64 {
	var m []float64
	for _, v := range speeds {
		if v > 5 && !math.IsNaN(v) {
			m = append(m, v)
		}
	}
	if len(m) == 0 {
		return 0
	}
	sortFloats(m)
	return m[len(m)/2]
}

func sortFloats(v []float64) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// turnIndexes finds points where the bearing changes by more than 45°
// over about 100 m, at least 200 m apart.
func turnIndexes(pts []Point) []int {
	var out []int
	lastTurn := -1e9
	dist := 0.0
	for i := 2; i < len(pts); i++ {
		step := geo.Distance(pts[i-1].pos(), pts[i].pos())
		dist += step
		a := geo.Bearing(pts[i-2].pos(), pts[i-1].pos())
		b := geo.Bearing(pts[i-1].pos(), pts[i].pos())
		d := math.Abs(math.Mod(b-a+540, 360) - 180)
		if d > 45 && step > 5 && dist-lastTurn > 200 {
			out = append(out, i-1)
			lastTurn = dist
		}
	}
	return out
}

func traffic(pts []Point, speeds, cum []float64, cruise float64, a Analytics) *TrafficAnalysis {
	ta := &TrafficAnalysis{CongestedSegments: []CongestedSegment{}, IncidentReports: []any{}}
	if cruise <= 0 {
		return ta
	}
	inSeg := -1
	var sumV float64
	var n int
	congestedKm := 0.0
	flush := func(end int) {
		if inSeg < 0 {
			return
		}
		avg := sumV / float64(n)
		km := cum[end] - cum[inSeg]
		if km > 0.05 {
			level := "moderate"
			if avg < cruise*0.25 {
				level = "heavy"
			}
			delay := km/math.Max(avg, 1)*60 - km/cruise*60
			ta.CongestedSegments = append(ta.CongestedSegments, CongestedSegment{SegmentID: fmt.Sprintf("seg_%d", len(ta.CongestedSegments)+1),
				StartKm: round(cum[inSeg], 3), EndKm: round(cum[end], 3), CongestionLevel: level, DelayMinutes: round(math.Max(0, delay), 2), AverageSpeedKmh: round(avg, 1)})
			ta.TrafficDelayMinutes += math.Max(0, delay)
			congestedKm += km
		}
		inSeg, sumV, n = -1, 0, 0
	}
	for i := 1; i < len(pts); i++ {
		v := speeds[i]
		if v > 5 && v < cruise*0.5 {
			if inSeg < 0 {
				inSeg = i - 1
			}
			sumV += v
			n++
		} else {
			flush(i - 1)
		}
	}
	flush(len(pts) - 1)
	if cum[len(cum)-1] > 0 {
		ta.AverageCongestionLevel = round(congestedKm/cum[len(cum)-1], 2)
	}
	ta.TrafficDelayMinutes = round(ta.TrafficDelayMinutes, 2)
	// idling in traffic burns about 0.8 L/h
	ta.FuelCostImpactUSD = round(ta.TrafficDelayMinutes/60*0.8*fuelUSDPerLiter, 2)
	h := pts[0].Time().Hour()
	ph := PeakHours{CongestionFactor: round(1+ta.AverageCongestionLevel, 2)}
	switch {
	case h >= 7 && h < 10:
		ph.IsPeakHours, ph.PeakPeriod = true, "morning"
	case h >= 16 && h < 19:
		ph.IsPeakHours, ph.PeakPeriod = true, "evening"
	default:
		ph.PeakPeriod = "off_peak"
	}
	if ph.IsPeakHours {
		ph.AdditionalDelayMinutes = ta.TrafficDelayMinutes
	}
	ta.PeakHoursImpact = ph
	_ = a
	return ta
}

// simplify is Douglas-Peucker on lon/lat degrees.
func simplify(c [][2]float64, tol float64) [][2]float64 {
	if len(c) < 3 {
		return c
	}
	keep := make([]bool, len(c))
	keep[0], keep[len(c)-1] = true, true
	type span struct{ a, b int }
	stack := []span{{0, len(c) - 1}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		maxD, idx := 0.0, -1
		for i := s.a + 1; i < s.b; i++ {
			if d := segDist(c[i], c[s.a], c[s.b]); d > maxD {
				maxD, idx = d, i
			}
		}
		if idx >= 0 && maxD > tol {
			keep[idx] = true
			stack = append(stack, span{s.a, idx}, span{idx, s.b})
		}
	}
	out := make([][2]float64, 0, len(c)/4+2)
	for i, k := range keep {
		if k {
			out = append(out, c[i])
		}
	}
	return out
}

func segDist(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	if dx == 0 && dy == 0 {
		return math.Hypot(p[0]-a[0], p[1]-a[1])
	}
	t := ((p[0]-a[0])*dx + (p[1]-a[1])*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(p[0]-a[0]-t*dx, p[1]-a[1]-t*dy)
}
