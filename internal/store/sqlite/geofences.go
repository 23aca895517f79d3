package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/fleethub/fleethub/internal/store"
)

const geofenceCols = `id, org, env, name, type, area, metadata, created_at, updated_at`

func scanGeofence(row interface{ Scan(...any) error }) (store.Geofence, error) {
	var g store.Geofence
	var area, md string
	var c, u int64
	if err := row.Scan(&g.ID, &g.Org, &g.Env, &g.Name, &g.Type, &area, &md, &c, &u); err != nil {
		return g, err
	}
	g.Area, g.Metadata, g.CreatedAt, g.UpdatedAt = []byte(area), []byte(md), fromMS(c), fromMS(u)
	return g, nil
}

// CreateGeofence inserts a geofence.
func (s *Store) CreateGeofence(ctx context.Context, g store.Geofence) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO geofences(`+geofenceCols+`) VALUES (?,?,?,?,?,?,?,?,?)`,
		g.ID, g.Org, g.Env, g.Name, g.Type, string(g.Area), orEmpty(g.Metadata, "{}"), ms(g.CreatedAt), ms(g.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: create geofence: %w", err)
	}
	return nil
}

// GetGeofence reads a geofence of the scope.
func (s *Store) GetGeofence(ctx context.Context, sc store.Scope, id string) (store.Geofence, error) {
	g, err := scanGeofence(s.r.QueryRowContext(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return g, store.ErrNotFound
	}
	if err != nil {
		return g, fmt.Errorf("sqlite: get geofence: %w", err)
	}
	return g, nil
}

// ListGeofences lists a scope's geofences.
func (s *Store) ListGeofences(ctx context.Context, sc store.Scope) ([]store.Geofence, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE org = ? AND env = ? ORDER BY created_at, id`, sc.Org, sc.Env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list geofences: %w", err)
	}
	defer rows.Close()
	out := []store.Geofence{}
	for rows.Next() {
		g, err := scanGeofence(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list geofences: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list geofences: %w", err)
	}
	return out, nil
}

// UpdateGeofence replaces a geofence.
func (s *Store) UpdateGeofence(ctx context.Context, g store.Geofence) error {
	res, err := s.w.ExecContext(ctx, `UPDATE geofences SET name = ?, type = ?, area = ?, metadata = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ?`,
		g.Name, g.Type, string(g.Area), orEmpty(g.Metadata, "{}"), ms(g.UpdatedAt), g.ID, g.Org, g.Env)
	if err != nil {
		return fmt.Errorf("sqlite: update geofence: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeleteGeofence deletes a geofence.
func (s *Store) DeleteGeofence(ctx context.Context, sc store.Scope, id string) error {
	res, err := s.w.ExecContext(ctx, `DELETE FROM geofences WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env)
	if err != nil {
		return fmt.Errorf("sqlite: delete geofence: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}
