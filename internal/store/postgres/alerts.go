package postgres

import (
	"context"
	"strconv"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateAlert inserts an alert.
func (s *Store) CreateAlert(ctx context.Context, a store.Alert) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO alerts(id, org, env, status, doc, version, created_at, updated_at, expires_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		a.ID, a.Org, a.Env, a.Status, string(a.Doc), a.Version, ms(a.CreatedAt), ms(a.UpdatedAt), ms(a.ExpiresAt))
	return wrap("create alert", err)
}

// GetAlert reads an alert of the scope.
func (s *Store) GetAlert(ctx context.Context, sc store.Scope, id string) (store.Alert, error) {
	a := store.Alert{ID: id, Org: sc.Org, Env: sc.Env}
	var doc string
	var c, u, e int64
	err := s.pool.QueryRow(ctx, `SELECT status, doc, version, created_at, updated_at, expires_at FROM alerts WHERE id = $1 AND org = $2 AND env = $3`,
		id, sc.Org, sc.Env).Scan(&a.Status, &doc, &a.Version, &c, &u, &e)
	if err != nil {
		return a, wrap("get alert", err)
	}
	a.Doc, a.CreatedAt, a.UpdatedAt, a.ExpiresAt = []byte(doc), fromMS(c), fromMS(u), fromMS(e)
	return a, nil
}

// UpdateAlert writes an alert under the version rule.
func (s *Store) UpdateAlert(ctx context.Context, a store.Alert, prev int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE alerts SET status = $1, doc = $2, version = $3, updated_at = $4 WHERE id = $5 AND org = $6 AND env = $7 AND version = $8`,
		a.Status, string(a.Doc), a.Version, ms(a.UpdatedAt), a.ID, a.Org, a.Env, prev)
	if err != nil {
		return wrap("update alert", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update alert", store.ErrConflict)
	}
	return nil
}

// ListAlerts returns a page of alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error) {
	q := `SELECT id, status, doc, version, created_at, updated_at, expires_at FROM alerts WHERE org = $1 AND env = $2`
	args := []any{f.Org, f.Env}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	switch f.Status {
	case "":
	case "active":
		q += ` AND status = 'active' AND expires_at > ` + arg(ms(f.Now))
	case "expired":
		q += ` AND (status = 'expired' OR (status = 'active' AND expires_at <= ` + arg(ms(f.Now)) + `))`
	default:
		q += ` AND status = ` + arg(f.Status)
	}
	if f.BeforeID != "" {
		t := arg(ms(f.BeforeTime))
		q += ` AND (created_at < ` + t + ` OR (created_at = ` + t + ` AND id < ` + arg(f.BeforeID) + `))`
	}
	q += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap("list alerts", err)
	}
	defer rows.Close()
	out := []store.Alert{}
	for rows.Next() {
		a := store.Alert{Org: f.Org, Env: f.Env}
		var doc string
		var c, u, e int64
		if err := rows.Scan(&a.ID, &a.Status, &doc, &a.Version, &c, &u, &e); err != nil {
			return nil, wrap("list alerts", err)
		}
		a.Doc, a.CreatedAt, a.UpdatedAt, a.ExpiresAt = []byte(doc), fromMS(c), fromMS(u), fromMS(e)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list alerts", err)
	}
	return out, nil
}
