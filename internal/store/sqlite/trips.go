package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

const tripCols = `id, org, env, vehicle_id, driver_id, status, start_time, end_time, start_location, end_location,
	metadata, metadata_history, state, distance_km, duration_minutes, avg_speed_kmh, max_speed_kmh, safety_score, eco_score,
	events_count, locations_count, version, created_at, updated_at`

func placeJSON(p *store.Place) any {
	if p == nil {
		return nil
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func parsePlace(v sql.NullString) (*store.Place, error) {
	if !v.Valid || v.String == "" {
		return nil, nil
	}
	var p store.Place
	if err := json.Unmarshal([]byte(v.String), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

func orEmpty(b []byte, empty string) string {
	if len(b) == 0 {
		return empty
	}
	return string(b)
}

func tripArgs(t store.Trip) []any {
	return []any{t.ID, t.Org, t.Env, t.VehicleID, t.DriverID, t.Status, ms(t.StartTime), ms(t.EndTime),
		placeJSON(t.StartLocation), placeJSON(t.EndLocation), orEmpty(t.Metadata, "{}"), orEmpty(t.MetadataHistory, "[]"), orEmpty(t.State, "{}"),
		t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh, t.Totals.MaxSpeedKmh, t.Totals.SafetyScore, t.Totals.EcoScore,
		t.Totals.EventsCount, t.Totals.LocationsCount, t.Version, ms(t.CreatedAt), ms(t.UpdatedAt)}
}

func scanTrip(row interface{ Scan(...any) error }) (store.Trip, error) {
	var t store.Trip
	var start, end, created, updated int64
	var sl, el sql.NullString
	var md, mh, st string
	err := row.Scan(&t.ID, &t.Org, &t.Env, &t.VehicleID, &t.DriverID, &t.Status, &start, &end, &sl, &el, &md, &mh, &st,
		&t.Totals.DistanceKm, &t.Totals.DurationMinutes, &t.Totals.AvgSpeedKmh, &t.Totals.MaxSpeedKmh, &t.Totals.SafetyScore, &t.Totals.EcoScore,
		&t.Totals.EventsCount, &t.Totals.LocationsCount, &t.Version, &created, &updated)
	if err != nil {
		return t, err
	}
	t.StartTime, t.EndTime, t.CreatedAt, t.UpdatedAt = fromMS(start), fromMS(end), fromMS(created), fromMS(updated)
	t.Metadata, t.MetadataHistory, t.State = []byte(md), []byte(mh), []byte(st)
	if t.StartLocation, err = parsePlace(sl); err != nil {
		return t, fmt.Errorf("start_location of trip %s: %w", t.ID, err)
	}
	if t.EndLocation, err = parsePlace(el); err != nil {
		return t, fmt.Errorf("end_location of trip %s: %w", t.ID, err)
	}
	return t, nil
}

// CreateTrip inserts a trip.
func (s *Store) CreateTrip(ctx context.Context, t store.Trip) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO trips(`+tripCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, tripArgs(t)...)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return fmt.Errorf("sqlite: create trip: %w", store.ErrConflict)
		}
		return fmt.Errorf("sqlite: create trip: %w", err)
	}
	return nil
}

// GetTrip reads a trip of the scope.
func (s *Store) GetTrip(ctx context.Context, sc store.Scope, id string) (store.Trip, error) {
	t, err := scanTrip(s.r.QueryRowContext(ctx, `SELECT `+tripCols+` FROM trips WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return t, store.ErrNotFound
	}
	if err != nil {
		return t, fmt.Errorf("sqlite: get trip: %w", err)
	}
	return t, nil
}

const tripUpdate = `UPDATE trips SET driver_id = ?, status = ?, end_time = ?, start_location = ?, end_location = ?, metadata = ?, metadata_history = ?,
	state = ?, distance_km = ?, duration_minutes = ?, avg_speed_kmh = ?, max_speed_kmh = ?, safety_score = ?, eco_score = ?, events_count = ?,
	locations_count = ?, version = ?, updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`

func updateArgs(t store.Trip, prev int64) []any {
	return []any{t.DriverID, t.Status, ms(t.EndTime), placeJSON(t.StartLocation), placeJSON(t.EndLocation), orEmpty(t.Metadata, "{}"),
		orEmpty(t.MetadataHistory, "[]"), orEmpty(t.State, "{}"), t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh,
		t.Totals.MaxSpeedKmh, t.Totals.SafetyScore, t.Totals.EcoScore, t.Totals.EventsCount, t.Totals.LocationsCount, t.Version,
		ms(t.UpdatedAt), t.ID, t.Org, t.Env, prev}
}

type execer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

func updateTrip(ctx context.Context, x execer, t store.Trip, prev int64) error {
	res, err := x.ExecContext(ctx, tripUpdate, updateArgs(t, prev)...)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return store.ErrConflict
		}
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrConflict
	}
	return nil
}

// UpdateTrip writes t when the stored version is prev.
func (s *Store) UpdateTrip(ctx context.Context, t store.Trip, prev int64) error {
	if err := updateTrip(ctx, s.w, t, prev); err != nil {
		return fmt.Errorf("sqlite: update trip: %w", err)
	}
	return nil
}

// AppendPoints writes blocks, events and the trip in one transaction.
func (s *Store) AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: append points: %w", err)
	}
	defer tx.Rollback()
	if err := updateTrip(ctx, tx, t, prev); err != nil {
		return fmt.Errorf("sqlite: append points: %w", err)
	}
	for _, b := range blocks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trip_points(trip_id, seq, first_ts, last_ts, count, data) VALUES (?,?,?,?,?,?)`,
			t.ID, b.Seq, b.FirstTS, b.LastTS, b.Count, b.Data); err != nil {
			return fmt.Errorf("sqlite: append points: block %d: %w", b.Seq, err)
		}
	}
	if replace {
		if _, err := tx.ExecContext(ctx, `DELETE FROM trip_events WHERE trip_id = ?`, t.ID); err != nil {
			return fmt.Errorf("sqlite: append points: %w", err)
		}
	}
	for _, e := range events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trip_events(id, trip_id, type, ts, data) VALUES (?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET data = excluded.data, ts = excluded.ts`, e.ID, t.ID, e.Type, ms(e.Time), string(e.Data)); err != nil {
			return fmt.Errorf("sqlite: append points: event: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: append points: %w", err)
	}
	return nil
}

