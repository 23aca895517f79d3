package trips_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
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
	r := newRoad(t)
	if got := r.drive(); len(got) != 0 {
		t.Fatalf("105 km/h within the default tolerance raised %v", got)
	}
	r.settings(devices.SpeedingAlerts{ThresholdOverLimit: new(0.0)})
	r.clk.advance(time.Second)
	if got := r.drive(); len(got) != 1 {
		t.Fatalf("after the device's tolerance went to zero: %v, want speeding", got)
	}
}

// TestAlertFrequencyThrottlesSpeeding: the device's alert_frequency
// decides how many of a trip's speeding episodes become events.
func TestAlertFrequencyThrottlesSpeeding(t *testing.T) {
	for freq, want := range map[string][]int{"immediate": {1, 1, 1}, "once_per_trip": {1, 0, 0}, "once_per_minute": {1, 1, 1}} {
		r := newRoad(t)
		r.settings(devices.SpeedingAlerts{ThresholdOverLimit: new(0.0), AlertFrequency: &freq})
		var got []int
		for range 3 {
			got = append(got, len(r.drive()))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: speeding events per episode %v, want %v", freq, got, want)
		}
	}
	// once a minute: episodes starting within a minute of the last one
	// reported are not reported
	r := newRoad(t)
	freq := "once_per_minute"
	r.settings(devices.SpeedingAlerts{ThresholdOverLimit: new(0.0), AlertFrequency: &freq})
	r.pace = 20 // an episode starts every 40 s: at 0, 40, 80 and 120 s
	var got []int
	for range 4 {
		got = append(got, len(r.drive()))
	}
	if !slices.Equal(got, []int{1, 0, 1, 0}) {
		t.Errorf("once_per_minute, an episode every 40 s: %v, want [1 0 1 0]", got)
	}
}

// road is a trip on a 100 km/h road whose device's settings the test
// changes.
type road struct {
	t    *testing.T
	ctx  context.Context
	clk  *fakeClock
	devs *devices.Service
	svc  *trips.Service
	trip string
	lat  float64
	at   time.Time
	pace int // seconds of speeding per episode (default 40)
}

func newRoad(t *testing.T) *road {
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
	start := clk.now().Add(-60 * time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	return &road{t: t, ctx: ctx, clk: clk, devs: devs, svc: svc, trip: tr.TripID, lat: 40, at: start.Add(time.Second), pace: 40}
}

func (r *road) settings(sp devices.SpeedingAlerts) {
	r.t.Helper()
	if _, err := r.devs.Apply(r.ctx, store.Scope{Org: "org-a", Env: "test"}, "dev-1", devices.Settings{SafetyFeatures: &devices.SafetyFeatures{SpeedingAlerts: &sp}}); err != nil {
		r.t.Fatal(err)
	}
}

// drive uploads pace seconds at 105 km/h due north, then slows by 5
// km/h a second to 55 km/h and keeps it for 10 s (a speeding episode is
// reported once it ends), one point a second; it answers the speeding
// events detected.
func (r *road) drive() []string {
	r.t.Helper()
	b := &trips.BatchRequest{TripID: r.trip, DeviceInfo: &trips.BatchDeviceInfo{DeviceID: "dev-1"}}
	for i := range r.pace + 20 {
		v := 105.0
		switch {
		case i >= r.pace+10:
			v = 55
		case i >= r.pace:
			v = 105 - 5*float64(i-r.pace+1)
		}
		r.lat += v / 3.6 / 111195
		la, lo := r.lat, -83.0
		b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, Timestamp: r.at.Format(time.RFC3339Nano)})
		r.at = r.at.Add(time.Second)
	}
	res, err := r.svc.UploadBatch(r.ctx, "org-a", "test", b)
	if err != nil {
		r.t.Fatal(err)
	}
	var speeding []string
	for _, e := range res.EventsDetected {
		if e.EventType == "speeding" {
			speeding = append(speeding, e.EventType)
		}
	}
	return speeding
}
