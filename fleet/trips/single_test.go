package trips_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestRejectedSinglePointHasNoLocationID: a single upload names the
// stored point by location_id; a point that was not stored (a repeated
// timestamp, one before the trip's start or too far ahead) has none:
// location_id is null, never the id of a point that does not exist.
func TestRejectedSinglePointHasNoLocationID(t *testing.T) {
	g := newGarage(t)
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-single"})
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := 40.0, -83.0
	at := func(d time.Duration) *trips.SingleRequest {
		return &trips.SingleRequest{TripID: tr.TripID, LocationIn: trips.LocationIn{Latitude: &lat, Longitude: &lon,
			Timestamp: g.clk.now().Add(d).Format(time.RFC3339)}}
	}
	res, err := g.svc.UploadSingle(g.ctx, "org-a", "test", at(time.Second))
	if err != nil || !res.Accepted || res.LocationID == nil || *res.LocationID == "" {
		t.Fatalf("a stored point: %+v %v", res, err)
	}
	for reason, d := range map[string]time.Duration{"duplicate_timestamp": time.Second, "before_trip_start": -time.Hour, "future_timestamp": time.Hour} {
		res, err := g.svc.UploadSingle(g.ctx, "org-a", "test", at(d))
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted || res.RejectionReason != reason {
			t.Fatalf("%s: accepted %v, reason %q", reason, res.Accepted, res.RejectionReason)
		}
		if res.LocationID != nil {
			t.Errorf("%s: location_id %q for a point not stored", reason, *res.LocationID)
		}
	}
}
