package trips_test

import (
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestKeepToTheLimitSavesWhatTheSpeedingCost: the speed_management
// suggestion's potential savings are the trip's speeding stretches
// driven at their limit, by the fuel model: 2 minutes at 120 km/h where
// the limit is 100 (about 3.97 km) burn 8 L/100 km × 0.5 × (120² − 100²)
// / 90² = 0.0217 L/km more, 0.086 L, and at 100 km/h would have taken
// 0.4 minutes longer (time_minutes −0.4); not 5 % of the whole trip's
// fuel whatever the speeding.
func TestKeepToTheLimitSavesWhatTheSpeedingCost(t *testing.T) {
	g := newGarage(t)
	start := g.clk.now()
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "fast", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	var speeds []float64
	for len(speeds) < 600 {
		speeds = append(speeds, 80)
	}
	for range 120 {
		speeds = append(speeds, 120)
	}
	for range 600 {
		speeds = append(speeds, 80)
	}
	g.driveNorth(t, tr.TripID, start, speeds)
	res, err := g.svc.Stop(g.ctx, "org-a", "test", tr.TripID, trips.StopRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Analytics.HarshEvents.Speeding != 1 {
		t.Fatalf("want one speeding event: %+v", res.Analytics.HarshEvents)
	}
	r, err := g.svc.Route(g.ctx, "org-a", "test", tr.TripID, trips.RouteQuery{Precision: 6})
	if err != nil {
		t.Fatal(err)
	}
	var ps map[string]float64
	for _, s := range r.OptimizationSuggestions {
		if s.Type == "speed_management" {
			ps = s.PotentialSavings
		}
	}
	if ps == nil {
		t.Fatalf("no speed_management suggestion: %+v", r.OptimizationSuggestions)
	}
	near(t, "fuel_liters", ps["fuel_liters"], 0.086, 0.006)
	near(t, "cost_usd", ps["cost_usd"], 0.09, 0.011)
	near(t, "time_minutes", ps["time_minutes"], -0.4, 0.05)
}
