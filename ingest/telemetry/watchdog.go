package telemetry

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
)

// Run is the connectivity watchdog: every CheckEvery it raises
// device_offline for the vehicles silent for SilenceAfter (see Check). It
// returns nil when ctx ends; a failed check is logged and retried at the
// next tick.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.CheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := s.Check(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("telemetry: connectivity check failed; retrying at the next tick", "error", err)
			}
		}
	}
}

// Check raises one system_events device_offline event (severity medium)
// for every vehicle that sent telemetry or events before and nothing for
// SilenceAfter, once per silence; the vehicle's next message raises
// device_online. The events of one check go to the bus in one Publish
// call; if it fails the vehicles stay online and the next check raises
// them again.
func (s *Service) Check(ctx context.Context) error {
	now := s.cfg.Now().UTC()
	type raised struct {
		org, env string
		ev       *event.Event
	}
	var tx txn
	var out []raised
	s.mu.Lock()
	for _, v := range s.vehicles.Values() {
		if v.offline || v.lastSeen.IsZero() || now.Sub(v.lastSeen) < s.cfg.SilenceAfter {
			continue
		}
		v = s.touch(&tx, v.org, v.env, v.id, false)
		v.offline, v.offlineSince = true, v.lastSeen
		out = append(out, raised{v.org, v.env, s.newEvent(v.id, event.CategorySystem, TypeDeviceOffline, "medium", "normal", apitime.Of(now), now, SourceSystemWatchdog, map[string]any{
			"last_seen":             apitime.Format(v.lastSeen),
			"silent_seconds":        now.Sub(v.lastSeen).Seconds(),
			"silence_after_seconds": s.cfg.SilenceAfter.Seconds(),
		})})
	}
	s.commit(&tx)
	s.mu.Unlock()
	if len(out) == 0 {
		return nil
	}
	msgs := make([]hub.Message, 0, len(out))
	for _, r := range out {
		m, err := s.eventMessage(ctx, r.org, r.env, r.ev.Source.VehicleID, r.ev, now)
		if err != nil {
			s.rollback(&tx)
			return err
		}
		msgs = append(msgs, m)
	}
	if err := s.publish(ctx, &tx, msgs); err != nil {
		return err
	}
	s.log.Info("telemetry: vehicles went silent", "count", len(msgs), "silence_after", s.cfg.SilenceAfter)
	return nil
}
