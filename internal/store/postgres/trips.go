package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

const tripCols = `id, org, env, vehicle_id, driver_id, status, start_time, end_time, start_location, end_location,
	metadata, metadata_history, state, distance_km, duration_minutes, avg_speed_kmh, max_speed_kmh, safety_score, eco_score,
	events_count, locations_count, version, created_at, updated_at`

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

// orEmpty is the text of a JSON column, empty when b is.
func orEmpty(b []byte, empty string) string {
	if len(b) == 0 {
		return empty
	}
	return string(b)
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

func scanTrip(row pgx.Row) (store.Trip, error) {
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
	t.StartTime, t.EndTime, t.CreatedAt, t.UpdatedAt = fromMS(start), fromMS(end), fromMS(created), fromMS(updated)
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
		return fmt.Errorf("postgres: create trip: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO trips(`+tripCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)`,
		t.ID, t.Org, t.Env, t.VehicleID, t.DriverID, t.Status, ms(t.StartTime), ms(t.EndTime), sl, el,
		orEmpty(t.Metadata, "{}"), orEmpty(t.MetadataHistory, "[]"), orEmpty(t.State, "{}"),
		t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh, t.Totals.MaxSpeedKmh, t.Totals.SafetyScore, t.Totals.EcoScore,
		t.Totals.EventsCount, t.Totals.LocationsCount, t.Version, ms(t.CreatedAt), ms(t.UpdatedAt))
	if err != nil {
		return wrap("create trip", err)
	}
	return nil
}

// GetTrip reads a trip of the scope; ErrNotFound outside it.
func (s *Store) GetTrip(ctx context.Context, sc store.Scope, id string) (store.Trip, error) {
	t, err := scanTrip(s.pool.QueryRow(ctx, `SELECT `+tripCols+` FROM trips WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env))
	if err != nil {
		return store.Trip{}, wrap("get trip", err)
	}
	return t, nil
}

// tripUpdate writes the mutable columns of a trip whose version is still
// $22. Id, scope, vehicle, start time and creation time never change.
const tripUpdate = `UPDATE trips SET driver_id = $1, status = $2, end_time = $3, start_location = $4, end_location = $5,
	metadata = $6, metadata_history = $7, state = $8, distance_km = $9, duration_minutes = $10, avg_speed_kmh = $11,
	max_speed_kmh = $12, safety_score = $13, eco_score = $14, events_count = $15, locations_count = $16, version = $17,
	updated_at = $18 WHERE id = $19 AND org = $20 AND env = $21 AND version = $22`

func updateArgs(t store.Trip, prev int64) ([]any, error) {
	sl, el, err := places(t)
	if err != nil {
		return nil, err
	}
	return []any{t.DriverID, t.Status, ms(t.EndTime), sl, el, orEmpty(t.Metadata, "{}"), orEmpty(t.MetadataHistory, "[]"),
		orEmpty(t.State, "{}"), t.Totals.DistanceKm, t.Totals.DurationMinutes, t.Totals.AvgSpeedKmh, t.Totals.MaxSpeedKmh,
		t.Totals.SafetyScore, t.Totals.EcoScore, t.Totals.EventsCount, t.Totals.LocationsCount, t.Version, ms(t.UpdatedAt),
		t.ID, t.Org, t.Env, prev}, nil
}

// UpdateTrip writes t when the stored version is prev. ErrConflict when it
// is not (or the trip is missing or of another scope), and when the new
// status would give the vehicle a second open trip.
func (s *Store) UpdateTrip(ctx context.Context, t store.Trip, prev int64) error {
	args, err := updateArgs(t, prev)
	if err != nil {
		return fmt.Errorf("postgres: update trip: %w", err)
	}
	tag, err := s.pool.Exec(ctx, tripUpdate, args...)
	if err != nil {
		return wrap("update trip", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: update trip %s: version %d: %w", t.ID, prev, store.ErrConflict)
	}
	return nil
}

const (
	insertBlock  = `INSERT INTO trip_points(trip_id, seq, first_ts, last_ts, count, data) VALUES ($1, $2, $3, $4, $5, $6)`
	deleteEvents = `DELETE FROM trip_events WHERE trip_id = $1`
	upsertEvent  = `INSERT INTO trip_events(id, trip_id, type, ts, data) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET data = excluded.data, ts = excluded.ts`
)

// copyMinBlocks is the number of blocks from which AppendPoints writes
// them with COPY rather than in its batch. COPY costs a round trip of its
// own but encodes and parses less per row. Measured with
// BenchmarkAppendPoints (2 KiB blocks) on a 2-core machine whose COMMIT
// dominates and varies: at 16 blocks both take 0.8-3.5 ms; at 64 both take
// 4-5.5 ms, the batch allocating 873 KB per append and COPY 291 KB; at 256
// COPY takes 6.4-9.6 ms and 0.3 MB, the batch 9.8-12.7 ms and 4 MB.
const copyMinBlocks = 64

// AppendPoints updates the trip, inserts blocks, replaces the trip's events
// when replace is set and upserts events by id, in one transaction.
//
// Everything after BEGIN goes in one pgx.Batch, so a usual append costs
// three round trips (BEGIN, the batch, COMMIT) whatever its number of
// blocks and events; from copyMinBlocks blocks on, the blocks follow the
// batch as a COPY. The update is the batch's first statement: when it
// matches no row the statements after it have run for nothing and are
// rolled back. Events are one statement each, not one multi-row upsert,
// because the same id twice in one upsert is an error while here the later
// one wins.
func (s *Store) AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	args, err := updateArgs(t, prev)
	if err != nil {
		return fmt.Errorf("postgres: append points: %w", err)
	}
	b := &pgx.Batch{}
	b.Queue(tripUpdate, args...)
	batched := blocks
	if len(blocks) >= copyMinBlocks {
		batched = nil
	}
	for _, pb := range batched {
		b.Queue(insertBlock, t.ID, pb.Seq, pb.FirstTS, pb.LastTS, pb.Count, pb.Data)
	}
	if replace {
		b.Queue(deleteEvents, t.ID)
	}
	for _, e := range events {
		b.Queue(upsertEvent, e.ID, t.ID, e.Type, ms(e.Time), string(e.Data))
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := sendAppend(ctx, tx, b, t, prev, batched, events, replace); err != nil {
			return err
		}
		if len(batched) == len(blocks) {
			return nil
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"trip_points"}, []string{"trip_id", "seq", "first_ts", "last_ts", "count", "data"},
			pgx.CopyFromSlice(len(blocks), func(i int) ([]any, error) {
				pb := blocks[i]
				return []any{t.ID, pb.Seq, pb.FirstTS, pb.LastTS, pb.Count, pb.Data}, nil
			}))
		if err != nil {
			return fmt.Errorf("copy %d blocks: %w", len(blocks), err)
		}
		return nil
	})
	if err != nil {
		return wrap("append points", err)
	}
	return nil
}

// sendAppend runs the batch of AppendPoints and reads its results in the
// order they were queued: the trip's update, the blocks, the deletion of
// events when replace is set, the events.
func sendAppend(ctx context.Context, tx pgx.Tx, b *pgx.Batch, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error {
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	tag, err := br.Exec()
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("trip %s: version %d: %w", t.ID, prev, store.ErrConflict)
	}
	for i := range blocks {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("block %d: %w", blocks[i].Seq, err)
		}
	}
	if replace {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("delete events: %w", err)
		}
	}
	for i := range events {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("event %s: %w", events[i].ID, err)
		}
	}
	return br.Close()
}

// ReadPoints returns every block of a trip of the scope in block order;
// none outside the scope.
func (s *Store) ReadPoints(ctx context.Context, sc store.Scope, tripID string) ([]store.PointBlock, error) {
	rows, err := s.pool.Query(ctx, `SELECT p.seq, p.first_ts, p.last_ts, p.count, p.data FROM trip_points p
		JOIN trips t ON t.id = p.trip_id WHERE p.trip_id = $1 AND t.org = $2 AND t.env = $3 ORDER BY p.seq`, tripID, sc.Org, sc.Env)
	if err != nil {
		return nil, wrap("read points", err)
	}
	defer rows.Close()
	var out []store.PointBlock
	for rows.Next() {
		b := store.PointBlock{TripID: tripID}
		if err := rows.Scan(&b.Seq, &b.FirstTS, &b.LastTS, &b.Count, &b.Data); err != nil {
			return nil, wrap("read points", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("read points", err)
	}
	return out, nil
}

// TripEvents returns the events of a trip of the scope in time order, ties
// by id; none outside the scope.
func (s *Store) TripEvents(ctx context.Context, sc store.Scope, tripID string) ([]store.TripEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT e.id, e.type, e.ts, e.data FROM trip_events e JOIN trips t ON t.id = e.trip_id
		WHERE e.trip_id = $1 AND t.org = $2 AND t.env = $3 ORDER BY e.ts, e.id`, tripID, sc.Org, sc.Env)
	if err != nil {
		return nil, wrap("trip events", err)
	}
	defer rows.Close()
	var out []store.TripEvent
	for rows.Next() {
		e := store.TripEvent{TripID: tripID}
		var ts int64
		var data string
		if err := rows.Scan(&e.ID, &e.Type, &ts, &data); err != nil {
			return nil, wrap("trip events", err)
		}
		e.Time, e.Data = fromMS(ts), []byte(data)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("trip events", err)
	}
	return out, nil
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
		return "safety_score", false
	default:
		return "start_time", true
	}
}

// params collects the arguments of a statement built piece by piece.
type params []any

// add appends v and returns its placeholder.
func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

// tripWhere is the condition selecting the trips of f, paging aside.
func tripWhere(f store.TripFilter, p *params) string {
	w := []string{"org = " + p.add(f.Org), "env = " + p.add(f.Env)}
	if f.VehicleID != "" {
		w = append(w, "vehicle_id = "+p.add(f.VehicleID))
	}
	if f.DriverID != "" {
		w = append(w, "driver_id = "+p.add(f.DriverID))
	}
	if len(f.Statuses) > 0 {
		w = append(w, "status = ANY("+p.add(f.Statuses)+"::text[])")
	}
	if !f.StartAfter.IsZero() {
		w = append(w, "start_time > "+p.add(f.StartAfter.UnixMilli()))
	}
	if !f.StartBefore.IsZero() {
		w = append(w, "start_time < "+p.add(f.StartBefore.UnixMilli()))
	}
	return strings.Join(w, " AND ")
}

// ListTrips lists the trips of f by keyset: ordered by the sort column then
// id, strictly after f.After or strictly before f.Before in that order.
// Before pages are read backwards and returned in listing order.
func (s *Store) ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error) {
	var p params
	where := tripWhere(f, &p)
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
		v := any(ks.Value)
		if isTime {
			v = int64(ks.Value)
		}
		// A row comparison: both keys go the same way, and it can use
		// trips_scope_start.
		where += fmt.Sprintf(" AND (%s, id) %s (%s, %s)", col, op, p.add(v), p.add(ks.ID))
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
	rows, err := s.pool.Query(ctx, q, p...)
	if err != nil {
		return nil, wrap("list trips", err)
	}
	defer rows.Close()
	out := []store.Trip{}
	for rows.Next() {
		t, err := scanTrip(rows)
		if err != nil {
			return nil, wrap("list trips", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list trips", err)
	}
	if backwards {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// SummarizeTrips aggregates the trips matching f, ignoring its sort and
// paging. Active counts active and paused trips.
func (s *Store) SummarizeTrips(ctx context.Context, f store.TripFilter) (store.TripSummary, error) {
	var p params
	where := tripWhere(f, &p)
	var sum store.TripSummary
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(distance_km), 0), COALESCE(SUM(duration_minutes), 0),
		COALESCE(AVG(safety_score), 0), COALESCE(AVG(eco_score), 0),
		COUNT(*) FILTER (WHERE status IN ('active', 'paused')), COUNT(*) FILTER (WHERE status = 'completed')
		FROM trips WHERE `+where, p...).
		Scan(&sum.Count, &sum.TotalDistanceKm, &sum.TotalDurationMin, &sum.AvgSafetyScore, &sum.AvgEcoScore, &sum.Active, &sum.Completed)
	if err != nil {
		return store.TripSummary{}, wrap("summarize trips", err)
	}
	return sum, nil
}

// ActiveTripStats counts open (active or paused) trips in sc (the zero
// Scope: every scope), the organizations they belong to, and their mean
// age at now in minutes.
func (s *Store) ActiveTripStats(ctx context.Context, sc store.Scope, now time.Time) (total, orgs int, avgMinutes float64, err error) {
	err = s.pool.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT org), COALESCE(AVG(($1::bigint - start_time) / 60000.0::float8), 0)
		FROM trips WHERE status IN ('active', 'paused') AND ($2 = '' OR org = $2) AND ($3 = '' OR env = $3)`,
		now.UnixMilli(), sc.Org, sc.Env).Scan(&total, &orgs, &avgMinutes)
	if err != nil {
		return 0, 0, 0, wrap("active trip stats", err)
	}
	return total, orgs, avgMinutes, nil
}
