package sqlstore

import (
	"context"

	"github.com/fleethub/fleethub/internal/store"
)

// Geofences (store.Geofences).

const geofenceCols = `id, org, env, name, type, area, metadata, created_at, updated_at`

func scanGeofence(row Row) (store.Geofence, error) {
	var g store.Geofence
	var area, md string
	var c, u int64
	if err := row.Scan(&g.ID, &g.Org, &g.Env, &g.Name, &g.Type, &area, &md, &c, &u); err != nil {
		return g, err
	}
	g.Area, g.Metadata, g.CreatedAt, g.UpdatedAt = []byte(area), []byte(md), FromMS(c), FromMS(u)
	return g, nil
}

// CreateGeofence inserts a geofence.
func (s *Store) CreateGeofence(ctx context.Context, g store.Geofence) error {
	_, err := s.w.Exec(ctx, `INSERT INTO geofences(`+geofenceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		g.ID, g.Org, g.Env, g.Name, g.Type, string(g.Area), orEmpty(g.Metadata, "{}"), MS(g.CreatedAt), MS(g.UpdatedAt))
	return s.wrap("create geofence", err)
}

// GetGeofence reads a geofence of the scope.
func (s *Store) GetGeofence(ctx context.Context, sc store.Scope, id string) (store.Geofence, error) {
	g, err := scanGeofence(s.r.QueryRow(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	return g, s.wrap("get geofence", err)
}

// ListGeofences lists a scope's geofences, oldest first.
func (s *Store) ListGeofences(ctx context.Context, sc store.Scope) ([]store.Geofence, error) {
	rows, err := s.r.Query(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE org = ? AND env = ? ORDER BY created_at, id`, sc.Org, sc.Env)
	out, err := collect([]store.Geofence{}, rows, err, scanGeofence)
	return out, s.wrap("list geofences", err)
}

// UpdateGeofence replaces a geofence; ErrNotFound when absent.
func (s *Store) UpdateGeofence(ctx context.Context, g store.Geofence) error {
	n, err := s.w.Exec(ctx, `UPDATE geofences SET name = ?, type = ?, area = ?, metadata = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ?`,
		g.Name, g.Type, string(g.Area), orEmpty(g.Metadata, "{}"), MS(g.UpdatedAt), g.ID, g.Org, g.Env)
	return s.wrap("update geofence", changed(n, err, store.ErrNotFound))
}

// DeleteGeofence deletes a geofence; ErrNotFound when absent.
func (s *Store) DeleteGeofence(ctx context.Context, sc store.Scope, id string) error {
	n, err := s.w.Exec(ctx, `DELETE FROM geofences WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env)
	return s.wrap("delete geofence", changed(n, err, store.ErrNotFound))
}
