package trips

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/store"
)

// Minimums of a safety score analysis.
const (
	MinSafetyPoints   = 50
	MinSafetyDuration = 10 * time.Minute
	// IndustryAverage is the documented reference score of light
	// commercial fleets the benchmark compares with.
	IndustryAverage = 82.0
)

// RoadTypes splits distance by speed band.
type RoadTypes struct {
	HighwayPercentage float64 `json:"highway_percentage"`
	CityPercentage    float64 `json:"city_percentage"`
	RuralPercentage   float64 `json:"rural_percentage"`
}

// TripContext describes the trip analysed.
type TripContext struct {
	DistanceKm        float64   `json:"distance_km"`
	DurationMinutes   float64   `json:"duration_minutes"`
	RoadTypes         RoadTypes `json:"road_types"`
	WeatherConditions string    `json:"weather_conditions" doc:"unknown: no weather source is connected"`
	TrafficDensity    string    `json:"traffic_density" enum:"low,moderate,high"`
	TimeOfDay         string    `json:"time_of_day" enum:"morning,afternoon,evening,night"`
	DayOfWeek         string    `json:"day_of_week"`
}

// ScoreWeights of the breakdown (sum to 1).
type ScoreWeights struct {
	Acceleration      float64 `json:"acceleration"`
	Braking           float64 `json:"braking"`
	Cornering         float64 `json:"cornering"`
	SpeedCompliance   float64 `json:"speed_compliance"`
	FollowingDistance float64 `json:"following_distance"`
	Distraction       float64 `json:"distraction"`
	Consistency       float64 `json:"consistency"`
}

// ScoreBreakdown scores each behaviour 0-100.
type ScoreBreakdown struct {
	AccelerationScore      float64      `json:"acceleration_score"`
	BrakingScore           float64      `json:"braking_score"`
	CorneringScore         float64      `json:"cornering_score"`
	SpeedComplianceScore   float64      `json:"speed_compliance_score"`
	FollowingDistanceScore float64      `json:"following_distance_score" doc:"not measured without forward sensors: 100, weight 0"`
	DistractionScore       float64      `json:"distraction_score" doc:"not measured without in-cab sensors: 100, weight 0"`
	ConsistencyScore       float64      `json:"consistency_score"`
	ScoreWeights           ScoreWeights `json:"score_weights"`
}

// RiskFactor groups the events of one type.
type RiskFactor struct {
	FactorID          string      `json:"factor_id"`
	FactorType        string      `json:"factor_type"`
	Severity          string      `json:"severity" enum:"moderate,high,critical"`
	Frequency         int         `json:"frequency"`
	ScoreImpact       float64     `json:"score_impact"`
	Description       string      `json:"description"`
	Timestamps        []time.Time `json:"timestamps"`
	Locations         []Location  `json:"locations"`
	DurationSeconds   float64     `json:"duration_seconds"`
	MaxSpeedOverLimit float64     `json:"max_speed_over_limit,omitempty"`
}

// PositiveIndicator is something the driver did well.
type PositiveIndicator struct {
	IndicatorType string  `json:"indicator_type"`
	Percentage    float64 `json:"percentage"`
	ScoreBonus    float64 `json:"score_bonus"`
	Description   string  `json:"description"`
}

// Comparison against a reference.
type Comparison struct {
	DriverID         string   `json:"driver_id,omitempty"`
	OrganizationID   string   `json:"organization_id,omitempty"`
	IndustrySegment  string   `json:"industry_segment,omitempty"`
	Driver30dAverage *float64 `json:"driver_30d_average,omitempty"`
	Fleet30dAverage  *float64 `json:"fleet_30d_average,omitempty"`
	IndustryAverage  *float64 `json:"industry_average,omitempty"`
	Comparison       string   `json:"comparison" enum:"above,below,equal,no_data"`
	Percentile       float64  `json:"percentile"`
}

// Benchmarks compare the trip with the driver, the fleet and the industry.
type Benchmarks struct {
	VsDriverAverage     Comparison `json:"vs_driver_average"`
	VsFleetAverage      Comparison `json:"vs_fleet_average"`
	VsIndustryBenchmark Comparison `json:"vs_industry_benchmark"`
}

// Recommendation is advice for the driver.
type Recommendation struct {
	Category             string   `json:"category"`
	Priority             string   `json:"priority" enum:"low,medium,high"`
	Title                string   `json:"title"`
	Description          string   `json:"description"`
	SpecificActions      []string `json:"specific_actions"`
	PotentialImprovement float64  `json:"potential_improvement"`
}