// ReadPoints returns every block of a trip of the scope.
func (s *Store) ReadPoints(ctx context.Context, sc store.Scope, tripID string) ([]store.PointBlock, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT p.seq, p.first_ts, p.last_ts, p.count, p.data FROM trip_points p
		JOIN trips t ON t.id = p.trip_id WHERE p.trip_id = ? AND t.org = ? AND t.env = ? ORDER BY p.seq`, tripID, sc.Org, sc.Env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: read points: %w", err)
	}
	defer rows.Close()
	var out []store.PointBlock
	for rows.Next() {
		b := store.PointBlock{TripID: tripID}
		if err := rows.Scan(&b.Seq, &b.FirstTS, &b.LastTS, &b.Count, &b.Data); err != nil {
			return nil, fmt.Errorf("sqlite: read points: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read points: %w", err)
	}
	return out, nil
}

// TripEvents returns the events of a trip of the scope in time order.
func (s *Store) TripEvents(ctx context.Context, sc store.Scope, tripID string) ([]store.TripEvent, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT e.id, e.type, e.ts, e.data FROM trip_events e JOIN trips t ON t.id = e.trip_id
		WHERE e.trip_id = ? AND t.org = ? AND t.env = ? ORDER BY e.ts, e.id`, tripID, sc.Org, sc.Env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: trip events: %w", err)
	}
	defer rows.Close()
	var out []store.TripEvent
	for rows.Next() {
		e := store.TripEvent{TripID: tripID}
		var ts int64
		var data string
		if err := rows.Scan(&e.ID, &e.Type, &ts, &data); err != nil {
			return nil, fmt.Errorf("sqlite: trip events: %w", err)
		}
		e.Time, e.Data = fromMS(ts), []byte(data)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: trip events: %w", err)
	}
	return out, nil
}

