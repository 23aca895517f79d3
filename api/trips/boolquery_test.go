package trips_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	domain "github.com/fleethub/fleethub/fleet/trips"
)

// TestBooleanQueryParameters: a boolean query parameter of the trip
// reads (include_analytics, include_waypoints, include_traffic_data,
// include_alternatives, simplify_geometry, include_breakdown,
// include_benchmarks) takes true or false, as the OpenAPI document's
// boolean is written; 1, t, TRUE and the like are refused naming the
// parameter (400 invalid_request), never read as true or false.
func TestBooleanQueryParameters(t *testing.T) {
	ctx := context.Background()
	svc, call := startTrips(t)
	start := time.Now().Add(-30 * time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", domain.StartRequest{VehicleID: "veh-bool", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	locs := make([]domain.LocationIn, 60)
	for i := range locs {
		lat, lon, speed := 40+float64(i)*0.001, -83.0, 40.0
		locs[i] = domain.LocationIn{Latitude: &lat, Longitude: &lon, SpeedKmh: &speed, Timestamp: start.Add(time.Duration(i+1) * 15 * time.Second).UTC().Format(time.RFC3339)}
	}
	if _, err := svc.UploadBatch(ctx, "org-a", "test", &domain.BatchRequest{TripID: tr.TripID, Locations: locs}); err != nil {
		t.Fatal(err)
	}
	routes := map[string][]string{
		"/v1/trips":                               {"include_analytics"},
		"/v1/trips/" + tr.TripID + "/route":       {"include_waypoints", "include_traffic_data", "include_alternatives", "simplify_geometry"},
		"/v1/analytics/safety-score/" + tr.TripID: {"include_breakdown", "include_benchmarks"},
	}
	for path, params := range routes {
		for _, p := range params {
			for _, v := range []string{"true", "false"} {
				if status, code, _ := call("GET", fmt.Sprintf("%s?%s=%s", path, p, v), ""); status != 200 {
					t.Errorf("%s?%s=%s: %d %s", path, p, v, status, code)
				}
			}
			for _, v := range []string{"1", "0", "t", "TRUE", "False", "yes"} {
				status, code, details := call("GET", fmt.Sprintf("%s?%s=%s", path, p, v), "")
				if status != 400 || code != "invalid_request" || details[p] != "must be true or false" {
					t.Errorf("%s?%s=%s: %d %s %v, want 400 invalid_request naming %s", path, p, v, status, code, details, p)
				}
			}
		}
	}
}
