package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/fleethub/fleethub/internal/store"
)

const incidentCols = `id, org, env, status, severity, event_type, fleet_id, driver_id, doc, version, created_at, updated_at`

func scanIncident(row interface{ Scan(...any) error }) (store.Incident, error) {
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
	_, err := s.w.ExecContext(ctx, `INSERT INTO incidents(`+incidentCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		in.ID, in.Org, in.Env, in.Status, in.Severity, in.EventType, in.FleetID, in.DriverID, string(in.Doc), in.Version, ms(in.CreatedAt), ms(in.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlite: create incident: %w", err)
	}
	return nil
}

// GetIncident reads an incident of the scope.
func (s *Store) GetIncident(ctx context.Context, sc store.Scope, id string) (store.Incident, error) {
	in, err := scanIncident(s.r.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return in, store.ErrNotFound
	}
	if err != nil {
		return in, fmt.Errorf("sqlite: get incident: %w", err)
	}
	return in, nil
}

// UpdateIncident writes an incident under the version rule.
func (s *Store) UpdateIncident(ctx context.Context, in store.Incident, prev int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE incidents SET status = ?, severity = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		in.Status, in.Severity, string(in.Doc), in.Version, ms(in.UpdatedAt), in.ID, in.Org, in.Env, prev)
	if err != nil {
		return fmt.Errorf("sqlite: update incident: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: update incident: %w", store.ErrConflict)
	}
	return nil
}

// ListIncidents lists a page of incidents, newest first.
func (s *Store) ListIncidents(ctx context.Context, f store.IncidentFilter) ([]store.Incident, int, error) {
	w := []string{"org = ?", "env = ?"}
	args := []any{f.Org, f.Env}
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"severity", f.Severity}, {"event_type", f.EventType}, {"fleet_id", f.FleetID}, {"driver_id", f.DriverID}} {
		if c.v != "" {
			w, args = append(w, c.col+" = ?"), append(args, c.v)
		}
	}
	if !f.From.IsZero() {
		w, args = append(w, "created_at >= ?"), append(args, ms(f.From))
	}
	if !f.To.IsZero() {
		w, args = append(w, "created_at <= ?"), append(args, ms(f.To))
	}
	where := strings.Join(w, " AND ")
	var total int
	if err := s.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM incidents WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlite: count incidents: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: list incidents: %w", err)
	}
	defer rows.Close()
	out := []store.Incident{}
	for rows.Next() {
		in, err := scanIncident(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("sqlite: list incidents: %w", err)
		}
		out = append(out, in)
	}
	return out, total, rows.Err()
}