// ImprovementPotential sums up what can be gained.
type ImprovementPotential struct {
	MaximumPossibleScore       float64  `json:"maximum_possible_score"`
	CurrentScore               float64  `json:"current_score"`
	ImprovementPointsAvailable float64  `json:"improvement_points_available"`
	PrimaryFocusAreas          []string `json:"primary_focus_areas"`
	EstimatedTimeline          string   `json:"estimated_timeline"`
}

// SafetyAnalysis is GET /v1/analytics/safety-score/{trip_id}.
type SafetyAnalysis struct {
	TripID               string               `json:"trip_id"`
	OverallSafetyScore   float64              `json:"overall_safety_score"`
	ScoreGrade           string               `json:"score_grade" enum:"A,B,C,D,F"`
	AnalysisTimestamp    time.Time            `json:"analysis_timestamp"`
	TripContext          TripContext          `json:"trip_context"`
	ScoreBreakdown       *ScoreBreakdown      `json:"score_breakdown,omitempty"`
	RiskFactors          []RiskFactor         `json:"risk_factors"`
	PositiveIndicators   []PositiveIndicator  `json:"positive_indicators"`
	Benchmarks           *Benchmarks          `json:"benchmarks,omitempty"`
	Recommendations      []Recommendation     `json:"recommendations"`
	ImprovementPotential ImprovementPotential `json:"improvement_potential"`
}

var severityPoints = map[string]float64{detect.SeverityModerate: 1, detect.SeverityHigh: 2, detect.SeverityCritical: 4}

// componentScore turns severity points over a distance into 0-100, the
// same shape as the trip's safety score (docs/analytics.md).
func componentScore(points, km float64) float64 {
	return round(100*math.Exp(-points/math.Max(km, 20)*5), 1)
}

func grade(s float64) string {
	switch {
	case s >= 90:
		return "A"
	case s >= 80:
		return "B"
	case s >= 70:
		return "C"
	case s >= 60:
		return "D"
	}
	return "F"
}

