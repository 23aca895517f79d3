package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Trips (store.Trips): a trip's row holds its running state and totals;
// its points are blocks in trip_points, its events rows of trip_events.

const tripCols = `id, org, env, vehicle_id, driver_id, status, start_time, end_time, start_location, end_location,
	metadata, metadata_history, state, distance_km, duration_minutes, avg_speed_kmh, max_speed_kmh, safety_score, eco_score,
	events_count, locations_count, version, created_at, updated_at`

// The statements of a point upload (AppendPoints), with TripUpdate's
// arguments from UpdateTripArgs.
const (
	// TripUpdate writes the mutable columns of a trip whose version is
	// still the last argument. Id, scope, vehicle, start time and creation
	// time never change.
	TripUpdate = `UPDATE trips SET driver_id = ?, status = ?, end_time = ?, start_location = ?, end_location = ?,
	metadata = ?, metadata_history = ?, state = ?, distance_km = ?, duration_minutes = ?, avg_speed_kmh = ?,
	max_speed_kmh = ?, safety_score = ?, eco_score = ?, events_count = ?, locations_count = ?, version = ?,
	updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ?`
	// TripUpdateSameStatus is TripUpdate for a trip whose stored status is
	// already the new one (the last argument; see sameStatusArgs), which
	// it leaves out of SET: a column in SET has SQLite delete and insert
	// again the entry of every index on it, changed or not, and an
	// upload rarely changes the status (trips_status, trips_open_vehicle:
	// two index entries and their pages a commit, per upload).
	TripUpdateSameStatus = `UPDATE trips SET driver_id = ?, end_time = ?, start_location = ?, end_location = ?,
	metadata = ?, metadata_history = ?, state = ?, distance_km = ?, duration_minutes = ?, avg_speed_kmh = ?,
	max_speed_kmh = ?, safety_score = ?, eco_score = ?, events_count = ?, locations_count = ?, version = ?,
	updated_at = ? WHERE id = ? AND org = ? AND env = ? AND version = ? AND status = ?`
	InsertBlock  = `INSERT INTO trip_points(trip_id, seq, first_ts, last_ts, count, data) VALUES (?, ?, ?, ?, ?, ?)`
	DeleteEvents = `DELETE FROM trip_events WHERE trip_id = ?`
	UpsertEvent  = `INSERT INTO trip_events(id, trip_id, type, ts, data) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET data = excluded.data, ts = excluded.ts`
)

// placeJSON is the column value of p: JSON text, NULL when absent.
func placeJSON(p *store.Place) (*string, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	v := string(b)
	return &v, nil
}

