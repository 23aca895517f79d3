package postgres

import (
	"context"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateOptimization inserts an optimization.
func (s *Store) CreateOptimization(ctx context.Context, a store.Optimization) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO optimizations(id, org, env, status, doc, version, created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
		a.ID, a.Org, a.Env, a.Status, string(a.Doc), a.Version, ms(a.CreatedAt), ms(a.UpdatedAt))
	return wrap("create optimization", err)
}

// GetOptimization reads an optimization of the scope.
func (s *Store) GetOptimization(ctx context.Context, sc store.Scope, id string) (store.Optimization, error) {
	a := store.Optimization{ID: id, Org: sc.Org, Env: sc.Env}
	var doc string
	var c, u int64
	err := s.pool.QueryRow(ctx, `SELECT status, doc, version, created_at, updated_at FROM optimizations WHERE id = $1 AND org = $2 AND env = $3`,
		id, sc.Org, sc.Env).Scan(&a.Status, &doc, &a.Version, &c, &u)
	if err != nil {
		return a, wrap("get optimization", err)
	}
	a.Doc, a.CreatedAt, a.UpdatedAt = []byte(doc), fromMS(c), fromMS(u)
	return a, nil
}

// UpdateOptimization writes an optimization under the version rule.
func (s *Store) UpdateOptimization(ctx context.Context, a store.Optimization, prev int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE optimizations SET status = $1, doc = $2, version = $3, updated_at = $4 WHERE id = $5 AND org = $6 AND env = $7 AND version = $8`,
		a.Status, string(a.Doc), a.Version, ms(a.UpdatedAt), a.ID, a.Org, a.Env, prev)
	if err != nil {
		return wrap("update optimization", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update optimization", store.ErrConflict)
	}
	return nil
}
