package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// ScheduleAlert stores an alert's steps, leaving stored ones alone.
func (s *Store) ScheduleAlert(ctx context.Context, steps []store.AlertDue) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: schedule alert: %w", err)
	}
	defer tx.Rollback()
	for _, d := range steps {
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_schedule(alert_id, org, env, kind, level, due_at) VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING`,
			d.AlertID, d.Org, d.Env, d.Kind, d.Level, ms(d.DueAt)); err != nil {
			return fmt.Errorf("sqlite: schedule alert: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: schedule alert: %w", err)
	}
	return nil
}

// ClaimDueAlerts claims due steps in one statement: SQLite runs one
// writer at a time, so two claims never overlap.
func (s *Store) ClaimDueAlerts(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.AlertDue, error) {
	rows, err := s.w.QueryContext(ctx, `UPDATE alert_schedule SET owner = ?, lease_until = ?
		WHERE rowid IN (SELECT rowid FROM alert_schedule WHERE done_at = 0 AND due_at <= ? AND lease_until <= ? ORDER BY due_at, level LIMIT ?)
		RETURNING alert_id, org, env, kind, level, due_at`, owner, ms(until), ms(now), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim alert steps: %w", err)
	}
	defer rows.Close()
	var out []store.AlertDue
	for rows.Next() {
		var d store.AlertDue
		var due int64
		if err := rows.Scan(&d.AlertID, &d.Org, &d.Env, &d.Kind, &d.Level, &due); err != nil {
			return nil, fmt.Errorf("sqlite: claim alert steps: %w", err)
		}
		d.DueAt = fromMS(due)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim alert steps: %w", err)
	}
	return out, nil
}

// FinishAlertDue marks a step done if owner still holds it.
func (s *Store) FinishAlertDue(ctx context.Context, owner string, d store.AlertDue, at time.Time) error {
	res, err := s.w.ExecContext(ctx, `UPDATE alert_schedule SET done_at = ? WHERE alert_id = ? AND kind = ? AND level = ? AND owner = ? AND done_at = 0`,
		ms(at), d.AlertID, d.Kind, d.Level, owner)
	if err != nil {
		return fmt.Errorf("sqlite: finish alert step: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: finish alert step: %w", store.ErrConflict)
	}
	return nil
}
