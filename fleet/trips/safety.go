package trips

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
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
	prof := profileOf(pts)
	risks, points := riskFactors(events, a.DistanceKm)
	bd := breakdown(points, a.DistanceKm, consistency(prof.moving))
	out := SafetyAnalysis{TripID: id, OverallSafetyScore: a.SafetyScore, ScoreGrade: grade(a.SafetyScore), AnalysisTimestamp: now,
		TripContext: tripContext(t.StartTime, pts, prof, a), RiskFactors: risks,
		PositiveIndicators: positives(risks, bd.ConsistencyScore), Recommendations: []Recommendation{}}
	if withBreakdown {
		out.ScoreBreakdown = &bd
	}
	var focus []string
	out.Recommendations, focus = recommendations(out.Recommendations, risks)
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

// tripContext describes the roads, the traffic and the time of the trip.
func tripContext(start time.Time, pts []Point, prof profile, a Analytics) TripContext {
	rt := RoadTypes{}
	if total := prof.totalKm(); total > 0 {
		rt.HighwayPercentage, rt.CityPercentage = round(100*prof.highwayKm/total, 1), round(100*prof.cityKm/total, 1)
		rt.RuralPercentage = round(math.Max(0, 100-rt.HighwayPercentage-rt.CityPercentage), 1)
	}
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
	if ta := traffic(pts, prof.speeds, prof.cum, cruisingSpeed(prof.speeds)); ta.AverageCongestionLevel > 0.3 {
		density = "high"
	} else if ta.AverageCongestionLevel > 0.1 {
		density = "moderate"
	}
	return TripContext{DistanceKm: a.DistanceKm, DurationMinutes: a.DurationMinutes, RoadTypes: rt, WeatherConditions: "unknown",
		TrafficDensity: density, TimeOfDay: tod, DayOfWeek: start.Weekday().String()}
}

// riskDescriptions name the risk of each event type.
var riskDescriptions = map[string]string{
	detect.TypeHarshAcceleration: "Hard accelerations",
	detect.TypeHarshBraking:      "Hard braking",
	detect.TypeHarshCornering:    "Fast cornering",
	detect.TypeSpeeding:          "Driving over the speed limit",
	detect.TypeIdle:              "Long idling",
}

// riskFactors groups the events by type, the largest score impact first,
// and returns the severity points of each type over km.
func riskFactors(events []storedEvent, km float64) ([]RiskFactor, map[string]float64) {
	byType := map[string]*RiskFactor{}
	points := map[string]float64{}
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
		points[e.Type] += severityPoints[e.Severity]
	}
	types := make([]string, 0, len(byType))
	for k := range byType {
		types = append(types, k)
	}
	sort.Strings(types)
	out := []RiskFactor{}
	for _, k := range types {
		rf := byType[k]
		rf.ScoreImpact = round(100-componentScore(points[k], km), 1)
		rf.Description = fmt.Sprintf("%s: %d in %.1f km", riskDescriptions[k], rf.Frequency, km)
		rf.DurationSeconds = round(rf.DurationSeconds, 1)
		out = append(out, *rf)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ScoreImpact > out[j].ScoreImpact })
	return out, points
}

// consistency scores 0-100 how steady the moving speeds were: 100 less
// their coefficient of variation, in percent.
func consistency(moving []float64) float64 {
	if len(moving) <= 1 {
		return 100
	}
	mean, sq := 0.0, 0.0
	for _, v := range moving {
		mean += v
	}
	mean /= float64(len(moving))
	for _, v := range moving {
		sq += (v - mean) * (v - mean)
	}
	cv := math.Sqrt(sq/float64(len(moving))) / math.Max(mean, 1)
	return round(100*(1-math.Min(cv, 1)), 1)
}

// breakdown scores each behaviour from the severity points of its events
// over km.
func breakdown(points map[string]float64, km, consistency float64) ScoreBreakdown {
	return ScoreBreakdown{
		AccelerationScore: componentScore(points[detect.TypeHarshAcceleration], km), BrakingScore: componentScore(points[detect.TypeHarshBraking], km),
		CorneringScore: componentScore(points[detect.TypeHarshCornering], km), SpeedComplianceScore: componentScore(points[detect.TypeSpeeding], km),
		FollowingDistanceScore: 100, DistractionScore: 100, ConsistencyScore: consistency,
		ScoreWeights: ScoreWeights{Acceleration: 0.2, Braking: 0.25, Cornering: 0.15, SpeedCompliance: 0.25, Consistency: 0.15},
	}
}

// positives are what the driver did well: no harsh braking, no speeding,
// a steady speed.
func positives(risks []RiskFactor, consistency float64) []PositiveIndicator {
	has := func(typ string) bool {
		return slices.ContainsFunc(risks, func(rf RiskFactor) bool { return rf.FactorType == typ })
	}
	out := []PositiveIndicator{}
	if !has(detect.TypeHarshBraking) {
		out = append(out, PositiveIndicator{IndicatorType: "smooth_braking", Percentage: 100, ScoreBonus: 0, Description: "No harsh braking on the trip"})
	}
	if !has(detect.TypeSpeeding) {
		out = append(out, PositiveIndicator{IndicatorType: "speed_compliance", Percentage: 100, ScoreBonus: 0, Description: "No speeding on the trip"})
	}
	if consistency >= 80 {
		out = append(out, PositiveIndicator{IndicatorType: "steady_speed", Percentage: consistency, ScoreBonus: 0, Description: "Steady speed while moving"})
	}
	return out
}

// riskAdvice is what a driver can do about each risk.
var riskAdvice = map[string][]string{
	detect.TypeHarshBraking:      {"Keep a three-second gap to the vehicle ahead", "Anticipate stops and lift off early"},
	detect.TypeHarshAcceleration: {"Accelerate progressively from stops", "Use eco mode where available"},
	detect.TypeHarshCornering:    {"Slow down before the turn, not in it", "Take wider lines at junctions"},
	detect.TypeSpeeding:          {"Use cruise control on highways", "Watch for limit changes entering towns"},
	detect.TypeIdle:              {"Switch the engine off on stops longer than a minute"},
}

// recommendations appends advice for each risk to out, and returns the
// two risks to focus on first (never nil).
func recommendations(out []Recommendation, risks []RiskFactor) ([]Recommendation, []string) {
	focus := []string{}
	for _, rf := range risks {
		pr := "medium"
		if rf.Severity == detect.SeverityCritical || rf.ScoreImpact > 15 {
			pr = "high"
		} else if rf.ScoreImpact < 3 {
			pr = "low"
		}
		out = append(out, Recommendation{Category: rf.FactorType, Priority: pr, Title: "Reduce " + riskDescriptions[rf.FactorType],
			Description: rf.Description, SpecificActions: riskAdvice[rf.FactorType], PotentialImprovement: rf.ScoreImpact})
		if len(focus) < 2 {
			focus = append(focus, rf.FactorType)
		}
	}
	return out, focus
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
