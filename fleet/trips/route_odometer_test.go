package trips_test

import (
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestRouteShapeFollowsTheTrack: when a trip's distance is its
// odometer's, the route's shape figures still compare the uploaded track
// with the straight line between its ends, both measured by GPS. A
// straight 5 km drive stopped with 8 km on the odometer (the readings
// also count what was driven before the first point and after the last,
// and are whole units) deviated from nothing: no 60 % detour, a full
// directness and no suggestion to plan a more direct route; and at one
// speed it took the time estimated, not 8 minutes for 8 km.
func TestRouteShapeFollowsTheTrack(t *testing.T) {
	g := newGarage(t)
	g.drive("km", 1, trips.StopRequest{OdometerReading: odo(10_000)})
	res := g.drive("km", 5, trips.StopRequest{OdometerReading: odo(10_008)})
	if res.Analytics.DistanceSource != trips.SourceOdometer {
		t.Fatalf("distance_source %s, want odometer: %+v", res.Analytics.DistanceSource, res.Analytics)
	}
	r, err := g.svc.Route(g.ctx, "org-a", "test", res.TripID, trips.RouteQuery{IncludeWaypoints: true, SimplifyGeometry: true, Precision: 6})
	if err != nil {
		t.Fatal(err)
	}
	ra := r.RouteAnalytics
	near(t, "total_distance_km (the trip's, the odometer's)", ra.TotalDistanceKm, 8, 1e-3)
	near(t, "deviation_percentage", ra.DeviationPercentage, 0, 0.5)
	near(t, "efficiency_score", ra.EfficiencyScore, 100, 0.5)
	// driven at one speed throughout: the estimate is the time it took,
	// as the end waypoint's estimated arrival is its actual one
	near(t, "estimated_duration_minutes", ra.EstimatedDurationMinutes, ra.ActualDurationMinutes, 0.05)
	if end := r.Waypoints[len(r.Waypoints)-1]; end.DelayMinutes != 0 {
		t.Errorf("end waypoint: %+v, want no delay", end)
	}
	for _, s := range r.OptimizationSuggestions {
		if s.Type == "route_planning" {
			t.Errorf("a straight track is advised a more direct route: %+v", s)
		}
	}
}
