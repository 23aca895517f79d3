package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateAlert inserts an alert.
func (s *Store) CreateAlert(ctx context.Context, a store.Alert) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO alerts(id, org, env, status, doc, version, created_at, updated_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?)`,
		a.ID, a.Org, a.Env, a.Status, string(a.Doc), a.Version, ms(a.CreatedAt), ms(a.UpdatedAt), ms(a.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sqlite: create alert: %w", err)
	}
	return nil
}

// GetAlert reads an alert of the scope.
func (s *Store) GetAlert(ctx context.Context, sc store.Scope, id string) (store.Alert, error) {
	a := store.Alert{ID: id, Org: sc.Org, Env: sc.Env}
	var doc string
	var c, u, e int64
	err := s.r.QueryRowContext(ctx, `SELECT status, doc, version, created_at, updated_at, expires_at FROM alerts WHERE id = ? AND org = ? AND env = ?`,
		id, sc.Org, sc.Env).Scan(&a.Status, &doc, &a.Version, &c, &u, &e)
	if errors.Is(err, sql.ErrNoRows) {
		return a, store.ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: get alert: %w", err)
	}
	a.Doc, a.CreatedAt, a.UpdatedAt, a.ExpiresAt = []byte(doc), fromMS(c), fromMS(u), fromMS(e)
	return a, nil
}

// UpdateAlert writes an alert under the version rule.
func (s *Store) UpdateAlert(ctx context.Context, a store.Alert, prev int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE alerts SET status = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		a.Status, string(a.Doc), a.Version, ms(a.UpdatedAt), a.ID, a.Org, a.Env, prev)
	if err != nil {
		return fmt.Errorf("sqlite: update alert: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: update alert: %w", store.ErrConflict)
	}
	return nil
}

// ListAlerts returns a page of alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error) {
	q := `SELECT id, status, doc, version, created_at, updated_at, expires_at FROM alerts WHERE org = ? AND env = ?`
	args := []any{f.Org, f.Env}
	switch f.Status {
	case "":
	case "active":
		q += ` AND status = 'active' AND expires_at > ?`
		args = append(args, ms(f.Now))
	case "expired":
		q += ` AND (status = 'expired' OR (status = 'active' AND expires_at <= ?))`
		args = append(args, ms(f.Now))
	default:
		q += ` AND status = ?`
		args = append(args, f.Status)
	}
	if f.BeforeID != "" {
		q += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ms(f.BeforeTime), ms(f.BeforeTime), f.BeforeID)
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list alerts: %w", err)
	}
	defer rows.Close()
	out := []store.Alert{}
	for rows.Next() {
		a := store.Alert{Org: f.Org, Env: f.Env}
		var doc string
		var c, u, e int64
		if err := rows.Scan(&a.ID, &a.Status, &doc, &a.Version, &c, &u, &e); err != nil {
			return nil, fmt.Errorf("sqlite: list alerts: %w", err)
		}
		a.Doc, a.CreatedAt, a.UpdatedAt, a.ExpiresAt = []byte(doc), fromMS(c), fromMS(u), fromMS(e)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list alerts: %w", err)
	}
	return out, nil
}
