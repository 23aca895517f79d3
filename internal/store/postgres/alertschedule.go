package postgres

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// ScheduleAlert stores an alert's steps, leaving stored ones alone.
func (s *Store) ScheduleAlert(ctx context.Context, steps []store.AlertDue) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return wrap("schedule alert", err)
	}
	defer tx.Rollback(ctx)
	for _, d := range steps {
		if _, err := tx.Exec(ctx, `INSERT INTO alert_schedule(alert_id, org, env, kind, level, due_at) VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
			d.AlertID, d.Org, d.Env, d.Kind, d.Level, ms(d.DueAt)); err != nil {
			return wrap("schedule alert", err)
		}
	}
	return wrap("schedule alert", tx.Commit(ctx))
}

// ClaimDueAlerts claims due steps; FOR UPDATE SKIP LOCKED keeps two
// nodes' claims apart.
func (s *Store) ClaimDueAlerts(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.AlertDue, error) {
	rows, err := s.pool.Query(ctx, `UPDATE alert_schedule SET owner = $1, lease_until = $2
		WHERE (alert_id, kind, level) IN (SELECT alert_id, kind, level FROM alert_schedule
			WHERE done_at = 0 AND due_at <= $3 AND lease_until <= $3 ORDER BY due_at, level LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING alert_id, org, env, kind, level, due_at`, owner, ms(until), ms(now), limit)
	if err != nil {
		return nil, wrap("claim alert steps", err)
	}
	defer rows.Close()
	var out []store.AlertDue
	for rows.Next() {
		var d store.AlertDue
		var due int64
		if err := rows.Scan(&d.AlertID, &d.Org, &d.Env, &d.Kind, &d.Level, &due); err != nil {
			return nil, wrap("claim alert steps", err)
		}
		d.DueAt = fromMS(due)
		out = append(out, d)
	}
	return out, wrap("claim alert steps", rows.Err())
}

// FinishAlertDue marks a step done if owner still holds it.
func (s *Store) FinishAlertDue(ctx context.Context, owner string, d store.AlertDue, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE alert_schedule SET done_at = $1 WHERE alert_id = $2 AND kind = $3 AND level = $4 AND owner = $5 AND done_at = 0`,
		ms(at), d.AlertID, d.Kind, d.Level, owner)
	if err != nil {
		return wrap("finish alert step", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("finish alert step", store.ErrConflict)
	}
	return nil
}
