package trips_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/fleet/digest"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestDailySummaryEpisodesOnBothPaths: a device on daily_summary raises
// no speeding event, judged in the upload (no road network) or by the
// road matcher beside it (--osm), and each episode is recorded for the
// day's summary once, with the limit it was judged by (the configured
// 100 km/h, the street's 40), however often the stop and the matcher
// close it.
func TestDailySummaryEpisodesOnBothPaths(t *testing.T) {
	for _, withRoads := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		sc := store.Scope{Org: "org-a", Env: "test"}
		devs := devices.New(st)
		daily := "daily_summary"
		if _, err := devs.Apply(ctx, sc, "dev-1", devices.Settings{SafetyFeatures: &devices.SafetyFeatures{SpeedingAlerts: &devices.SpeedingAlerts{AlertFrequency: &daily}}}); err != nil {
			t.Fatal(err)
		}
		pub := &recorder{}
		cfg := trips.Config{DefaultSpeedLimitKmh: 50, Summaries: digest.New(digest.Config{}, st, pub)}
		if withRoads {
			cfg.Roads = mapmatch.New(street{}, routing.Auto, mapmatch.Config{})
		}
		svc, err := trips.New(cfg, st, pub, devs, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		go svc.RunRoads(ctx)
		start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
		if digest.Day(start) != digest.Day(start.Add(90*time.Second)) {
			// the drive would cross midnight UTC: it starts just after it
			start = start.Add(90 * time.Second).Truncate(24 * time.Hour).Add(time.Second)
		}
		tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", DriverID: "drv-1", StartTime: &start})
		if err != nil {
			t.Fatal(err)
		}
		// 70 km/h for 60 s, then 30 km/h for 20 s, 3 m east of the street
		lat, at := 40.0+100/111195.0, start.Add(time.Second)
		for i := 0; i < 80; i += 10 {
			b := &trips.BatchRequest{TripID: tr.TripID, DeviceInfo: &trips.BatchDeviceInfo{DeviceID: "dev-1"}}
			for k := i; k < i+10; k++ {
				v := 70.0
				if k >= 60 {
					v = 30
				}
				lat += v / 3.6 / 111195
				la, lo, acc := lat, -83+3/(111195*math.Cos(40*math.Pi/180)), 5.0
				b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, AccuracyMeters: &acc, Timestamp: at.Format(time.RFC3339Nano)})
				at = at.Add(time.Second)
			}
			res, err := svc.UploadBatch(ctx, "org-a", "test", b)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.EventsDetected {
				if e.EventType == "speeding" {
					t.Errorf("roads %v: the upload answered a speeding event", withRoads)
				}
			}
		}
		if _, err := svc.Stop(ctx, "org-a", "test", tr.TripID, trips.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		k := store.SpeedingSummaryKey{Org: "org-a", Env: "test", DeviceID: "dev-1", Day: digest.Day(start.Add(time.Second))}
		var eps []store.SpeedingEpisode
		waitfor.Until(t, 10*time.Second, "the episode recorded", func() bool {
			eps, err = st.SpeedingSummaryEpisodes(ctx, k)
			return err == nil && len(eps) > 0
		})
		if k.Day != digest.Day(at) {
			t.Fatalf("the drive crossed midnight UTC: %v to %v", start, at)
		}
		limit := 50.0
		if withRoads {
			limit = 40
		}
		if len(eps) != 1 || eps[0].LimitKmh != limit || math.Abs(eps[0].MaxSpeedKmh-70) > 0.5 || eps[0].TripID != tr.TripID ||
			eps[0].VehicleID != "veh-1" || eps[0].DriverID != "drv-1" || eps[0].DurationSeconds < 50 {
			t.Errorf("roads %v: episodes %+v, want one judged by %v km/h", withRoads, eps, limit)
		}
		pub.mu.Lock()
		for _, e := range pub.evs {
			if e.EventType == "speeding" {
				t.Errorf("roads %v: a speeding event was published: %+v", withRoads, e.EventData)
			}
		}
		pub.mu.Unlock()
		trip, err := svc.Get(ctx, "org-a", "test", tr.TripID)
		if err != nil {
			t.Fatal(err)
		}
		if trip.Analytics.HarshEvents.Speeding != 0 {
			t.Errorf("roads %v: the trip counts %d speeding events, want 0", withRoads, trip.Analytics.HarshEvents.Speeding)
		}
	}
}
