package trips_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestNewDeviceSettingsReachATripInProgress: a trip in progress judges
// its next points by its device's new settings once ThresholdsRefresh has
// passed, without a restart or a new trip: 105 km/h under a 100 km/h
// limit is within the default tolerance, and speeding once the device's
// tolerance is set to zero.
func TestNewDeviceSettingsReachATripInProgress(t *testing.T) {
	ctx := context.Background()
	clk := &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	devs := devices.New(st)
	svc, err := trips.New(trips.Config{Now: clk.now, DefaultSpeedLimitKmh: 100}, st, nil, devs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	start := clk.now().Add(-10 * time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	lat := 40.0
	at := start.Add(time.Second)
	// drive uploads 40 s at 105 km/h due north, then slows by 5 km/h a
	// second to 55 km/h and keeps it (a speeding episode is reported once
	// it ends), one point a second
	drive := func() []string {
		t.Helper()
		r := &trips.BatchRequest{TripID: tr.TripID, DeviceInfo: &trips.DeviceInfo{DeviceID: "dev-1"}}
		for i := range 60 {
			v := 105.0
			switch {
			case i >= 50:
				v = 55
			case i >= 40:
				v = 105 - 5*float64(i-39)
			}
			lat += v / 3.6 / 111195
			la, lo := lat, -83.0
			r.Locations = append(r.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, Timestamp: at.Format(time.RFC3339Nano)})
			at = at.Add(time.Second)
		}
		res, err := svc.UploadBatch(ctx, "org-a", "test", r)
		if err != nil {
			t.Fatal(err)
		}
		var speeding []string
		for _, e := range res.EventsDetected {
			if e.EventType == "speeding" {
				speeding = append(speeding, e.EventType)
			}
		}
		return speeding
	}
	if got := drive(); len(got) != 0 {
		t.Fatalf("105 km/h within the default tolerance raised %v", got)
	}
	zero := 0.0
	if _, err := devs.Apply(ctx, store.Scope{Org: "org-a", Env: "test"}, "dev-1", devices.Settings{SafetyFeatures: &devices.SafetyFeatures{
		SpeedingAlerts: &devices.SpeedingAlerts{ThresholdOverLimit: &zero}}}); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	got := drive()
	if len(got) != 1 {
		t.Fatalf("after the device's tolerance went to zero: %v, want speeding", got)
	}
}
