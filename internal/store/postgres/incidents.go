package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

const incidentCols = `id, org, env, status, severity, event_type, fleet_id, driver_id, doc, version, created_at, updated_at`

func scanIncident(row pgx.Row) (store.Incident, error) {
	var in store.Incident
	var doc string
	var c, u int64
	if err := row.Scan(&in.ID, &in.Org, &in.Env, &in.Status, &in.Severity, &in.EventType, &in.FleetID, &in.DriverID, &doc, &in.Version, &c, &u); err != nil {
		return in, err
	}
	in.Doc, in.CreatedAt, in.UpdatedAt = []byte(doc), fromMS(c), fromMS(u)
	return in, nil
}

// CreateIncident inserts an incident.
func (s *Store) CreateIncident(ctx context.Context, in store.Incident) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO incidents(`+incidentCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)`,
		in.ID, in.Org, in.Env, in.Status, in.Severity, in.EventType, in.FleetID, in.DriverID, string(in.Doc), in.Version, ms(in.CreatedAt), ms(in.UpdatedAt))
	return wrap("create incident", err)
}

// GetIncident reads an incident of the scope.
func (s *Store) GetIncident(ctx context.Context, sc store.Scope, id string) (store.Incident, error) {
	in, err := scanIncident(s.pool.QueryRow(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env))
	return in, wrap("get incident", err)
}

// UpdateIncident writes an incident under the version rule.
func (s *Store) UpdateIncident(ctx context.Context, in store.Incident, prev int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE incidents SET status = $1, severity = $2, doc = $3, version = $4, updated_at = $5 WHERE id = $6 AND org = $7 AND env = $8 AND version = $9`,
		in.Status, in.Severity, string(in.Doc), in.Version, ms(in.UpdatedAt), in.ID, in.Org, in.Env, prev)
	if err != nil {
		return wrap("update incident", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update incident", store.ErrConflict)
	}
	return nil
}

// ListIncidents lists a page of incidents, newest first.
func (s *Store) ListIncidents(ctx context.Context, f store.IncidentFilter) ([]store.Incident, int, error) {
	w := []string{"org = $1", "env = $2"}
	args := []any{f.Org, f.Env}
	add := func(cond string, v any) {
		args = append(args, v)
		w = append(w, fmt.Sprintf(cond, len(args)))
	}
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"severity", f.Severity}, {"event_type", f.EventType}, {"fleet_id", f.FleetID}, {"driver_id", f.DriverID}} {
		if c.v != "" {
			add(c.col+" = $%d", c.v)
		}
	}
	if !f.From.IsZero() {
		add("created_at >= $%d", ms(f.From))
	}
	if !f.To.IsZero() {
		add("created_at <= $%d", ms(f.To))
	}
	where := strings.Join(w, " AND ")
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT COUNT(*) FROM incidents WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, wrap("count incidents", err)
	}
	q := fmt.Sprintf(`SELECT `+incidentCols+` FROM incidents WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d`, len(args)+1, len(args)+2)
	rows, err := s.pool.Query(ctx, q, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, wrap("list incidents", err)
	}
	defer rows.Close()
	out := []store.Incident{}
	for rows.Next() {
		in, err := scanIncident(rows)
		if err != nil {
			return nil, 0, wrap("list incidents", err)
		}
		out = append(out, in)
	}
	return out, total, wrap("list incidents", rows.Err())
}
