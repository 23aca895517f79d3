package trips

import (
	"context"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/store"
)

// Summaries records the speeding episodes of devices whose speeding
// alerts are a daily summary (alert_frequency daily_summary,
// detect.Thresholds.SpeedingSummary): they raise no event, are not
// counted in the trip (as the episodes a throttle leaves out), and go
// into the device's summary of the day (digest.Summaries).
type Summaries interface {
	Record(ctx context.Context, eps []store.SpeedingEpisode) error
}

// summarize records the episodes det holds for the daily summary of
// trip t's device. It runs before the trip's write: an episode recorded
// again (a retried or replayed upload) keeps its id and is stored once.
func (s *Service) summarize(ctx context.Context, det *detect.Detector, t store.Trip, device string) error {
	return s.record(ctx, t, device, det.Summarized(nil))
}

// record records held, episodes of trip t on device, for the daily
// summary.
func (s *Service) record(ctx context.Context, t store.Trip, device string, held []detect.Event) error {
	if len(held) == 0 || s.cfg.Summaries == nil {
		return nil
	}
	eps := make([]store.SpeedingEpisode, len(held))
	for i, e := range held {
		eps[i] = store.SpeedingEpisode{Org: t.Org, Env: t.Env, ID: eventID(t.ID, e), DeviceID: device, VehicleID: t.VehicleID,
			DriverID: t.DriverID, TripID: t.ID, Start: e.Start.UTC(), DurationSeconds: e.Metrics.DurationSeconds,
			MaxSpeedKmh: e.Metrics.ActualSpeedKmh, LimitKmh: e.Metrics.SpeedLimitKmh}
	}
	return s.cfg.Summaries.Record(ctx, eps)
}
