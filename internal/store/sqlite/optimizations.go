package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateOptimization inserts an optimization.
func (s *Store) CreateOptimization(ctx context.Context, a store.Optimization) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO optimizations(id, org, env, status, doc, version, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)`,
		a.ID, a.Org, a.Env, a.Status, string(a.Doc), a.Version, ms(a.CreatedAt), ms(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: create optimization: %w", err)
	}
	return nil
}

// GetOptimization reads an optimization of the scope.
func (s *Store) GetOptimization(ctx context.Context, sc store.Scope, id string) (store.Optimization, error) {
	a := store.Optimization{ID: id, Org: sc.Org, Env: sc.Env}
	var doc string
	var c, u int64
	err := s.r.QueryRowContext(ctx, `SELECT status, doc, version, created_at, updated_at FROM optimizations WHERE id = ? AND org = ? AND env = ?`,
		id, sc.Org, sc.Env).Scan(&a.Status, &doc, &a.Version, &c, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return a, store.ErrNotFound
	}
	if err != nil {
		return a, fmt.Errorf("sqlite: get optimization: %w", err)
	}
	a.Doc, a.CreatedAt, a.UpdatedAt = []byte(doc), fromMS(c), fromMS(u)
	return a, nil
}

// UpdateOptimization writes an optimization under the version rule.
func (s *Store) UpdateOptimization(ctx context.Context, a store.Optimization, prev int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE optimizations SET status = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		a.Status, string(a.Doc), a.Version, ms(a.UpdatedAt), a.ID, a.Org, a.Env, prev)
	if err != nil {
		return fmt.Errorf("sqlite: update optimization: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: update optimization: %w", store.ErrConflict)
	}
	return nil
}
