package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Emergency alerts (store.Alerts) and the schedule of their steps
// (store.AlertSchedule).

const alertCols = `id, status, doc, version, created_at, updated_at, expires_at`

// scanAlert reads alertCols into a of its scope.
func scanAlert(a store.Alert) func(Row) (store.Alert, error) {
	return func(row Row) (store.Alert, error) {
		var doc string
		var c, u, e int64
		if err := row.Scan(&a.ID, &a.Status, &doc, &a.Version, &c, &u, &e); err != nil {
			return a, err
		}
		a.Doc, a.CreatedAt, a.UpdatedAt, a.ExpiresAt = []byte(doc), FromMS(c), FromMS(u), FromMS(e)
		return a, nil
	}
}

// CreateAlert inserts an alert.
func (s *Store) CreateAlert(ctx context.Context, a store.Alert) error {
	_, err := s.w.Exec(ctx, `INSERT INTO alerts(id, org, env, status, doc, version, created_at, updated_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Org, a.Env, a.Status, string(a.Doc), a.Version, MS(a.CreatedAt), MS(a.UpdatedAt), MS(a.ExpiresAt))
	return s.wrap("create alert", err)
}

// GetAlert reads an alert of the scope.
func (s *Store) GetAlert(ctx context.Context, sc store.Scope, id string) (store.Alert, error) {
	a, err := scanAlert(store.Alert{Org: sc.Org, Env: sc.Env})(s.r.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = ? AND org = ? AND env = ?`,
		id, sc.Org, sc.Env))
	if err != nil {
		return store.Alert{ID: id, Org: sc.Org, Env: sc.Env}, s.wrap("get alert", err)
	}
	return a, nil
}

// UpdateAlert writes an alert under the version rule.
func (s *Store) UpdateAlert(ctx context.Context, a store.Alert, prev int64) error {
	n, err := s.w.Exec(ctx, `UPDATE alerts SET status = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		a.Status, string(a.Doc), a.Version, MS(a.UpdatedAt), a.ID, a.Org, a.Env, prev)
	return s.wrap("update alert", changed(n, err, store.ErrConflict))
}

// ListAlerts returns a page of alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error) {
	q := `SELECT ` + alertCols + ` FROM alerts WHERE org = ? AND env = ?`
	args := []any{f.Org, f.Env}
	switch f.Status {
	case "":
	case "active":
		q += ` AND status = 'active' AND expires_at > ?`
		args = append(args, MS(f.Now))
	case "expired":
		q += ` AND (status = 'expired' OR (status = 'active' AND expires_at <= ?))`
		args = append(args, MS(f.Now))
	default:
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.BeforeID != "" {
		q += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, MS(f.BeforeTime), MS(f.BeforeTime), f.BeforeID)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.r.Query(ctx, q, args...)
	out, err := collect([]store.Alert{}, rows, err, scanAlert(store.Alert{Org: f.Org, Env: f.Env}))
	return out, s.wrap("list alerts", err)
}

// ScheduleAlert stores an alert's steps, leaving stored ones alone.
func (s *Store) ScheduleAlert(ctx context.Context, steps []store.AlertDue) error {
	return s.inTx(ctx, "schedule alert", func(tx Querier) error {
		for _, d := range steps {
			if _, err := tx.Exec(ctx, `INSERT INTO alert_steps(alert_id, org, env, kind, channel, level, due_at) VALUES (?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT DO NOTHING`, d.AlertID, d.Org, d.Env, d.Kind, d.Channel, d.Level, MS(d.DueAt)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ClaimDueAlerts claims due steps in one statement.
func (s *Store) ClaimDueAlerts(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.AlertDue, error) {
	rows, err := s.w.Query(ctx, `UPDATE alert_steps SET owner = ?, lease_until = ?
		WHERE (alert_id, kind, channel, level) IN (SELECT alert_id, kind, channel, level FROM alert_steps
			WHERE done_at = 0 AND due_at <= ? AND lease_until <= ? ORDER BY due_at, level LIMIT ?`+s.d.skipLocked+`)
		RETURNING alert_id, org, env, kind, channel, level, due_at`, owner, MS(until), MS(now), MS(now), limit)
	out, err := collect(nil, rows, err, func(r Row) (store.AlertDue, error) {
		var d store.AlertDue
		var due int64
		err := r.Scan(&d.AlertID, &d.Org, &d.Env, &d.Kind, &d.Channel, &d.Level, &due)
		d.DueAt = FromMS(due)
		return d, err
	})
	// RETURNING follows the update's scan, not the sub-select's order
	slices.SortStableFunc(out, func(a, b store.AlertDue) int {
		return cmp.Or(a.DueAt.Compare(b.DueAt), cmp.Compare(a.Level, b.Level))
	})
	return out, s.wrap("claim alert steps", err)
}

// FinishAlertDue marks a step done if owner still holds it.
func (s *Store) FinishAlertDue(ctx context.Context, owner string, d store.AlertDue, at time.Time) error {
	n, err := s.w.Exec(ctx, `UPDATE alert_steps SET done_at = ? WHERE alert_id = ? AND kind = ? AND channel = ? AND level = ? AND owner = ? AND done_at = 0`,
		MS(at), d.AlertID, d.Kind, d.Channel, d.Level, owner)
	return s.wrap("finish alert step", changed(n, err, store.ErrConflict))
}
