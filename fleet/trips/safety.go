package trips

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// Minimums of a safety score analysis.
const (
	MinSafetyPoints   = 50
	MinSafetyDuration = 10 * time.Minute
)

// RoadTypes splits distance by road: by the class and limit of the
// matched road (with --osm), else by speed band.
type RoadTypes struct {
	HighwayPercentage float64 `json:"highway_percentage" source:"computed" doc:"share of distance on motorways and trunks (with --osm, the roads the points were matched to); off the roads, or without --osm, at 80 km/h or more"`
	CityPercentage    float64 `json:"city_percentage" source:"computed" doc:"share of distance on other roads limited to 60 km/h or less (with --osm); off the roads, or without --osm, under 50 km/h"`
	RuralPercentage   float64 `json:"rural_percentage" source:"computed" doc:"the rest"`
}

// TripContext describes the trip analysed.
type TripContext struct {
	DistanceKm        float64   `json:"distance_km" source:"computed"`
	DurationMinutes   float64   `json:"duration_minutes" source:"computed"`
	RoadTypes         RoadTypes `json:"road_types"`
	WeatherConditions string    `json:"weather_conditions" enum:"unknown" source:"unknown" doc:"unknown: no weather source is connected"`
	TrafficDensity    string    `json:"traffic_density" enum:"low,moderate,high,unknown" source:"computed" doc:"from the share of distance driven in congestion (traffic_analysis of the route): low, moderate over 10 %, high over 30 %; unknown for a trip that never moved over 5 km/h, whose own speeds say nothing of the traffic"`
	TimeOfDay         string    `json:"time_of_day" enum:"morning,afternoon,evening,night" doc:"of the trip's start_time in UTC (the fleet's time zone is not known): morning 05-12, afternoon 12-17, evening 17-21, else night"`
	DayOfWeek         string    `json:"day_of_week" doc:"of the trip's start_time in UTC"`
}

// ScoreWeights of the breakdown (sum to 1).
type ScoreWeights struct {
	Acceleration      float64 `json:"acceleration" source:"constant"`
	Braking           float64 `json:"braking" source:"constant"`
	Cornering         float64 `json:"cornering" source:"constant"`
	SpeedCompliance   float64 `json:"speed_compliance" source:"constant"`
	FollowingDistance float64 `json:"following_distance" source:"constant" doc:"0: not measured"`
	Distraction       float64 `json:"distraction" source:"constant" doc:"0: not measured"`
	Consistency       float64 `json:"consistency" source:"constant"`
}

// ScoreBreakdown scores each behaviour 0-100.
type ScoreBreakdown struct {
	AccelerationScore      float64      `json:"acceleration_score" source:"computed"`
	BrakingScore           float64      `json:"braking_score" source:"computed"`
	CorneringScore         float64      `json:"cornering_score" source:"computed"`
	SpeedComplianceScore   float64      `json:"speed_compliance_score" source:"computed"`
	FollowingDistanceScore *float64     `json:"following_distance_score" source:"unknown" doc:"null: following distance needs forward sensors the hub receives nothing from (weight 0)"`
	DistractionScore       *float64     `json:"distraction_score" source:"unknown" doc:"null: distraction needs in-cab sensors the hub receives nothing from (weight 0)"`
	ConsistencyScore       *float64     `json:"consistency_score" source:"computed" doc:"100 less the coefficient of variation of the moving speeds (over 5 km/h), in percent; null when fewer than two were measured: a trip that never moved had no speed to keep steady"`
	ScoreWeights           ScoreWeights `json:"score_weights"`
}

// RiskFactor groups the events of one type.
type RiskFactor struct {
	FactorID          string      `json:"factor_id"`
	FactorType        string      `json:"factor_type"`
	Severity          string      `json:"severity" enum:"moderate,high,critical" source:"computed"`
	Frequency         int         `json:"frequency" source:"computed"`
	ScoreImpact       float64     `json:"score_impact" source:"computed" doc:"100 less the breakdown score of the behaviour; 0 for idle, which costs the eco score and not the safety score"`
	Description       string      `json:"description"`
	Timestamps        []time.Time `json:"timestamps"`
	Locations         []Location  `json:"locations"`
	DurationSeconds   float64     `json:"duration_seconds" source:"computed"`
	MaxSpeedOverLimit float64     `json:"max_speed_over_limit,omitempty" source:"computed" doc:"km/h over the configured limit"`
}

