package sqlstore

import (
	"context"
	"strings"

	"github.com/fleethub/fleethub/internal/store"
)

// Incidents (store.Incidents).

const incidentCols = `id, org, env, status, severity, event_type, fleet_id, driver_id, doc, version, created_at, updated_at`

func scanIncident(row Row) (store.Incident, error) {
	var in store.Incident
	var doc string
	var c, u int64
	if err := row.Scan(&in.ID, &in.Org, &in.Env, &in.Status, &in.Severity, &in.EventType, &in.FleetID, &in.DriverID, &doc, &in.Version, &c, &u); err != nil {
		return in, err
	}
	in.Doc, in.CreatedAt, in.UpdatedAt = []byte(doc), FromMS(c), FromMS(u)
	return in, nil
}

// CreateIncident inserts an incident.
func (s *Store) CreateIncident(ctx context.Context, in store.Incident) error {
	_, err := s.w.Exec(ctx, `INSERT INTO incidents(`+incidentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		in.ID, in.Org, in.Env, in.Status, in.Severity, in.EventType, in.FleetID, in.DriverID, string(in.Doc), in.Version, MS(in.CreatedAt), MS(in.UpdatedAt))
	return s.wrap("create incident", err)
}

// GetIncident reads an incident of the scope.
func (s *Store) GetIncident(ctx context.Context, sc store.Scope, id string) (store.Incident, error) {
	in, err := scanIncident(s.r.QueryRow(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	return in, s.wrap("get incident", err)
}

// UpdateIncident writes an incident under the version rule.
func (s *Store) UpdateIncident(ctx context.Context, in store.Incident, prev int64) error {
	n, err := s.w.Exec(ctx, `UPDATE incidents SET status = ?, severity = ?, doc = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		in.Status, in.Severity, string(in.Doc), in.Version, MS(in.UpdatedAt), in.ID, in.Org, in.Env, prev)
	return s.wrap("update incident", changed(n, err, store.ErrConflict))
}

// ListIncidents lists a page of incidents, newest first, and the total
// matching.
func (s *Store) ListIncidents(ctx context.Context, f store.IncidentFilter) ([]store.Incident, int, error) {
	w := []string{"org = ?", "env = ?"}
	args := []any{f.Org, f.Env}
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"severity", f.Severity}, {"event_type", f.EventType}, {"fleet_id", f.FleetID}, {"driver_id", f.DriverID}} {
		if c.v != "" {
			w, args = append(w, c.col+" = ?"), append(args, c.v)
		}
	}
	if !f.From.IsZero() {
		w, args = append(w, "created_at >= ?"), append(args, MS(f.From))
	}
	if !f.To.IsZero() {
		w, args = append(w, "created_at <= ?"), append(args, MS(f.To))
	}
	where := strings.Join(w, " AND ")
	var total int
	if err := s.r.QueryRow(ctx, `SELECT COUNT(*) FROM incidents WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, s.wrap("count incidents", err)
	}
	rows, err := s.r.Query(ctx, `SELECT `+incidentCols+` FROM incidents WHERE `+where+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	out, err := collect([]store.Incident{}, rows, err, scanIncident)
	if err != nil {
		return nil, 0, s.wrap("list incidents", err)
	}
	return out, total, nil
}
