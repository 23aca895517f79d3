package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

const geofenceCols = `id, org, env, name, type, area, metadata, created_at, updated_at`

func scanGeofence(row pgx.Row) (store.Geofence, error) {
	var g store.Geofence
	var area, md string
	var c, u int64
	if err := row.Scan(&g.ID, &g.Org, &g.Env, &g.Name, &g.Type, &area, &md, &c, &u); err != nil {
		return g, err
	}
	g.Area, g.Metadata, g.CreatedAt, g.UpdatedAt = []byte(area), []byte(md), fromMS(c), fromMS(u)
	return g, nil
}

func jsonOr(b []byte, def string) string {
	if len(b) == 0 {
		return def
	}
	return string(b)
}

// CreateGeofence inserts a geofence.
func (s *Store) CreateGeofence(ctx context.Context, g store.Geofence) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO geofences(`+geofenceCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
		g.ID, g.Org, g.Env, g.Name, g.Type, string(g.Area), jsonOr(g.Metadata, "{}"), ms(g.CreatedAt), ms(g.UpdatedAt))
	return wrap("create geofence", err)
}

// GetGeofence reads a geofence of the scope.
func (s *Store) GetGeofence(ctx context.Context, sc store.Scope, id string) (store.Geofence, error) {
	g, err := scanGeofence(s.pool.QueryRow(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env))
	return g, wrap("get geofence", err)
}

// ListGeofences lists a scope's geofences.
func (s *Store) ListGeofences(ctx context.Context, sc store.Scope) ([]store.Geofence, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+geofenceCols+` FROM geofences WHERE org = $1 AND env = $2 ORDER BY created_at, id`, sc.Org, sc.Env)
	if err != nil {
		return nil, wrap("list geofences", err)
	}
	defer rows.Close()
	out := []store.Geofence{}
	for rows.Next() {
		g, err := scanGeofence(rows)
		if err != nil {
			return nil, wrap("list geofences", err)
		}
		out = append(out, g)
	}
	return out, wrap("list geofences", rows.Err())
}

// UpdateGeofence replaces a geofence.
func (s *Store) UpdateGeofence(ctx context.Context, g store.Geofence) error {
	tag, err := s.pool.Exec(ctx, `UPDATE geofences SET name = $1, type = $2, area = $3, metadata = $4, updated_at = $5 WHERE id = $6 AND org = $7 AND env = $8`,
		g.Name, g.Type, string(g.Area), jsonOr(g.Metadata, "{}"), ms(g.UpdatedAt), g.ID, g.Org, g.Env)
	if err != nil {
		return wrap("update geofence", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update geofence", store.ErrNotFound)
	}
	return nil
}

// DeleteGeofence deletes a geofence.
func (s *Store) DeleteGeofence(ctx context.Context, sc store.Scope, id string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM geofences WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env)
	if err != nil {
		return wrap("delete geofence", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("delete geofence", store.ErrNotFound)
	}
	return nil
}
