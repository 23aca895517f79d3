package trips_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	domain "github.com/fleethub/fleethub/fleet/trips"
)

// TestHugeAccuracyIsAssessed: a single upload whose accuracy_meters is
// a finite number near the largest a float holds (1e308) is answered
// like any other poor fix (its hdop, accuracy_meters / 5, is a finite
// number however large), and the stored points are the ones answered:
// never a 500 after the point was kept.
func TestHugeAccuracyIsAssessed(t *testing.T) {
	ctx := context.Background()
	svc, call := startTrips(t)
	start := time.Now().Add(-time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", domain.StartRequest{VehicleID: "veh-acc", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	for i, acc := range []string{"1e308", "1.7976931348623157e308", "9e307"} {
		ts := time.Now().Add(time.Duration(i-30) * time.Second).UTC().Format(time.RFC3339)
		body := fmt.Sprintf(`{"trip_id":%q,"latitude":40,"longitude":-83,"timestamp":%q,"accuracy_meters":%s}`, tr.TripID, ts, acc)
		if status, code, details := call("POST", "/v1/locations/single", body); status != 200 {
			t.Errorf("accuracy_meters %s: %d %s %v, want 200", acc, status, code, details)
		}
	}
	got, err := svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Analytics.LocationsCount != 3 {
		t.Errorf("%d points stored, want the 3 answered", got.Analytics.LocationsCount)
	}
}
