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