// sortColumn maps a sort key to its column.
func sortColumn(key string) string {
	switch key {
	case "end_time":
		return "end_time"
	case "distance":
		return "distance_km"
	case "duration":
		return "duration_minutes"
	case "safety_score":
		return "safety_score"
	default:
		return "start_time"
	}
}

func tripWhere(f store.TripFilter) (string, []any) {
	w := []string{"org = ?", "env = ?"}
	args := []any{f.Org, f.Env}
	if f.VehicleID != "" {
		w, args = append(w, "vehicle_id = ?"), append(args, f.VehicleID)
	}
	if f.DriverID != "" {
		w, args = append(w, "driver_id = ?"), append(args, f.DriverID)
	}
	if len(f.Statuses) > 0 {
		w = append(w, "status IN (?"+strings.Repeat(",?", len(f.Statuses)-1)+")")
		for _, s := range f.Statuses {
			args = append(args, s)
		}
	}
	if !f.StartAfter.IsZero() {
		w, args = append(w, "start_time > ?"), append(args, f.StartAfter.UnixMilli())
	}
	if !f.StartBefore.IsZero() {
		w, args = append(w, "start_time < ?"), append(args, f.StartBefore.UnixMilli())
	}
	return strings.Join(w, " AND "), args
}

// ListTrips lists trips by keyset.
func (s *Store) ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error) {
	where, args := tripWhere(f)
	col := sortColumn(f.Sort)
	desc := f.Desc
	var ks *store.Keyset
	backwards := false
	if f.After != nil {
		ks = f.After
	} else if f.Before != nil {
		ks, backwards = f.Before, true
	}
	scanDesc := desc != backwards
	if ks != nil {
		op := ">"
		if scanDesc {
			op = "<"
		}
		where += fmt.Sprintf(" AND (%s %s ? OR (%s = ? AND id %s ?))", col, op, col, op)
		v := any(ks.Value)
		if col == "start_time" || col == "end_time" {
			v = int64(ks.Value)
		}
		args = append(args, v, v, ks.ID)
	}
	dir := "ASC"
	if scanDesc {
		dir = "DESC"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := fmt.Sprintf(`SELECT %s FROM trips WHERE %s ORDER BY %s %s, id %s LIMIT %d`, tripCols, where, col, dir, dir, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list trips: %w", err)
	}
	defer rows.Close()
	out := []store.Trip{}
	for rows.Next() {
		t, err := scanTrip(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list trips: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list trips: %w", err)
	}
	if backwards {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// SummarizeTrips aggregates the trips matching f.
func (s *Store) SummarizeTrips(ctx context.Context, f store.TripFilter) (store.TripSummary, error) {
	where, args := tripWhere(f)
	var sum store.TripSummary
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(distance_km),0), COALESCE(SUM(duration_minutes),0),
		COALESCE(AVG(safety_score),0), COALESCE(AVG(eco_score),0),
		COALESCE(SUM(CASE WHEN status IN ('active','paused') THEN 1 ELSE 0 END),0),
		COALESCE(SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END),0) FROM trips WHERE `+where, args...).
		Scan(&sum.Count, &sum.TotalDistanceKm, &sum.TotalDurationMin, &sum.AvgSafetyScore, &sum.AvgEcoScore, &sum.Active, &sum.Completed)
	if err != nil {
		return sum, fmt.Errorf("sqlite: summarize trips: %w", err)
	}
	return sum, nil
}

// ActiveTripStats counts active trips in sc (the zero Scope: every scope).
func (s *Store) ActiveTripStats(ctx context.Context, sc store.Scope, now time.Time) (int, int, float64, error) {
	var total, orgs int
	var avg sql.NullFloat64
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT org), AVG((? - start_time) / 60000.0) FROM trips
		WHERE status IN ('active','paused') AND (? = '' OR org = ?) AND (? = '' OR env = ?)`,
		now.UnixMilli(), sc.Org, sc.Org, sc.Env, sc.Env).Scan(&total, &orgs, &avg)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("sqlite: active trip stats: %w", err)
	}
	return total, orgs, avg.Float64, nil
}