// SafetyScore analyses a trip's driving.
func (s *Service) SafetyScore(ctx context.Context, org, env, id string, withBreakdown, withBenchmarks bool) (SafetyAnalysis, error) {
	sc := scope(org, env)
	t, st, err := s.get(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	a := s.analyticsOf(&st)
	if a.LocationsCount < MinSafetyPoints || a.DurationMinutes < MinSafetyDuration.Minutes() {
		return SafetyAnalysis{}, ErrInsufficientData
	}
	pts, err := s.points(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	events, err := s.storedEvents(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	now := s.now().UTC()
	out := SafetyAnalysis{TripID: id, OverallSafetyScore: a.SafetyScore, ScoreGrade: grade(a.SafetyScore), AnalysisTimestamp: now,
		RiskFactors: []RiskFactor{}, PositiveIndicators: []PositiveIndicator{}, Recommendations: []Recommendation{}}
	// context
	speeds := make([]float64, len(pts))
	total, hw, city := 0.0, 0.0, 0.0
	var moving []float64
	for i := 1; i < len(pts); i++ {
		d := geo.Distance(pts[i-1].pos(), pts[i].pos()) / 1000
		v := pts[i].Speed
		if dt := float64(pts[i].TS-pts[i-1].TS) / 3.6e6; math.IsNaN(v) && dt > 0 {
			v = d / dt
		}
		speeds[i] = v
		total += d
		switch {
		case v >= 80:
			hw += d
		case v < 50:
			city += d
		}
		if v > 5 {
			moving = append(moving, v)
		}
	}
	rt := RoadTypes{}
	if total > 0 {
		rt.HighwayPercentage, rt.CityPercentage = round(100*hw/total, 1), round(100*city/total, 1)
		rt.RuralPercentage = round(math.Max(0, 100-rt.HighwayPercentage-rt.CityPercentage), 1)
	}
	start := t.StartTime
	tod := "night"
	switch h := start.Hour(); {
	case h >= 5 && h < 12:
		tod = "morning"
	case h >= 12 && h < 17:
		tod = "afternoon"
	case h >= 17 && h < 21:
		tod = "evening"
	}
	density := "low"
	if ta := traffic(pts, speeds, cumulative(pts), cruisingSpeed(speeds), a); ta.AverageCongestionLevel > 0.3 {
		density = "high"
	} else if ta.AverageCongestionLevel > 0.1 {
		density = "moderate"
	}
	out.TripContext = TripContext{DistanceKm: a.DistanceKm, DurationMinutes: a.DurationMinutes, RoadTypes: rt, WeatherConditions: "unknown",
		TrafficDensity: density, TimeOfDay: tod, DayOfWeek: start.Weekday().String()}
	// risk factors by event type
	byType := map[string]*RiskFactor{}
	pointsByType := map[string]float64{}
	for _, e := range events {
		rf := byType[e.Type]
		if rf == nil {
			rf = &RiskFactor{FactorID: "rf_" + e.Type, FactorType: e.Type, Severity: e.Severity, Timestamps: []time.Time{}, Locations: []Location{}}
			byType[e.Type] = rf
		}
		rf.Frequency++
		if severityPoints[e.Severity] > severityPoints[rf.Severity] {
			rf.Severity = e.Severity
		}
		rf.Timestamps = append(rf.Timestamps, e.Start.UTC())
		rf.Locations = append(rf.Locations, Location{Latitude: e.Lat, Longitude: e.Lon})
		rf.DurationSeconds += e.Metrics.DurationSeconds
		if e.Type == detect.TypeSpeeding {
			rf.MaxSpeedOverLimit = math.Max(rf.MaxSpeedOverLimit, round(e.Metrics.ExcessSpeedKmh, 1))
		}
		pointsByType[e.Type] += severityPoints[e.Severity]
	}
	descr := map[string]string{
		detect.TypeHarshAcceleration: "Hard accelerations",
		detect.TypeHarshBraking:      "Hard braking",
		detect.TypeHarshCornering:    "Fast cornering",
		detect.TypeSpeeding:          "Driving over the speed limit",
		detect.TypeIdle:              "Long idling",
	}
	types := make([]string, 0, len(byType))
	for k := range byType {
		types = append(types, k)
	}
	sort.Strings(types)
	km := a.DistanceKm
	for _, k := range types {
		rf := byType[k]
		rf.ScoreImpact = round(100-componentScore(pointsByType[k], km), 1)
		rf.Description = fmt.Sprintf("%s: %d in %.1f km", descr[k], rf.Frequency, km)
		rf.DurationSeconds = round(rf.DurationSeconds, 1)
		out.RiskFactors = append(out.RiskFactors, *rf)
	}
	sort.SliceStable(out.RiskFactors, func(i, j int) bool { return out.RiskFactors[i].ScoreImpact > out.RiskFactors[j].ScoreImpact })
	// breakdown
	consistency := 100.0
	if len(moving) > 1 {
		mean, sq := 0.0, 0.0
		for _, v := range moving {
			mean += v
		}
		mean /= float64(len(moving))
		for _, v := range moving {
			sq += (v - mean) * (v - mean)
		}
		cv := math.Sqrt(sq/float64(len(moving))) / math.Max(mean, 1)
		consistency = round(100*(1-math.Min(cv, 1)), 1)
	}
	bd := ScoreBreakdown{
		AccelerationScore: componentScore(pointsByType[detect.TypeHarshAcceleration], km), BrakingScore: componentScore(pointsByType[detect.TypeHarshBraking], km),
		CorneringScore: componentScore(pointsByType[detect.TypeHarshCornering], km), SpeedComplianceScore: componentScore(pointsByType[detect.TypeSpeeding], km),
		FollowingDistanceScore: 100, DistractionScore: 100, ConsistencyScore: consistency,
		ScoreWeights: ScoreWeights{Acceleration: 0.2, Braking: 0.25, Cornering: 0.15, SpeedCompliance: 0.25, Consistency: 0.15},
	}
	if withBreakdown {
		out.ScoreBreakdown = &bd
	}
	// positives
	if byType[detect.TypeHarshBraking] == nil {
		out.PositiveIndicators = append(out.PositiveIndicators, PositiveIndicator{IndicatorType: "smooth_braking", Percentage: 100, ScoreBonus: 0, Description: "No harsh braking on the trip"})
	}
	if byType[detect.TypeSpeeding] == nil {
		out.PositiveIndicators = append(out.PositiveIndicators, PositiveIndicator{IndicatorType: "speed_compliance", Percentage: 100, ScoreBonus: 0, Description: "No speeding on the trip"})
	}
	if consistency >= 80 {
		out.PositiveIndicators = append(out.PositiveIndicators, PositiveIndicator{IndicatorType: "steady_speed", Percentage: consistency, ScoreBonus: 0, Description: "Steady speed while moving"})
	}
	// recommendations
	advice := map[string][]string{
		detect.TypeHarshBraking:      {"Keep a three-second gap to the vehicle ahead", "Anticipate stops and lift off early"},
		detect.TypeHarshAcceleration: {"Accelerate progressively from stops", "Use eco mode where available"},
		detect.TypeHarshCornering:    {"Slow down before the turn, not in it", "Take wider lines at junctions"},
		detect.TypeSpeeding:          {"Use cruise control on highways", "Watch for limit changes entering towns"},
		detect.TypeIdle:              {"Switch the engine off on stops longer than a minute"},
	}
	var focus []string
	for _, rf := range out.RiskFactors {
		pr := "medium"
		if rf.Severity == detect.SeverityCritical || rf.ScoreImpact > 15 {
			pr = "high"
		} else if rf.ScoreImpact < 3 {
			pr = "low"
		}
		out.Recommendations = append(out.Recommendations, Recommendation{Category: rf.FactorType, Priority: pr, Title: "Reduce " + descr[rf.FactorType],
			Description: rf.Description, SpecificActions: advice[rf.FactorType], PotentialImprovement: rf.ScoreImpact})
		if len(focus) < 2 {
			focus = append(focus, rf.FactorType)
		}
	}
	if focus == nil {
		focus = []string{}
	}
	timeline := "keep the current habits"
	if a.SafetyScore < 90 {
		timeline = "2-4 weeks"
	}
	out.ImprovementPotential = ImprovementPotential{MaximumPossibleScore: 100, CurrentScore: a.SafetyScore,
		ImprovementPointsAvailable: round(100-a.SafetyScore, 1), PrimaryFocusAreas: focus, EstimatedTimeline: timeline}
	if withBenchmarks {
		b, err := s.benchmarks(ctx, sc, t, a.SafetyScore, now)
		if err != nil {
			return SafetyAnalysis{}, err
		}
		out.Benchmarks = &b
	}
	return out, nil
}

func cumulative(pts []Point) []float64 {
	out := make([]float64, len(pts))
	for i := 1; i < len(pts); i++ {
		out[i] = out[i-1] + geo.Distance(pts[i-1].pos(), pts[i].pos())/1000
	}
	return out
}

// compare places score among others (their mean and the share below).
func compare(score float64, others []float64) Comparison {
	if len(others) == 0 {
		return Comparison{Comparison: "no_data"}
	}
	sum, below := 0.0, 0
	for _, o := range others {
		sum += o
		if o < score {
			below++
		}
	}
	avg := round(sum/float64(len(others)), 1)
	c := Comparison{Percentile: round(100*float64(below)/float64(len(others)), 1), Comparison: "equal"}
	switch {
	case score > avg+0.5:
		c.Comparison = "above"
	case score < avg-0.5:
		c.Comparison = "below"
	}
	c.Driver30dAverage = &avg
	return c
}

func (s *Service) benchmarks(ctx context.Context, sc store.Scope, t store.Trip, score float64, now time.Time) (Benchmarks, error) {
	scores := func(f store.TripFilter) ([]float64, error) {
		f.Scope, f.Statuses, f.StartAfter, f.Limit, f.Sort = sc, []string{store.TripCompleted}, now.Add(-30*24*time.Hour), 1000, "start_time"
		trips, err := s.store.ListTrips(ctx, f)
		if err != nil {
			return nil, err
		}
		var out []float64
		for _, x := range trips {
			if x.ID != t.ID && x.Totals.LocationsCount > 0 {
				out = append(out, x.Totals.SafetyScore)
			}
		}
		return out, nil
	}
	var b Benchmarks
	if t.DriverID != "" {
		ds, err := scores(store.TripFilter{DriverID: t.DriverID})
		if err != nil {
			return b, err
		}
		b.VsDriverAverage = compare(score, ds)
	} else {
		b.VsDriverAverage = Comparison{Comparison: "no_data"}
	}
	b.VsDriverAverage.DriverID = t.DriverID
	fs, err := scores(store.TripFilter{})
	if err != nil {
		return b, err
	}
	b.VsFleetAverage = compare(score, fs)
	b.VsFleetAverage.Fleet30dAverage, b.VsFleetAverage.Driver30dAverage = b.VsFleetAverage.Driver30dAverage, nil
	b.VsFleetAverage.OrganizationID = t.Org
	ind := IndustryAverage
	cmp := "equal"
	if score > ind+0.5 {
		cmp = "above"
	} else if score < ind-0.5 {
		cmp = "below"
	}
	// percentile against a normal spread of fleet scores (sd 8)
	pct := 100 * 0.5 * (1 + math.Erf((score-ind)/(8*math.Sqrt2)))
	b.VsIndustryBenchmark = Comparison{IndustrySegment: "light_commercial", IndustryAverage: &ind, Comparison: cmp, Percentile: round(pct, 1)}
	return b, nil
}
