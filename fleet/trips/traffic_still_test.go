package trips_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestTrafficOfATripThatNeverMoved: a trip whose points never moved has
// no cruising speed to measure congestion against, yet it started when it
// started: its traffic analysis places it in the peak hours as any other
// (a trip from 08:00 UTC in the morning peak), with a congestion factor
// of 1 (none found), never an empty peak_period outside the field's
// values nor a factor of 0.
func TestTrafficOfATripThatNeverMoved(t *testing.T) {
	g := newGarage(t)
	start := g.clk.now() // 08:00 UTC
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "still", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	g.clk.advance(6 * time.Minute)
	b := &trips.BatchRequest{TripID: tr.TripID}
	for i := 0; i < 2; i++ {
		la, lo := 40.0, -83.0
		b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo,
			Timestamp: start.Add(time.Duration(1+5*i) * time.Minute).Format(time.RFC3339Nano)})
	}
	if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", b); err != nil {
		t.Fatal(err)
	}
	r, err := g.svc.Route(g.ctx, "org-a", "test", tr.TripID, trips.RouteQuery{IncludeTrafficData: true, Precision: 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.TrafficAnalysis == nil {
		t.Fatal("no traffic analysis")
	}
	ph := r.TrafficAnalysis.PeakHoursImpact
	if !ph.IsPeakHours || ph.PeakPeriod != "morning" || ph.CongestionFactor != 1 || ph.AdditionalDelayMinutes != 0 {
		t.Errorf("peak_hours_impact %+v, want the morning peak, a congestion factor of 1 and no delay", ph)
	}
}
