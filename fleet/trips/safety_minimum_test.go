package trips_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestSafetyAnalysisMinimum: the safety analysis needs at least 50
// points and 10 minutes, measured: 50 points over 9 minutes 59.8
// seconds (duration_minutes rounds it to 10) are under the minimum and
// answer trip_not_found, as 49 points over 10 minutes do; 50 points over
// 10 minutes are analysed.
func TestSafetyAnalysisMinimum(t *testing.T) {
	g := newGarage(t)
	for i, c := range []struct {
		points int
		span   time.Duration
		ok     bool
	}{
		{50, 10*time.Minute - 200*time.Millisecond, false},
		{49, 10 * time.Minute, false},
		{50, 10 * time.Minute, true},
	} {
		start := g.clk.now().Add(-30 * time.Minute)
		tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: fmt.Sprintf("veh-min-%d", i), StartTime: &start})
		if err != nil {
			t.Fatal(err)
		}
		locs := make([]trips.LocationIn, c.points)
		for j := range locs {
			lat, lon, speed := 40+float64(j)*0.001, -83.0, 40.0
			ts := start.Add(time.Minute + c.span*time.Duration(j)/time.Duration(c.points-1))
			locs[j] = trips.LocationIn{Latitude: &lat, Longitude: &lon, SpeedKmh: &speed, Timestamp: ts.Format("2006-01-02T15:04:05.000Z07:00")}
		}
		res, err := g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID, Locations: locs})
		if err != nil || res.ProcessedCount != c.points {
			t.Fatalf("upload: %+v %v", res, err)
		}
		_, err = g.svc.SafetyScore(g.ctx, "org-a", "test", tr.TripID, true, true)
		switch {
		case c.ok && err != nil:
			t.Errorf("%d points over %v: %v", c.points, c.span, err)
		case !c.ok && !errors.Is(err, trips.ErrInsufficientData):
			t.Errorf("%d points over %v (duration_minutes %v): %v, want not enough location data", c.points, c.span, res.TripAnalytics.CurrentDurationMinutes, err)
		}
	}
}
