// Package trips is the trip domain: the lifecycle (start, pause, resume,
// stop), location upload with safety-event detection and running
// analytics, metadata, listing and route data.
//
// Uploads to one trip are serialized by a per-trip tracker kept in an LRU
// cache: it holds the trip row, the detector state and the set of stored
// timestamps. Every write compares the trip's version, so two nodes
// uploading to one trip never lose an update: the loser reloads and
// retries. Points are stored as compact blocks (one row per upload) in the
// same transaction as the trip's new analytics, before the response.
package trips

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/store"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Errors of the service; api maps them to codes.
var (
	ErrNotFound      = errors.New("trips: trip not found")
	ErrAlreadyActive = errors.New("trips: vehicle already has an active trip")
)

// TransitionError is a move the trip's state does not allow.
type TransitionError struct {
	TripID, From, Action string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("trips: cannot %s trip %s while it is %s", e.Action, e.TripID, e.From)
}

// ValidationError is bad input; Fields maps a field path to a message.
type ValidationError struct {
	Code   string // validation_failed or invalid_location
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "trips: invalid input" }

// Store is what the service needs of the store.
type Store interface {
	CreateTrip(ctx context.Context, t store.Trip) error
	GetTrip(ctx context.Context, s store.Scope, id string) (store.Trip, error)
	UpdateTrip(ctx context.Context, t store.Trip, prev int64) error
	AppendPoints(ctx context.Context, t store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent, replace bool) error
	ReadPoints(ctx context.Context, s store.Scope, tripID string) ([]store.PointBlock, error)
	TripEvents(ctx context.Context, s store.Scope, tripID string) ([]store.TripEvent, error)
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
	SummarizeTrips(ctx context.Context, f store.TripFilter) (store.TripSummary, error)
}

// Publisher puts messages on the bus.
type Publisher interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}

// Thresholds finds the detection settings for a device of a scope; ok is
// false when the device has none.
type Thresholds interface {
	DetectThresholds(ctx context.Context, s store.Scope, deviceID string) (t detect.Thresholds, ok bool, err error)
}

// Config of the service.
type Config struct {
	// DefaultSpeedLimitKmh is the organization default limit used for
	// speeding when no better limit is known (default 100).
	DefaultSpeedLimitKmh float64
	// ReorderWindow bounds how late a point may arrive behind the newest
	// stored point and still be analysed in order (default 10 min).
	ReorderWindow time.Duration
	// MaxFuture rejects points further ahead of the server clock
	// (default 5 min).
	MaxFuture time.Duration
	// Trackers is how many trips keep detector state in memory
	// (default 4096).
	Trackers int
	Vehicle  analytics.Vehicle
	// Topics.
	EventsTopic, LocationsTopic string
}

// Service is the trip domain service.
type Service struct {
	cfg    Config
	store  Store
	pub    Publisher
	thr    Thresholds
	log    *slog.Logger
	now    func() time.Time
	tracks *lru.Cache[string, *tracker]
	newMu  sync.Mutex // serializes tracker creation
}

// New makes the service. pub and thr may be nil.
func New(cfg Config, st Store, pub Publisher, thr Thresholds, log *slog.Logger) (*Service, error) {
	if cfg.DefaultSpeedLimitKmh == 0 {
		cfg.DefaultSpeedLimitKmh = 100
	}
	if cfg.ReorderWindow == 0 {
		cfg.ReorderWindow = 10 * time.Minute
	}
	if cfg.MaxFuture == 0 {
		cfg.MaxFuture = 5 * time.Minute
	}
	if cfg.Trackers == 0 {
		cfg.Trackers = 4096
	}
	if cfg.EventsTopic == "" {
		cfg.EventsTopic = hub.TopicEvents
	}
	if cfg.LocationsTopic == "" {
		cfg.LocationsTopic = hub.TopicLocations
	}
	c, err := lru.New[string, *tracker](cfg.Trackers)
	if err != nil {
		return nil, fmt.Errorf("trips: tracker cache: %w", err)
	}
	return &Service{cfg: cfg, store: st, pub: pub, thr: thr, log: log, now: time.Now, tracks: c}, nil
}

