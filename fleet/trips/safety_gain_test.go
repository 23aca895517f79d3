package trips_test

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestRecommendationGainIsTheScoresOwn: a recommendation's
// potential_improvement is what the trip's safety score would gain
// without that category's events, not the behaviour's own breakdown
// score lost (score_impact). One moderate hard stop and one moderate
// hard start in 25 km score 100·e^(−2/25) = 92.3; without either it
// would be 100·e^(−1/25) = 96.1, a gain of 3.8 points, while each
// behaviour's breakdown score, 100·e^(−5/25) = 81.9, is 18.1 under 100.
func TestRecommendationGainIsTheScoresOwn(t *testing.T) {
	g := newGarage(t)
	start := g.clk.now()
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "gain", DriverID: "d1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	// 60 km/h, a stop from 60 to 0 in 3 s (−0.567 g) after 12 km, a
	// start from 0 to 60 in 3 s (0.567 g), then 60 km/h to 25 km
	var speeds []float64
	for len(speeds) < 720 {
		speeds = append(speeds, 60)
	}
	speeds = append(speeds, 40, 20, 0, 0, 0, 15, 30, 45)
	for km := 0.0; km < 25; {
		speeds = append(speeds, 60)
		km = 0
		for _, v := range speeds {
			km += v / 3600
		}
	}
	g.driveNorth(t, tr.TripID, start, speeds)
	res, err := g.svc.Stop(g.ctx, "org-a", "test", tr.TripID, trips.StopRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Analytics.HarshEvents; h.HarshBraking != 1 || h.HarshAcceleration != 1 || h.HarshCornering != 0 || h.Speeding != 0 {
		t.Fatalf("want one hard stop and one hard start: %+v", h)
	}
	an, err := g.svc.SafetyScore(g.ctx, "org-a", "test", tr.TripID, true, false)
	if err != nil {
		t.Fatal(err)
	}
	km := res.Analytics.GPSDistanceKm
	near(t, "overall_safety_score", an.OverallSafetyScore, 100*math.Exp(-2/km), 0.1)
	want := 100*math.Exp(-1/km) - 100*math.Exp(-2/km)
	if len(an.Recommendations) != 2 {
		t.Fatalf("recommendations %+v, want braking and acceleration", an.Recommendations)
	}
	for _, r := range an.Recommendations {
		near(t, r.Category+" potential_improvement", r.PotentialImprovement, want, 0.1)
		if r.PotentialImprovement > an.ImprovementPotential.ImprovementPointsAvailable {
			t.Errorf("%s: potential_improvement %v over the %v points the score has to gain", r.Category, r.PotentialImprovement, an.ImprovementPotential.ImprovementPointsAvailable)
		}
	}
	for _, rf := range an.RiskFactors {
		near(t, rf.FactorType+" score_impact", rf.ScoreImpact, 100-100*math.Exp(-5/km), 0.2)
	}
}
