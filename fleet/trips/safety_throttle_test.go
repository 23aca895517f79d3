package trips_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/fleet/digest"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// analyseDrive drives a trip of a device with safety features sf 11
// minutes at 70 km/h under a 50 km/h limit, braking to 30 km/h for the
// sixth minute (two speeding episodes), and answers its safety analysis.
func analyseDrive(t *testing.T, sf devices.SafetyFeatures) trips.SafetyAnalysis {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sc := store.Scope{Org: "org-a", Env: "test"}
	devs := devices.New(st)
	if _, err := devs.Apply(ctx, sc, "dev-1", devices.Settings{SafetyFeatures: &sf}); err != nil {
		t.Fatal(err)
	}
	pub := &recorder{}
	svc, err := trips.New(trips.Config{DefaultSpeedLimitKmh: 50, Summaries: digest.New(digest.Config{}, st, pub)}, st, pub, devs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	b := &trips.BatchRequest{TripID: tr.TripID, DeviceInfo: &trips.BatchDeviceInfo{DeviceID: "dev-1"}}
	lat := 40.0
	for k := 0; k < 660; k++ {
		v := 70.0
		if k >= 300 && k < 360 {
			v = 30
		}
		lat += v / 3.6 / 111195
		la, lo, acc, sp := lat, -83.0, 5.0, v
		b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &sp, AccuracyMeters: &acc,
			Timestamp: start.Add(time.Duration(k+1) * time.Second).Format(time.RFC3339Nano)})
	}
	if _, err := svc.UploadBatch(ctx, "org-a", "test", b); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Stop(ctx, "org-a", "test", tr.TripID, trips.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	an, err := svc.SafetyScore(ctx, "org-a", "test", tr.TripID, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return an
}

// TestNoSpeedComplianceClaimWithoutEvents: a device whose speeding
// episodes are not all raised as events (daily_summary, once_per_trip,
// once_per_minute) sped without the trip's events showing it, so the
// safety analysis cannot tell the share of its time without speeding:
// it makes no speed_compliance claim ("No speeding on the trip") for a
// trip driven 11 minutes at 70 km/h under a 50 km/h limit. A device
// raising every episode keeps the indicator.
func TestNoSpeedComplianceClaimWithoutEvents(t *testing.T) {
	for _, freq := range []string{"daily_summary", "once_per_trip", "immediate"} {
		f := freq
		an := analyseDrive(t, devices.SafetyFeatures{SpeedingAlerts: &devices.SpeedingAlerts{AlertFrequency: &f}})
		var claim *trips.PositiveIndicator
		for i, p := range an.PositiveIndicators {
			if p.IndicatorType == "speed_compliance" {
				claim = &an.PositiveIndicators[i]
			}
		}
		switch {
		case freq != "immediate" && claim != nil:
			t.Errorf("%s: the analysis claims %+v of a trip that sped", freq, *claim)
		case freq == "immediate" && len(an.RiskFactors) == 0:
			t.Errorf("%s: no speeding risk factor: %+v", freq, an)
		}
	}
}

// TestNoClaimOfWhatDetectionDidNotWatch: a device whose speeding
// detection is off (speeding_alerts.enabled false) raises no speeding
// event however it drives, nor one whose harsh event detection is off a
// harsh braking event: the safety analysis of its trip claims neither
// speed_compliance nor smooth_braking ("No speeding on the trip", "No
// harsh braking on the trip"), since nothing watched for them. The trip
// is driven 11 minutes at 70 km/h under a 50 km/h limit, braking from
// 70 to 30 km/h in a second at the fifth minute.
func TestNoClaimOfWhatDetectionDidNotWatch(t *testing.T) {
	off := false
	for _, c := range []struct {
		name     string
		settings devices.SafetyFeatures
		dropped  string
	}{
		{"speeding off", devices.SafetyFeatures{SpeedingAlerts: &devices.SpeedingAlerts{Enabled: &off}}, "speed_compliance"},
		{"harsh events off", devices.SafetyFeatures{HarshEventDetection: &devices.HarshEventDetection{Enabled: &off}}, "smooth_braking"},
	} {
		for _, p := range analyseDrive(t, c.settings).PositiveIndicators {
			if p.IndicatorType == c.dropped {
				t.Errorf("%s: the analysis claims %+v though nothing watched for it", c.name, p)
			}
		}
	}
}