// PositiveIndicator is something the driver did well.
type PositiveIndicator struct {
	IndicatorType string  `json:"indicator_type" enum:"smooth_braking,speed_compliance,steady_speed"`
	Percentage    float64 `json:"percentage" source:"computed" doc:"smooth_braking and speed_compliance: the share of the trip's driving time outside harsh braking or speeding episodes (shown from 95; speed_compliance never for a device whose speeding alert_frequency is not immediate or whose speeding detection is off, smooth_braking never for one whose harsh event detection is off: not every episode of it is an event); steady_speed: the consistency score (shown from 80)"`
	ScoreBonus    float64 `json:"score_bonus" source:"constant" doc:"always 0: the safety score has no bonuses, it only loses points to events"`
	Description   string  `json:"description"`
}

// DriverComparison places the trip among the driver's completed trips of
// the last 30 days.
type DriverComparison struct {
	DriverID         *string  `json:"driver_id" doc:"null when the trip was started without a driver"`
	Driver30dAverage *float64 `json:"driver_30d_average" source:"computed" doc:"null without other completed trips of the driver in the last 30 days"`
	Comparison       string   `json:"comparison" enum:"above,below,equal,no_data" source:"computed"`
	Percentile       *float64 `json:"percentile" source:"computed" doc:"share of those trips scoring lower; null with no_data"`
}

// FleetComparison places the trip among the organization's completed
// trips of the last 30 days.
type FleetComparison struct {
	OrganizationID  string   `json:"organization_id"`
	Fleet30dAverage *float64 `json:"fleet_30d_average" source:"computed" doc:"null without other completed trips in the last 30 days"`
	Comparison      string   `json:"comparison" enum:"above,below,equal,no_data" source:"computed"`
	Percentile      *float64 `json:"percentile" source:"computed" doc:"share of those trips scoring lower; null with no_data"`
}

// IndustryComparison would place the trip in its industry; the hub has
// no industry data, so it says so.
type IndustryComparison struct {
	IndustrySegment string   `json:"industry_segment" enum:"unknown" source:"unknown" doc:"unknown: the hub does not know the fleet's industry"`
	IndustryAverage *float64 `json:"industry_average" source:"unknown" doc:"null: no industry benchmark data is connected"`
	Comparison      string   `json:"comparison" enum:"no_data" source:"unknown"`
	Percentile      *float64 `json:"percentile" source:"unknown" doc:"null: no industry benchmark data is connected"`
}

// Benchmarks compare the trip with the driver, the fleet and the industry.
type Benchmarks struct {
	VsDriverAverage     DriverComparison   `json:"vs_driver_average"`
	VsFleetAverage      FleetComparison    `json:"vs_fleet_average"`
	VsIndustryBenchmark IndustryComparison `json:"vs_industry_benchmark"`
}

// Recommendation is advice for the driver.
type Recommendation struct {
	Category             string   `json:"category"`
	Priority             string   `json:"priority" enum:"low,medium,high" source:"computed"`
	Title                string   `json:"title"`
	Description          string   `json:"description"`
	SpecificActions      []string `json:"specific_actions"`
	PotentialImprovement float64  `json:"potential_improvement" source:"computed" doc:"the points of overall_safety_score the category's events cost: the score the trip would have without them, its other events as they are, less its score (0 for idle, which costs the eco score only); not score_impact, which is 100 less the behaviour's own breakdown score"`
}

// ImprovementPotential sums up what can be gained.
type ImprovementPotential struct {
	MaximumPossibleScore       float64  `json:"maximum_possible_score" source:"constant" doc:"100, the top of the scale"`
	CurrentScore               float64  `json:"current_score" source:"computed"`
	ImprovementPointsAvailable float64  `json:"improvement_points_available" source:"computed"`
	PrimaryFocusAreas          []string `json:"primary_focus_areas" source:"computed" doc:"the two risk factors that cost the score most (idle, which costs it nothing, never)"`
	EstimatedTimeline          *string  `json:"estimated_timeline" source:"unknown" doc:"null: the hub has no model of how fast drivers improve"`
}

