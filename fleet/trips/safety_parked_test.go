package trips_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestParkedTripHasNoSteadySpeed: a trip whose 60 points over 12 minutes
// never moved (a vehicle parked with its trip open) had no speed to keep
// steady: its safety analysis gives no consistency_score (null, not 100)
// and claims no steady_speed ("Steady speed while moving"); nor do its
// own speeds say anything of the traffic: traffic_density is unknown,
// not low. The same trip driven at one speed scores 100, shows the
// indicator and finds the traffic low.
func TestParkedTripHasNoSteadySpeed(t *testing.T) {
	g := newGarage(t)
	for _, c := range []struct {
		name  string
		speed float64
	}{{"parked", 0}, {"driven", 40}} {
		start := g.clk.now()
		tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-" + c.name, StartTime: &start})
		if err != nil {
			t.Fatal(err)
		}
		g.clk.advance(13 * time.Minute)
		b := &trips.BatchRequest{TripID: tr.TripID}
		lat := 40.0
		for i := 0; i < 60; i++ {
			la, lo, v, acc := lat, -83.0, c.speed, 4.0
			b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, AccuracyMeters: &acc,
				Timestamp: start.Add(time.Duration(1+12*i) * time.Second).Format(time.RFC3339Nano)})
			lat += c.speed / 3.6 * 12 / 111195
		}
		if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", b); err != nil {
			t.Fatal(err)
		}
		an, err := g.svc.SafetyScore(g.ctx, "org-a", "test", tr.TripID, true, false)
		if err != nil {
			t.Fatal(err)
		}
		steady := false
		for _, p := range an.PositiveIndicators {
			steady = steady || p.IndicatorType == "steady_speed"
		}
		if d := an.TripContext.TrafficDensity; (c.speed == 0) != (d == "unknown") {
			t.Errorf("%s: traffic_density %s", c.name, d)
		}
		cs := an.ScoreBreakdown.ConsistencyScore
		switch {
		case c.speed == 0 && (cs != nil || steady):
			t.Errorf("%s: consistency_score %v, steady_speed shown %v; want null and not shown", c.name, cs, steady)
		case c.speed > 0 && (cs == nil || *cs != 100 || !steady):
			t.Errorf("%s: consistency_score %v, steady_speed shown %v; want 100 and shown", c.name, cs, steady)
		}
	}
}
