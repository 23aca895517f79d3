package sqlstore

import (
	"context"

	"github.com/fleethub/fleethub/internal/store"
)

// Route optimizations (store.Optimizations).

// CreateOptimization inserts an optimization.
func (s *Store) CreateOptimization(ctx context.Context, o store.Optimization) error {
	_, err := s.w.Exec(ctx, `INSERT INTO optimizations(id, org, env, status, doc, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Org, o.Env, o.Status, string(o.Doc), o.Version, MS(o.CreatedAt), MS(o.UpdatedAt))
	return s.wrap("create optimization", err)
}

// GetOptimization reads an optimization of the scope.
func (s *Store) GetOptimization(ctx context.Context, sc store.Scope, id string) (store.Optimization, error) {
	o := store.Optimization{ID: id, Org: sc.Org, Env: sc.Env}
	var doc string
	var c, u int64
	err := s.r.QueryRow(ctx, `SELECT status, doc, version, created_at, updated_at FROM optimizations WHERE id = ? AND org = ? AND env = ?`,
		id, sc.Org, sc.Env).Scan(&o.Status, &doc, &o.Version, &c, &u)
	if err != nil {
		return o, s.wrap("get optimization", err)
	}
	o.Doc, o.CreatedAt, o.UpdatedAt = []byte(doc), FromMS(c), FromMS(u)
	return o, nil
}

// UpdateOptimization writes an optimization under the version rule.
func (s *Store) UpdateOptimization(ctx context.Context, o store.Optimization, prev int64) error {
	n, err := s.w.Exec(ctx, `UPDATE optimizations SET status = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		o.Status, string(o.Doc), o.Version, MS(o.UpdatedAt), o.ID, o.Org, o.Env, prev)
	return s.wrap("update optimization", changed(n, err, store.ErrConflict))
}