// state is the running state kept in the trip row.
type state struct {
	Running      analytics.Running `json:"running"`
	PausedAt     int64             `json:"paused_at,omitempty"`
	PauseLoc     *Location         `json:"pause_location,omitempty"`
	PauseCount   int               `json:"pause_count"`
	TotalPauseMS int64             `json:"total_pause_ms"`
	Pauses       [][2]int64        `json:"pauses,omitempty"`
	ResumedAt    int64             `json:"resumed_at,omitempty"`
	FirstTS      int64             `json:"first_ts,omitempty"`
	LastTS       int64             `json:"last_ts,omitempty"`
	Last         *Point            `json:"last,omitempty"`
	Blocks       int64             `json:"blocks"`
	Seq          int64             `json:"seq"`
	Harsh        HarshEvents       `json:"harsh"`
	Events       int               `json:"events"`
	DeviceID     string            `json:"device_id,omitempty"`
}

func decodeState(b []byte) (state, error) {
	var st state
	if len(b) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("trips: state: %w", err)
	}
	return st, nil
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func scope(org, env string) store.Scope { return store.Scope{Org: org, Env: env} }

func (s *Service) get(ctx context.Context, sc store.Scope, id string) (store.Trip, state, error) {
	t, err := s.store.GetTrip(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return t, state{}, ErrNotFound
	}
	if err != nil {
		return t, state{}, err
	}
	st, err := decodeState(t.State)
	return t, st, err
}

func locPtr(p *store.Place) *Location {
	if p == nil {
		return nil
	}
	return &Location{Latitude: p.Latitude, Longitude: p.Longitude, Address: p.Address}
}