func parsePlace(v *string) (*store.Place, error) {
	if v == nil || *v == "" {
		return nil, nil
	}
	var p store.Place
	if err := json.Unmarshal([]byte(*v), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// places encodes both locations of t.
func places(t store.Trip) (start, end *string, err error) {
	if start, err = placeJSON(t.StartLocation); err != nil {
		return nil, nil, fmt.Errorf("start_location: %w", err)
	}
	if end, err = placeJSON(t.EndLocation); err != nil {
		return nil, nil, fmt.Errorf("end_location: %w", err)
	}
	return start, end, nil
}

func scanTrip(row Row) (store.Trip, error) {
	var t store.Trip
	var start, end, created, updated int64
	var sl, el *string
	var md, mh, st string
	err := row.Scan(&t.ID, &t.Org, &t.Env, &t.VehicleID, &t.DriverID, &t.Status, &start, &end, &sl, &el, &md, &mh, &st,
		&t.Totals.DistanceKm, &t.Totals.DurationMinutes, &t.Totals.AvgSpeedKmh, &t.Totals.MaxSpeedKmh, &t.Totals.SafetyScore, &t.Totals.EcoScore,
		&t.Totals.EventsCount, &t.Totals.LocationsCount, &t.Version, &created, &updated)
	if err != nil {
		return store.Trip{}, err
	}
	t.StartTime, t.EndTime, t.CreatedAt, t.UpdatedAt = FromMS(start), FromMS(end), FromMS(created), FromMS(updated)
	t.Metadata, t.MetadataHistory, t.State = []byte(md), []byte(mh), []byte(st)
	if t.StartLocation, err = parsePlace(sl); err != nil {
		return store.Trip{}, fmt.Errorf("start_location of trip %s: %w", t.ID, err)
	}
	if t.EndLocation, err = parsePlace(el); err != nil {
		return store.Trip{}, fmt.Errorf("end_location of trip %s: %w", t.ID, err)
	}
	return t, nil
}

// CreateTrip inserts t; ErrConflict when its id is taken or its vehicle
// already has an active or paused trip in the scope.
func (s *Store) CreateTrip(ctx context.Context, t store.Trip) error {
	sl, el, err := places(t)
	if err != nil {
		return fmt.Errorf("%s: create trip: %w", s.d.Name, err)
	}
	_, err = s.w.Exec(ctx, `INSERT INTO trips(`+tripCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Org, t.Env, t.VehicleID, t.DriverID, t.Status, MS(t.StartTime), MS(t.EndTime), sl, el,
		orEmpty(t.Metadata, "{}"), orEmpty(t.MetadataHistory, "[]"), orEmpty(t.State, "{}"),
		t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh, t.Totals.MaxSpeedKmh, t.Totals.SafetyScore, t.Totals.EcoScore,
		t.Totals.EventsCount, t.Totals.LocationsCount, t.Version, MS(t.CreatedAt), MS(t.UpdatedAt))
	return s.wrap("create trip", err)
}

// GetTrip reads a trip of the scope; ErrNotFound outside it.
func (s *Store) GetTrip(ctx context.Context, sc store.Scope, id string) (store.Trip, error) {
	t, err := scanTrip(s.r.QueryRow(ctx, `SELECT `+tripCols+` FROM trips WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if err != nil {
		return store.Trip{}, s.wrap("get trip", err)
	}
	return t, nil
}

// UpdateTripArgs are TripUpdate's arguments writing t over version prev.
func UpdateTripArgs(t store.Trip, prev int64) ([]any, error) {
	sl, el, err := places(t)
	if err != nil {
		return nil, err
	}
	return []any{t.DriverID, t.Status, MS(t.EndTime), sl, el, orEmpty(t.Metadata, "{}"), orEmpty(t.MetadataHistory, "[]"),
		orEmpty(t.State, "{}"), t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh, t.Totals.MaxSpeedKmh,
		t.Totals.SafetyScore, t.Totals.EcoScore, t.Totals.EventsCount, t.Totals.LocationsCount, t.Version, MS(t.UpdatedAt),
		t.ID, t.Org, t.Env, prev}, nil
}

// sameStatusArgs are TripUpdateSameStatus's arguments from TripUpdate's:
// the status moves from second to last.
func sameStatusArgs(args []any) []any {
	out := make([]any, 0, len(args))
	out = append(out, args[0])
	out = append(out, args[2:]...)
	return append(out, args[1])
}

// UpdateTrip writes t when the stored version is prev. ErrConflict when it
// is not (or the trip is missing or of another scope), and when the new
// status would give the vehicle a second open trip.
func (s *Store) UpdateTrip(ctx context.Context, t store.Trip, prev int64) error {
	args, err := UpdateTripArgs(t, prev)
	if err != nil {
		return fmt.Errorf("%s: update trip: %w", s.d.Name, err)
	}
	n, err := s.w.Exec(ctx, TripUpdate, args...)
	if err != nil {
		return s.wrap("update trip", err)
	}
	if n == 0 {
		return fmt.Errorf("%s: update trip %s: version %d: %w", s.d.Name, t.ID, prev, store.ErrConflict)
	}
	return nil
}

// AppendPoints updates the trip, inserts blocks, replaces the trip's
// events when replace is set and upserts events by id, in one
// transaction, a statement each.
func (s *Store) AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	args, err := UpdateTripArgs(t, prev)
	if err != nil {
		return fmt.Errorf("%s: append points: %w", s.d.Name, err)
	}
	return s.inTx(ctx, "append points", func(tx Querier) error {
		return WriteAppend(ctx, tx, t, prev, args, blocks, events, replace)
	})
}

// WriteAppend runs AppendPoints' statements in tx: the trip's update
// (args from UpdateTripArgs; store.ErrConflict when its version is no
// longer prev), its blocks and its events. A backend that shares one
// transaction among several uploads runs it for each.
func WriteAppend(ctx context.Context, tx Querier, t store.Trip, prev int64, args []any, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	n, err := tx.Exec(ctx, TripUpdateSameStatus, sameStatusArgs(args)...)
	if err == nil && n == 0 { // the status changes (or the version did)
		n, err = tx.Exec(ctx, TripUpdate, args...)
	}
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("trip %s: version %d: %w", t.ID, prev, store.ErrConflict)
	}
	for _, b := range blocks {
		if _, err := tx.Exec(ctx, InsertBlock, t.ID, b.Seq, b.FirstTS, b.LastTS, b.Count, b.Data); err != nil {
			return fmt.Errorf("block %d: %w", b.Seq, err)
		}
	}
	if replace {
		if _, err := tx.Exec(ctx, DeleteEvents, t.ID); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
	}
	for _, e := range events {
		if _, err := tx.Exec(ctx, UpsertEvent, e.ID, t.ID, e.Type, MS(e.Time), string(e.Data)); err != nil {
			return fmt.Errorf("event %s: %w", e.ID, err)
		}
	}
	return nil
}

// ReadPoints returns every block of a trip of the scope in block order;
// none outside the scope.
func (s *Store) ReadPoints(ctx context.Context, sc store.Scope, tripID string) ([]store.PointBlock, error) {
	rows, err := s.r.Query(ctx, `SELECT p.seq, p.first_ts, p.last_ts, p.count, p.data FROM trip_points p
		JOIN trips t ON t.id = p.trip_id WHERE p.trip_id = ? AND t.org = ? AND t.env = ? ORDER BY p.seq`, tripID, sc.Org, sc.Env)
	out, err := collect(nil, rows, err, func(r Row) (store.PointBlock, error) {
		b := store.PointBlock{TripID: tripID}
		return b, r.Scan(&b.Seq, &b.FirstTS, &b.LastTS, &b.Count, &b.Data)
	})
	return out, s.wrap("read points", err)
}

// TripEvents returns the events of a trip of the scope in time order, ties
// by id; none outside the scope.
func (s *Store) TripEvents(ctx context.Context, sc store.Scope, tripID string) ([]store.TripEvent, error) {
	rows, err := s.r.Query(ctx, `SELECT e.id, e.type, e.ts, e.data FROM trip_events e JOIN trips t ON t.id = e.trip_id
		WHERE e.trip_id = ? AND t.org = ? AND t.env = ? ORDER BY e.ts, e.id`, tripID, sc.Org, sc.Env)
	out, err := collect(nil, rows, err, func(r Row) (store.TripEvent, error) {
		e := store.TripEvent{TripID: tripID}
		var ts int64
		var data string
		err := r.Scan(&e.ID, &e.Type, &ts, &data)
		e.Time, e.Data = FromMS(ts), []byte(data)
		return e, err
	})
	return out, s.wrap("trip events", err)
}

// sortColumn maps a sort key to its column and whether the column holds
// unix milliseconds; unknown keys sort by start time.
func sortColumn(key string) (col string, isTime bool) {
	switch key {
	case "end_time":
		return "end_time", true
	case "distance":
		return "distance_km", false
	case "duration":
		return "duration_minutes", false
	case "safety_score":
		// a trip without locations has no score: it sorts as
		// store.NoScore, below every score
		return "(CASE WHEN locations_count > 0 THEN safety_score ELSE " + strconv.FormatFloat(store.NoScore, 'f', -1, 64) + " END)", false
	default:
		return "start_time", true
	}
}

// tripWhere is the condition selecting the trips of f, paging aside, and
// its arguments.
func (s *Store) tripWhere(f store.TripFilter) (string, []any) {
	w := []string{"org = ?", "env = ?"}
	args := []any{f.Org, f.Env}
	if f.VehicleID != "" {
		w, args = append(w, "vehicle_id = ?"), append(args, f.VehicleID)
	}
	if f.DriverID != "" {
		w, args = append(w, "driver_id = ?"), append(args, f.DriverID)
	}
	if len(f.Statuses) > 0 {
		in, vals := s.d.In("status", f.Statuses)
		w, args = append(w, in), append(args, vals...)
	}
	if !f.StartAfter.IsZero() {
		w, args = append(w, "start_time > ?"), append(args, f.StartAfter.UnixMilli())
	}
	if !f.StartBefore.IsZero() {
		w, args = append(w, "start_time < ?"), append(args, f.StartBefore.UnixMilli())
	}
	if f.ExcludeID != "" {
		w, args = append(w, "id <> ?"), append(args, f.ExcludeID)
	}
	if f.WithPoints {
		w = append(w, "locations_count > 0")
	}
	if f.SafetyBelow != nil {
		w, args = append(w, "safety_score < ?"), append(args, *f.SafetyBelow)
	}
	return strings.Join(w, " AND "), args
}

// ListTrips lists the trips of f by keyset: ordered by the sort column then
// id, strictly after f.After or strictly before f.Before in that order
// (or at it, when the Keyset is Inclusive).
// Before pages are read backwards and returned in listing order.
func (s *Store) ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error) {
	where, args := s.tripWhere(f)
	col, isTime := sortColumn(f.Sort)
	ks, backwards := f.After, false
	if ks == nil && f.Before != nil {
		ks, backwards = f.Before, true
	}
	scanDesc := f.Desc != backwards
	if ks != nil {
		op := ">"
		if scanDesc {
			op = "<"
		}
		if ks.Inclusive {
			op += "="
		}
		v := any(ks.Value)
		if isTime {
			v = int64(ks.Value)
		}
		// A row comparison: both keys go the same way, and it can use
		// trips_scope_start.
		where += " AND (" + col + ", id) " + op + " (?, ?)"
		args = append(args, v, ks.ID)
	}
	dir := "ASC"
	if scanDesc {
		dir = "DESC"
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + tripCols + ` FROM trips WHERE ` + where + ` ORDER BY ` + col + ` ` + dir + `, id ` + dir + ` LIMIT ` + strconv.Itoa(limit)
	rows, err := s.r.Query(ctx, q, args...)
	out, err := collect([]store.Trip{}, rows, err, scanTrip)
	if err != nil {
		return nil, s.wrap("list trips", err)
	}
	if backwards {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// SummarizeTrips aggregates the trips matching f, ignoring its sort and
// paging. Active counts active and paused trips; the scores are averaged
// over the trips with locations (a trip without any has no score).
func (s *Store) SummarizeTrips(ctx context.Context, f store.TripFilter) (store.TripSummary, error) {
	where, args := s.tripWhere(f)
	var sum store.TripSummary
	err := s.r.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(distance_km), 0), COALESCE(SUM(duration_minutes), 0),
		COUNT(CASE WHEN locations_count > 0 THEN 1 END),
		COALESCE(AVG(CASE WHEN locations_count > 0 THEN safety_score END), 0),
		COALESCE(AVG(CASE WHEN locations_count > 0 THEN eco_score END), 0),
		COUNT(CASE WHEN status IN ('active', 'paused') THEN 1 END), COUNT(CASE WHEN status = 'completed' THEN 1 END)
		FROM trips WHERE `+where, args...).
		Scan(&sum.Count, &sum.TotalDistanceKm, &sum.TotalDurationMin, &sum.Scored, &sum.AvgSafetyScore, &sum.AvgEcoScore, &sum.Active, &sum.Completed)
	if err != nil {
		return store.TripSummary{}, s.wrap("summarize trips", err)
	}
	return sum, nil
}

// ActiveTripStats counts open (active or paused) trips in sc (the zero
// Scope: every scope), the organizations they belong to, and their mean
// age at now in minutes.
func (s *Store) ActiveTripStats(ctx context.Context, sc store.Scope, now time.Time) (total, orgs int, avgMinutes float64, err error) {
	err = s.r.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT org), COALESCE(AVG((CAST(? AS DOUBLE PRECISION) - start_time) / 60000.0), 0)
		FROM trips WHERE status IN ('active', 'paused') AND (? = '' OR org = ?) AND (? = '' OR env = ?)`,
		now.UnixMilli(), sc.Org, sc.Org, sc.Env, sc.Env).Scan(&total, &orgs, &avgMinutes)
	if err != nil {
		return 0, 0, 0, s.wrap("active trip stats", err)
	}
	return total, orgs, avgMinutes, nil
}
