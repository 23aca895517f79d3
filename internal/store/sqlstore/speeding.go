package sqlstore

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Daily speeding summaries (store.SpeedingSummaries).

// RecordSpeedingEpisodes stores episodes, leaving stored ones alone.
func (s *Store) RecordSpeedingEpisodes(ctx context.Context, eps []store.SpeedingEpisode) error {
	if len(eps) == 0 {
		return nil
	}
	return s.inTx(ctx, "record speeding episodes", func(tx Querier) error {
		for _, e := range eps {
			summaryDay := e.SummaryDay
			if summaryDay == "" {
				summaryDay = e.Day
			}
			if _, err := tx.Exec(ctx, `INSERT INTO speeding_episodes(org, env, id, device_id, vehicle_id, driver_id, trip_id, start_at,
				duration_seconds, max_speed_kmh, limit_kmh, day, summary_day) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (org, env, id) DO NOTHING`, e.Org, e.Env, e.ID, e.DeviceID, e.VehicleID, e.DriverID, e.TripID, MS(e.Start),
				e.DurationSeconds, e.MaxSpeedKmh, e.LimitKmh, e.Day, summaryDay); err != nil {
				return err
			}
		}
		return nil
	})
}

// PendingSpeedingSummaries lists the summaries with episodes not sent.
func (s *Store) PendingSpeedingSummaries(ctx context.Context, before string, limit int) ([]store.SpeedingSummaryKey, error) {
	rows, err := s.w.Query(ctx, `SELECT DISTINCT summary_day, org, env, device_id FROM speeding_episodes
		WHERE sent_at = 0 AND summary_day < ? ORDER BY summary_day, org, env, device_id LIMIT ?`, before, limit)
	out, err := collect(nil, rows, err, func(r Row) (store.SpeedingSummaryKey, error) {
		var k store.SpeedingSummaryKey
		err := r.Scan(&k.Day, &k.Org, &k.Env, &k.DeviceID)
		return k, err
	})
	return out, s.wrap("pending speeding summaries", err)
}

// ClaimSpeedingSummary takes k's claim: a new row, or one not sent whose
// lease ended or that owner holds. Concurrent claims of one summary meet on its primary key:
// one inserts, the others find its row and its live lease.
func (s *Store) ClaimSpeedingSummary(ctx context.Context, k store.SpeedingSummaryKey, owner string, now, until time.Time) (bool, bool, error) {
	n, err := s.w.Exec(ctx, `INSERT INTO speeding_summaries(org, env, device_id, day, owner, lease_until) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (org, env, device_id, day) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
		WHERE speeding_summaries.sent_at = 0 AND (speeding_summaries.lease_until <= ? OR speeding_summaries.owner = excluded.owner)`,
		k.Org, k.Env, k.DeviceID, k.Day, owner, MS(until), MS(now))
	if err != nil {
		return false, false, s.wrap("claim speeding summary", err)
	}
	if n > 0 {
		return true, false, nil
	}
	var sent int64
	err = s.w.QueryRow(ctx, `SELECT sent_at FROM speeding_summaries WHERE org = ? AND env = ? AND device_id = ? AND day = ?`,
		k.Org, k.Env, k.DeviceID, k.Day).Scan(&sent)
	return false, sent > 0, s.wrap("claim speeding summary", err)
}

// SpeedingSummaryEpisodes reads the episodes of k not sent.
func (s *Store) SpeedingSummaryEpisodes(ctx context.Context, k store.SpeedingSummaryKey) ([]store.SpeedingEpisode, error) {
	rows, err := s.w.Query(ctx, `SELECT id, vehicle_id, driver_id, trip_id, start_at, duration_seconds, max_speed_kmh, limit_kmh, day, summary_day
		FROM speeding_episodes WHERE org = ? AND env = ? AND device_id = ? AND summary_day = ? AND sent_at = 0 ORDER BY start_at, id`,
		k.Org, k.Env, k.DeviceID, k.Day)
	out, err := collect(nil, rows, err, func(r Row) (store.SpeedingEpisode, error) {
		e := store.SpeedingEpisode{Org: k.Org, Env: k.Env, DeviceID: k.DeviceID}
		var start int64
		err := r.Scan(&e.ID, &e.VehicleID, &e.DriverID, &e.TripID, &start, &e.DurationSeconds, &e.MaxSpeedKmh, &e.LimitKmh, &e.Day, &e.SummaryDay)
		e.Start = FromMS(start)
		return e, err
	})
	return out, s.wrap("speeding summary episodes", err)
}

// FinishSpeedingSummary marks k and its episodes ids sent, in one
// transaction, if owner holds k's claim.
func (s *Store) FinishSpeedingSummary(ctx context.Context, k store.SpeedingSummaryKey, owner string, ids []string, at time.Time) error {
	return s.inTx(ctx, "finish speeding summary", func(tx Querier) error {
		n, err := tx.Exec(ctx, `UPDATE speeding_summaries SET sent_at = ? WHERE org = ? AND env = ? AND device_id = ? AND day = ? AND owner = ? AND sent_at = 0`,
			MS(at), k.Org, k.Env, k.DeviceID, k.Day, owner)
		if err := changed(n, err, store.ErrConflict); err != nil {
			return err
		}
		return s.d.chunks(ids, func(part []string) error {
			in, args := s.d.In("id", part)
			_, err := tx.Exec(ctx, `UPDATE speeding_episodes SET sent_at = ? WHERE org = ? AND env = ? AND sent_at = 0 AND `+in,
				append([]any{MS(at), k.Org, k.Env}, args...)...)
			return err
		})
	})
}

// MoveLateSpeedingEpisodes moves the episodes of a sent summary that it
// did not take to the summary of day to.
func (s *Store) MoveLateSpeedingEpisodes(ctx context.Context, k store.SpeedingSummaryKey, to string) (int, error) {
	n, err := s.w.Exec(ctx, `UPDATE speeding_episodes SET summary_day = ?
		WHERE org = ? AND env = ? AND device_id = ? AND summary_day = ? AND sent_at = 0
		AND EXISTS (SELECT 1 FROM speeding_summaries m WHERE m.org = ? AND m.env = ? AND m.device_id = ? AND m.day = ? AND m.sent_at > 0)`,
		to, k.Org, k.Env, k.DeviceID, k.Day, k.Org, k.Env, k.DeviceID, k.Day)
	return int(n), s.wrap("move late speeding episodes", err)
}

// PruneSpeedingSummaries deletes the sent episodes of summaries of days
// before before, then the sent claims of those days no episode waits for,
// at most limit of each, in one transaction.
func (s *Store) PruneSpeedingSummaries(ctx context.Context, before string, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	var deleted int64
	err := s.inTx(ctx, "prune speeding summaries", func(tx Querier) error {
		n, err := tx.Exec(ctx, `DELETE FROM speeding_episodes WHERE (org, env, id) IN (SELECT org, env, id FROM speeding_episodes
			WHERE summary_day < ? AND sent_at > 0 LIMIT ?)`, before, limit)
		if err != nil {
			return err
		}
		deleted += n
		n, err = tx.Exec(ctx, `DELETE FROM speeding_summaries WHERE (org, env, device_id, day) IN (SELECT m.org, m.env, m.device_id, m.day
			FROM speeding_summaries m WHERE m.day < ? AND m.sent_at > 0 AND NOT EXISTS (SELECT 1 FROM speeding_episodes e
			WHERE e.org = m.org AND e.env = m.env AND e.device_id = m.device_id AND e.summary_day = m.day AND e.sent_at = 0) LIMIT ?)`, before, limit)
		deleted += n
		return err
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}