// SafetyAnalysis is GET /v1/analytics/safety-score/{trip_id}.
type SafetyAnalysis struct {
	TripID               string               `json:"trip_id"`
	OverallSafetyScore   float64              `json:"overall_safety_score" source:"computed"`
	ScoreGrade           string               `json:"score_grade" enum:"A,B,C,D,F" source:"computed"`
	AnalysisTimestamp    time.Time            `json:"analysis_timestamp" doc:"when the analysis was made; UTC, to the millisecond"`
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

// minutesText is a duration in minutes to two decimals, rounded down, so
// that a trip short of a minimum never reads as reaching it (9.999 is
// 9.99, not 10).
func minutesText(m float64) string {
	return strconv.FormatFloat(math.Floor(m*100)/100, 'f', -1, 64)
}

// SafetyScore analyses a trip's driving.
func (s *Service) SafetyScore(ctx context.Context, org, env, id string, withBreakdown, withBenchmarks bool) (SafetyAnalysis, error) {
	sc := scope(org, env)
	t, st, err := s.get(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	a := s.analyticsOf(&st)
	// the duration as measured, not as rounded for the answer: a trip of
	// 9 minutes 59.8 seconds is under 10 minutes
	if mins := s.figuresOf(&st).sum.DurationMinutes; a.LocationsCount < MinSafetyPoints || mins < MinSafetyDuration.Minutes() {
		e := &ShortDataError{Fields: map[string]string{},
			Message: fmt.Sprintf("the safety analysis needs at least %d location points over at least %g minutes; the trip has %d over %s minutes",
				MinSafetyPoints, MinSafetyDuration.Minutes(), a.LocationsCount, minutesText(mins))}
		if a.LocationsCount < MinSafetyPoints {
			e.Fields["locations_count"] = fmt.Sprintf("is %d; at least %d are needed", a.LocationsCount, MinSafetyPoints)
		}
		if mins < MinSafetyDuration.Minutes() {
			e.Fields["duration_minutes"] = fmt.Sprintf("is %s; at least %g are needed", minutesText(mins), MinSafetyDuration.Minutes())
		}
		return SafetyAnalysis{}, e
	}
	pts, err := s.points(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	events, err := s.storedEvents(ctx, sc, id)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	now := apitime.Of(s.now())
	prof := profileOf(pts, bandsOf(s.matchPoints(pts)), st.Pauses)
	// the scores are counted on the track, as the trip's safety score
	// is, even when the trip's distance is its odometer's
	risks, points := riskFactors(events, a.GPSDistanceKm)
	bd := breakdown(points, a.GPSDistanceKm, consistency(prof.moving))
	score := a.stored.safety // the trip has its MinSafetyPoints: it is scored
	out := SafetyAnalysis{TripID: id, OverallSafetyScore: score, ScoreGrade: grade(score), AnalysisTimestamp: now,
		TripContext: tripContext(t.StartTime, pts, prof, a), RiskFactors: risks,
		PositiveIndicators: positives(risks, a.DurationMinutes*60, bd.ConsistencyScore), Recommendations: []Recommendation{}}
	// a device whose speeding episodes are not all raised as events
	// (throttled, summarized by day, or not detected at all) may have
	// sped without the trip's events showing it: no share of its time
	// without speeding can be told from them; nor one without harsh
	// braking of a device whose harsh event detection is off
	thr, err := s.thresholds(ctx, sc, st.DeviceID)
	if err != nil {
		return SafetyAnalysis{}, err
	}
	out.PositiveIndicators = slices.DeleteFunc(out.PositiveIndicators, func(p PositiveIndicator) bool {
		switch p.IndicatorType {
		case "speed_compliance":
			return thr.SpeedingDisabled || thr.SpeedingSummary || thr.SpeedingEvery != 0
		case "smooth_braking":
			return thr.HarshDisabled
		}
		return false
	})
	if withBreakdown {
		out.ScoreBreakdown = &bd
	}
	var focus []string
	out.Recommendations, focus = recommendations(out.Recommendations, risks, scoreGains(events, a.GPSDistanceKm))
	out.ImprovementPotential = ImprovementPotential{MaximumPossibleScore: 100, CurrentScore: score,
		ImprovementPointsAvailable: round(100-score, 1), PrimaryFocusAreas: focus}
	if withBenchmarks {
		b, err := s.benchmarks(ctx, sc, t, score, now)
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
	cruise := cruisingSpeed(prof.speeds)
	switch ta := traffic(pts, prof, cruise, 0); {
	case cruise <= 0:
		// nothing moved at a speed to find congestion against: the
		// trip's own speeds say nothing of the traffic
		density = "unknown"
	case ta.AverageCongestionLevel > 0.3:
		density = "high"
	case ta.AverageCongestionLevel > 0.1:
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
		if e.Type != detect.TypeIdle { // idling costs the eco score, not the safety score
			points[e.Type] += severityPoints[e.Severity]
		}
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
		if k == detect.TypeIdle {
			rf.Description += " (it costs the eco score, not the safety score)"
		}
		rf.DurationSeconds = round(rf.DurationSeconds, 1)
		out = append(out, *rf)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ScoreImpact > out[j].ScoreImpact })
	return out, points
}

// consistency scores 0-100 how steady the moving speeds were: 100 less
// their coefficient of variation, in percent; nil for fewer than two
// (no speed was kept, steady or not).
func consistency(moving []float64) *float64 {
	if len(moving) <= 1 {
		return nil
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
	c := round(100*(1-math.Min(cv, 1)), 1)
	return &c
}

// breakdown scores each behaviour from the severity points of its events
// over km.
func breakdown(points map[string]float64, km float64, consistency *float64) ScoreBreakdown {
	return ScoreBreakdown{
		AccelerationScore: componentScore(points[detect.TypeHarshAcceleration], km), BrakingScore: componentScore(points[detect.TypeHarshBraking], km),
		CorneringScore: componentScore(points[detect.TypeHarshCornering], km), SpeedComplianceScore: componentScore(points[detect.TypeSpeeding], km),
		ConsistencyScore: consistency,
		ScoreWeights:     ScoreWeights{Acceleration: 0.2, Braking: 0.25, Cornering: 0.15, SpeedCompliance: 0.25, Consistency: 0.15},
	}
}

// positives are what the driver did well over a trip of durS seconds:
// hardly any harsh braking or speeding, a steady speed.
func positives(risks []RiskFactor, durS float64, consistency *float64) []PositiveIndicator {
	// outside is the share of the trip, in percent, outside typ's episodes
	outside := func(typ string) float64 {
		i := slices.IndexFunc(risks, func(rf RiskFactor) bool { return rf.FactorType == typ })
		if i < 0 {
			return 100
		}
		if durS <= 0 {
			return 0
		}
		return round(100*math.Max(0, 1-risks[i].DurationSeconds/durS), 1)
	}
	out := []PositiveIndicator{}
	for _, p := range []struct{ typ, indicator, what string }{
		{detect.TypeHarshBraking, "smooth_braking", "harsh braking"},
		{detect.TypeSpeeding, "speed_compliance", "speeding"},
	} {
		switch pct := outside(p.typ); {
		case pct == 100:
			out = append(out, PositiveIndicator{IndicatorType: p.indicator, Percentage: pct, Description: "No " + p.what + " on the trip"})
		case pct >= 95:
			out = append(out, PositiveIndicator{IndicatorType: p.indicator, Percentage: pct, Description: fmt.Sprintf("%.1f %% of the driving time without %s", pct, p.what)})
		}
	}
	if consistency != nil && *consistency >= 80 {
		out = append(out, PositiveIndicator{IndicatorType: "steady_speed", Percentage: *consistency, Description: "Steady speed while moving"})
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
// two risks that cost the score most to focus on first (never nil;
// none that cost nothing).
//
// gains holds, per event type, the points the trip's safety score would
// gain without that type's events (scoreGains).
func recommendations(out []Recommendation, risks []RiskFactor, gains map[string]float64) ([]Recommendation, []string) {
	focus := []string{}
	for _, rf := range risks {
		pr := "medium"
		switch {
		case rf.ScoreImpact == 0:
			pr = "low"
		case rf.Severity == detect.SeverityCritical || rf.ScoreImpact > 15:
			pr = "high"
		case rf.ScoreImpact < 3:
			pr = "low"
		}
		out = append(out, Recommendation{Category: rf.FactorType, Priority: pr, Title: "Reduce " + riskDescriptions[rf.FactorType],
			Description: rf.Description, SpecificActions: riskAdvice[rf.FactorType], PotentialImprovement: gains[rf.FactorType]})
		if len(focus) < 2 && rf.ScoreImpact > 0 {
			focus = append(focus, rf.FactorType)
		}
	}
	return out, focus
}

// scoreGains is, per event type, how many points of the trip's safety
// score its events cost: the score the trip would have had without them
// (the same events' points over the same track of km, ingest/analytics)
// less the score it has, rounded as the score is; 0 for idling, which
// costs the eco score only.
func scoreGains(events []storedEvent, km float64) map[string]float64 {
	total, by := 0.0, map[string]float64{}
	for _, e := range events {
		p := analytics.SafetyPoints(e.Event)
		total += p
		by[e.Type] += p
	}
	gains := make(map[string]float64, len(by))
	for typ, p := range by {
		gains[typ] = math.Max(0, round(analytics.SafetyScore(total-p, km)-analytics.SafetyScore(total, km), 1))
	}
	return gains
}

// compare places score among n others of mean avg, below of them
// scoring lower: their mean, the share below it and the comparison; nils
// and no_data without others.
func compare(score float64, n, below int, avg float64) (*float64, *float64, string) {
	if n == 0 {
		return nil, nil, "no_data"
	}
	a, p := round(avg, 1), round(100*float64(below)/float64(n), 1)
	cmp := "equal"
	switch {
	case score > a+0.5:
		cmp = "above"
	case score < a-0.5:
		cmp = "below"
	}
	return &a, &p, cmp
}

// benchmarks place score, trip t's, among the other completed trips
// with points that started in the 30 days before now: the driver's and
// the organization's, every one of them counted by the store.
func (s *Service) benchmarks(ctx context.Context, sc store.Scope, t store.Trip, score float64, now time.Time) (Benchmarks, error) {
	place := func(f store.TripFilter) (avg, pct *float64, cmp string, err error) {
		f.Scope, f.Statuses, f.StartAfter, f.ExcludeID, f.WithPoints = sc, []string{store.TripCompleted}, now.Add(-30*24*time.Hour), t.ID, true
		all, err := s.store.SummarizeTrips(ctx, f)
		if err != nil || all.Count == 0 {
			return nil, nil, "no_data", err
		}
		f.SafetyBelow = &score
		below, err := s.store.SummarizeTrips(ctx, f)
		if err != nil {
			return nil, nil, "", err
		}
		avg, pct, cmp = compare(score, all.Count, below.Count, all.AvgSafetyScore)
		return avg, pct, cmp, nil
	}
	b := Benchmarks{VsDriverAverage: DriverComparison{DriverID: optional(t.DriverID), Comparison: "no_data"},
		VsFleetAverage:      FleetComparison{OrganizationID: t.Org},
		VsIndustryBenchmark: IndustryComparison{IndustrySegment: "unknown", Comparison: "no_data"}}
	var err error
	if t.DriverID != "" {
		d := &b.VsDriverAverage
		if d.Driver30dAverage, d.Percentile, d.Comparison, err = place(store.TripFilter{DriverID: t.DriverID}); err != nil {
			return b, err
		}
	}
	f := &b.VsFleetAverage
	f.Fleet30dAverage, f.Percentile, f.Comparison, err = place(store.TripFilter{})
	return b, err
}