func placePtr(l *Location) *store.Place {
	if l == nil {
		return nil
	}
	return &store.Place{Latitude: l.Latitude, Longitude: l.Longitude, Address: l.Address}
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func round(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// analyticsOf builds the full analytics of a trip's state.
func (s *Service) analyticsOf(st *state) Analytics {
	sum := st.Running.Summary(s.cfg.Vehicle)
	return Analytics{
		DistanceKm: round(sum.DistanceKm, 3), DurationMinutes: round(sum.DurationMinutes, 2),
		MaxSpeedKmh: round(sum.MaxSpeedKmh, 1), AvgSpeedKmh: round(sum.AvgSpeedKmh, 1), IdleTimeMinutes: round(sum.IdleTimeMinutes, 2),
		LocationsCount: sum.LocationsCount, EventsCount: sum.EventsCount,
		SafetyScore: round(sum.SafetyScore, 1), EcoScore: round(sum.EcoScore, 1),
		HarshEvents: HarshEvents{HarshAcceleration: sum.HarshAcceleration, HarshBraking: sum.HarshBraking,
			HarshCornering: sum.HarshCornering, Speeding: sum.Speeding},
		FuelEfficiency: FuelEfficiency{FuelConsumedLiters: round(sum.FuelConsumedLiters, 3), FuelEfficiencyKmpl: round(sum.FuelEfficiencyKmpl, 2)},
	}
}

func totalsOf(a Analytics) store.TripTotals {
	return store.TripTotals{DistanceKm: a.DistanceKm, DurationMinutes: a.DurationMinutes, AvgSpeedKmh: a.AvgSpeedKmh,
		MaxSpeedKmh: a.MaxSpeedKmh, SafetyScore: a.SafetyScore, EcoScore: a.EcoScore, EventsCount: a.EventsCount, LocationsCount: a.LocationsCount}
}

func metadataMap(b []byte) map[string]any {
	m := map[string]any{}
	if len(b) > 0 {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// View renders the full trip resource.
func (s *Service) view(t store.Trip, st *state) Trip {
	v := Trip{TripID: t.ID, OrganizationID: t.Org, VehicleID: t.VehicleID, DriverID: t.DriverID, Status: t.Status,
		StartTime: t.StartTime, EndTime: timePtr(t.EndTime), StartLocation: locPtr(t.StartLocation), EndLocation: locPtr(t.EndLocation),
		Metadata: metadataMap(t.Metadata), Analytics: s.analyticsOf(st), PauseCount: st.PauseCount,
		TotalPauseDuration: round(float64(st.TotalPauseMS)/1000, 1), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if st.PausedAt != 0 {
		pt := time.UnixMilli(st.PausedAt).UTC()
		v.PausedAt = &pt
	}
	return v
}

// StartRequest starts a trip.
type StartRequest struct {
	VehicleID     string         `json:"vehicle_id" required:"true"`
	DriverID      string         `json:"driver_id,omitempty"`
	StartLocation *Location      `json:"start_location,omitempty"`
	StartTime     *time.Time     `json:"start_time,omitempty" doc:"default now"`
	Metadata      map[string]any `json:"metadata,omitempty"`
}

// Start creates an active trip.
func (s *Service) Start(ctx context.Context, org, env, actor string, r StartRequest) (Trip, error) {
	bad := map[string]string{}
	if r.VehicleID == "" {
		bad["vehicle_id"] = "is required"
	} else if len(r.VehicleID) > 200 {
		bad["vehicle_id"] = "must be at most 200 characters"
	}
	if len(r.DriverID) > 200 {
		bad["driver_id"] = "must be at most 200 characters"
	}
	checkLocation(bad, "start_location", r.StartLocation)
	now := s.now().UTC().Truncate(time.Millisecond)
	start := now
	if r.StartTime != nil {
		start = r.StartTime.UTC().Truncate(time.Millisecond)
		if start.After(now.Add(s.cfg.MaxFuture)) {
			bad["start_time"] = "must not be in the future"
		}
	}
	md, err := metadataJSON(r.Metadata, actor, now, nil)
	if err != nil {
		bad["metadata"] = err.Error()
	}
	if len(bad) > 0 {
		return Trip{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	sc := scope(org, env)
	st := state{Running: analytics.Running{}}
	st.Seq = s.vehicleSeq(ctx, sc, r.VehicleID) + 1 // trip_started
	t := store.Trip{ID: newID("trip_"), Org: org, Env: env, VehicleID: r.VehicleID, DriverID: r.DriverID, Status: store.TripActive,
		StartTime: start, StartLocation: placePtr(r.StartLocation), Metadata: md, MetadataHistory: []byte("[]"),
		Version: 1, CreatedAt: now, UpdatedAt: now}
	a := s.analyticsOf(&st)
	t.Totals = totalsOf(a)
	if t.State, err = json.Marshal(st); err != nil {
		return Trip{}, err
	}
	if err := s.store.CreateTrip(ctx, t); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Trip{}, ErrAlreadyActive
		}
		return Trip{}, err
	}
	s.lifecycleEvent(ctx, t, &st, "trip_started", now, r.StartLocation, map[string]any{"start_time": start})
	return s.view(t, &st), nil
}

// vehicleSeq continues the per-vehicle event sequence from the
// vehicle's previous trip.
func (s *Service) vehicleSeq(ctx context.Context, sc store.Scope, vehicle string) int64 {
	prev, err := s.store.ListTrips(ctx, store.TripFilter{Scope: sc, VehicleID: vehicle, Sort: "start_time", Desc: true, Limit: 1})
	if err != nil || len(prev) == 0 {
		return 0
	}
	st, err := decodeState(prev[0].State)
	if err != nil {
		return 0
	}
	return st.Seq
}

// Get returns one trip.
func (s *Service) Get(ctx context.Context, org, env, id string) (Trip, error) {
	t, st, err := s.get(ctx, scope(org, env), id)
	if err != nil {
		return Trip{}, err
	}
	return s.view(t, &st), nil
}

// update applies f to a fresh copy of the trip under the tracker lock and
// writes it (with the events f returns); it retries when another writer
// got there first.
func (s *Service) update(ctx context.Context, sc store.Scope, id string, f func(t *store.Trip, st *state) error) (store.Trip, state, error) {
	return s.updateWith(ctx, sc, id, func(t *store.Trip, st *state, _ *tracker) ([]store.TripEvent, error) { return nil, f(t, st) })
}

func (s *Service) updateWith(ctx context.Context, sc store.Scope, id string, f func(t *store.Trip, st *state, tr *tracker) ([]store.TripEvent, error)) (store.Trip, state, error) {
	tr := s.tracker(id)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for attempt := 0; ; attempt++ {
		t, st, err := s.get(ctx, sc, id)
		if err != nil {
			return t, st, err
		}
		if tr.loaded && tr.trip.Version != t.Version {
			tr.invalidate()
		}
		prev := t.Version
		events, err := f(&t, &st, tr)
		if err != nil {
			return t, st, err
		}
		t.Version = prev + 1
		t.UpdatedAt = s.now().UTC().Truncate(time.Millisecond)
		t.Totals = totalsOf(s.analyticsOf(&st))
		if t.State, err = json.Marshal(st); err != nil {
			return t, st, err
		}
		if len(events) > 0 {
			err = s.store.AppendPoints(ctx, t, prev, nil, events, false)
		} else {
			err = s.store.UpdateTrip(ctx, t, prev)
		}
		tr.invalidate()
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			continue
		}
		return t, st, err
	}
}

// PauseRequest pauses a trip.
type PauseRequest struct {
	Reason   string    `json:"reason,omitempty"`
	Location *Location `json:"location,omitempty"`
}

// Pause moves an active trip to paused.
func (s *Service) Pause(ctx context.Context, org, env, id string, r PauseRequest) (PauseResult, error) {
	bad := map[string]string{}
	checkLocation(bad, "location", r.Location)
	if len(r.Reason) > 500 {
		bad["reason"] = "must be at most 500 characters"
	}
	if len(bad) > 0 {
		return PauseResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	t, st, err := s.update(ctx, scope(org, env), id, func(t *store.Trip, st *state) error {
		if t.Status != store.TripActive {
			return &TransitionError{TripID: t.ID, From: t.Status, Action: "pause"}
		}
		t.Status = store.TripPaused
		st.PausedAt = now.UnixMilli()
		st.PauseLoc = r.Location
		if st.PauseLoc == nil && st.Last != nil {
			st.PauseLoc = &Location{Latitude: st.Last.Lat, Longitude: st.Last.Lon}
		}
		st.PauseCount++
		st.Seq++ // trip_paused
		return nil
	})
	if err != nil {
		return PauseResult{}, err
	}
	s.lifecycleEvent(ctx, t, &st, "trip_paused", now, st.PauseLoc, map[string]any{"reason": r.Reason, "pause_count": st.PauseCount})
	return PauseResult{Success: true, TripID: t.ID, Status: t.Status, PausedAt: now, PauseCount: st.PauseCount, Reason: r.Reason,
		Location: st.PauseLoc, Message: "Trip paused; tracking and analytics are suspended until it is resumed"}, nil
}

// closePause ends the open pause at end; lock held.
func closePause(st *state, end time.Time) {
	if st.PausedAt == 0 {
		return
	}
	from := st.PausedAt
	to := end.UnixMilli()
	if to < from {
		to = from
	}
	st.TotalPauseMS += to - from
	st.Pauses = append(st.Pauses, [2]int64{from, to})
	st.Running.Pause(time.UnixMilli(from), time.UnixMilli(to))
	st.PausedAt = 0
}

// ResumeRequest resumes a paused trip.
type ResumeRequest struct {
	Location *Location      `json:"location,omitempty" doc:"defaults to the last known position when absent"`
	Reason   string         `json:"reason,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Resume moves a paused trip back to active.
func (s *Service) Resume(ctx context.Context, org, env, id string, r ResumeRequest) (ResumeResult, error) {
	bad := map[string]string{}
	checkLocation(bad, "location", r.Location)
	if len(r.Reason) > 500 {
		bad["reason"] = "must be at most 500 characters"
	}
	if len(bad) > 0 {
		return ResumeResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	var fromPause float64
	var resumeLoc *Location
	t, st, err := s.update(ctx, scope(org, env), id, func(t *store.Trip, st *state) error {
		if t.Status != store.TripPaused {
			return &TransitionError{TripID: t.ID, From: t.Status, Action: "resume"}
		}
		resumeLoc = r.Location
		if resumeLoc == nil {
			resumeLoc = st.PauseLoc
		}
		if resumeLoc != nil && st.PauseLoc != nil {
			fromPause = round(geo.Distance(geo.Point{Lat: st.PauseLoc.Latitude, Lon: st.PauseLoc.Longitude}, geo.Point{Lat: resumeLoc.Latitude, Lon: resumeLoc.Longitude})/1000, 3)
		}
		closePause(st, now)
		st.ResumedAt = now.UnixMilli()
		st.PauseLoc = nil
		t.Status = store.TripActive
		st.Seq++ // trip_resumed
		return nil
	})
	if err != nil {
		return ResumeResult{}, err
	}
	data := map[string]any{"reason": r.Reason, "pause_count": st.PauseCount, "total_pause_duration": float64(st.TotalPauseMS) / 1000}
	if len(r.Metadata) > 0 {
		data["metadata"] = r.Metadata
	}
	s.lifecycleEvent(ctx, t, &st, "trip_resumed", now, resumeLoc, data)
	return ResumeResult{Success: true, TripID: t.ID, Status: t.Status, ResumedAt: now, TotalPauseDuration: round(float64(st.TotalPauseMS)/1000, 1),
		PauseCount: st.PauseCount, ResumeLocation: resumeLoc, DistanceFromPause: fromPause,
		Message: fmt.Sprintf("Trip resumed after %d pause(s); tracking and analytics restarted", st.PauseCount)}, nil
}

// StopRequest stops a trip.
type StopRequest struct {
	EndLocation      *Location `json:"end_location,omitempty"`
	OdometerReading  *int64    `json:"odometer_reading,omitempty"`
	FuelLevelPercent *float64  `json:"fuel_level_percent,omitempty"`
	CompletionStatus string    `json:"completion_status,omitempty" enum:"completed,cancelled,interrupted" doc:"default completed"`
}

// Stop ends a trip, finalizing its analytics.
func (s *Service) Stop(ctx context.Context, org, env, id string, r StopRequest) (StopResult, error) {
	bad := map[string]string{}
	checkLocation(bad, "end_location", r.EndLocation)
	switch r.CompletionStatus {
	case "", store.TripCompleted, store.TripCancelled, store.TripInterrupted:
	default:
		bad["completion_status"] = "must be completed, cancelled or interrupted"
	}
	if r.FuelLevelPercent != nil && (*r.FuelLevelPercent < 0 || *r.FuelLevelPercent > 100 || math.IsNaN(*r.FuelLevelPercent)) {
		bad["fuel_level_percent"] = "must be between 0 and 100"
	}
	if r.OdometerReading != nil && *r.OdometerReading < 0 {
		bad["odometer_reading"] = "must not be negative"
	}
	if len(bad) > 0 {
		return StopResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	status := r.CompletionStatus
	if status == "" {
		status = store.TripCompleted
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	sc := scope(org, env)
	var flushed []detect.Event
	var flushedIDs []string
	var seqBase int64
	t, st, err := s.updateWith(ctx, sc, id, func(t *store.Trip, st *state, tr *tracker) ([]store.TripEvent, error) {
		flushed, flushedIDs = nil, nil
		if t.Status != store.TripActive && t.Status != store.TripPaused {
			return nil, &TransitionError{TripID: t.ID, From: t.Status, Action: "stop"}
		}
		// close the episodes still open (a speeding or idle stretch
		// running at the end of the trip)
		if !tr.loaded {
			if err := s.load(ctx, tr, sc, t.ID, ""); err != nil {
				return nil, err
			}
		}
		var recs []store.TripEvent
		seqBase = st.Seq
		for _, e := range tr.det.Flush(nil) {
			st.Running.AddEvent(e)
			eid := eventID(t.ID, e)
			flushed, flushedIDs = append(flushed, e), append(flushedIDs, eid)
			st.Seq++
			data, err := json.Marshal(storedEvent{Event: e, ID: eid})
			if err != nil {
				return nil, err
			}
			recs = append(recs, store.TripEvent{ID: eid, TripID: t.ID, Type: e.Type, Time: e.Start.UTC(), Data: data})
		}
		closePause(st, now)
		t.Status = status
		t.EndTime = now
		if r.EndLocation != nil {
			t.EndLocation = placePtr(r.EndLocation)
		} else if st.Last != nil {
			t.EndLocation = &store.Place{Latitude: st.Last.Lat, Longitude: st.Last.Lon}
		}
		st.Seq++ // trip_completed, _cancelled or _interrupted
		return recs, nil
	})
	if err != nil {
		return StopResult{}, err
	}
	if len(flushed) > 0 {
		s.publishUpload(ctx, t, nil, flushed, flushedIDs, seqBase)
	}
	a := s.analyticsOf(&st)
	typ := "trip_completed"
	if status != store.TripCompleted {
		typ = "trip_" + status
	}
	s.lifecycleEvent(ctx, t, &st, typ, now, locPtr(t.EndLocation), map[string]any{"completion_status": status, "distance_km": a.DistanceKm,
		"duration_minutes": a.DurationMinutes, "safety_score": a.SafetyScore, "eco_score": a.EcoScore})
	return StopResult{TripID: t.ID, OrganizationID: t.Org, VehicleID: t.VehicleID, DriverID: t.DriverID, Status: t.Status,
		StartTime: t.StartTime, EndTime: t.EndTime, StartLocation: locPtr(t.StartLocation), EndLocation: locPtr(t.EndLocation),
		Analytics: a, OdometerKm: r.OdometerReading, FuelLevel: r.FuelLevelPercent, UpdatedAt: t.UpdatedAt}, nil
}

func checkLocation(bad map[string]string, field string, l *Location) {
	if l == nil {
		return
	}
	if math.IsNaN(l.Latitude) || l.Latitude < -90 || l.Latitude > 90 {
		bad[field+".latitude"] = "must be between -90 and 90"
	}
	if math.IsNaN(l.Longitude) || l.Longitude < -180 || l.Longitude > 180 {
		bad[field+".longitude"] = "must be between -180 and 180"
	}
	if len(l.Address) > 500 {
		bad[field+".address"] = "must be at most 500 characters"
	}
}

// sortPoints orders points by timestamp, stable.
func sortPoints(p []Point) { sort.SliceStable(p, func(i, j int) bool { return p[i].TS < p[j].TS }) }
