package trips_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestNoEpisodeAcrossAPause: detection stops at a pause as the trip's
// time and distance do. A vehicle standing 95 s before a 45 s pause and
// 50 s after it has idled 145 s, under the 3 minutes of an idle event:
// the pause is neither idling nor part of an episode, in the order the
// points came or with a late point that makes the trip analysed again.
func TestNoEpisodeAcrossAPause(t *testing.T) {
	for _, late := range []bool{false, true} {
		clk := &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
		svc := newServiceAt(t, clk)
		ctx := context.Background()
		start := clk.now()
		tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
		if err != nil {
			t.Fatal(err)
		}
		upload := func(from time.Time, secs ...int) {
			t.Helper()
			b := &trips.BatchRequest{TripID: tr.TripID}
			for _, s := range secs {
				la, lo, v, acc := 40.0, -83.0, 0.0, 4.0
				b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, AccuracyMeters: &acc,
					Timestamp: from.Add(time.Duration(s) * time.Second).Format(time.RFC3339Nano)})
			}
			if _, err := svc.UploadBatch(ctx, "org-a", "test", b); err != nil {
				t.Fatal(err)
			}
		}
		upload(start, 0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95)
		clk.advance(96 * time.Second)
		if _, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{}); err != nil {
			t.Fatal(err)
		}
		clk.advance(45 * time.Second)
		if _, err := svc.Resume(ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{}); err != nil {
			t.Fatal(err)
		}
		resumed := clk.now()
		clk.advance(time.Minute)
		if late {
			upload(resumed, 30, 35, 40, 45, 50)
			upload(resumed, 0, 5, 10, 15, 20, 25) // older than the newest: analysed again
		} else {
			upload(resumed, 0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
		}
		s, err := svc.Stop(ctx, "org-a", "test", tr.TripID, trips.StopRequest{})
		if err != nil {
			t.Fatal(err)
		}
		a := s.Analytics
		if a.IdleTimeMinutes != 0 || a.EventsCount != 0 {
			t.Errorf("late %v: idle %v min, %d events over %v min of trip; want none: the pause is no idling", late, a.IdleTimeMinutes, a.EventsCount, a.DurationMinutes)
		}
		near(t, "duration_minutes", a.DurationMinutes, 146.0/60, 0.01)
	}
}
