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
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/store"
	gojson "github.com/goccy/go-json"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Errors of the service; api maps them to codes.
var (
	ErrNotFound      = errors.New("trips: trip not found")
	ErrAlreadyActive = errors.New("trips: vehicle already has an active trip")
)

// ErrInsufficientData is a trip without enough points for the analysis.
var ErrInsufficientData = fmt.Errorf("%w: not enough location data", ErrNotFound)

// AlreadyActiveError is ErrAlreadyActive naming the vehicle's open
// trip, so that the client can resume or stop it.
type AlreadyActiveError struct {
	VehicleID, TripID, Status string
}

func (e *AlreadyActiveError) Error() string {
	return fmt.Sprintf("trips: vehicle %s already has the %s trip %s", e.VehicleID, e.Status, e.TripID)
}
func (e *AlreadyActiveError) Unwrap() error { return ErrAlreadyActive }

// ShortDataError is a trip of the scope that has too few points, or
// too short a span, for an analysis: ErrInsufficientData with what it
// lacks, so that the answer says why, not only that no data was found.
type ShortDataError struct {
	// Message says what the analysis needs and what the trip has.
	Message string
	// Fields names each figure that falls short (locations_count,
	// duration_minutes) with the trip's value and the minimum.
	Fields map[string]string
}

func (e *ShortDataError) Error() string { return "trips: " + e.Message }
func (e *ShortDataError) Unwrap() error { return ErrInsufficientData }

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

// Publisher puts a trip's points and events on the bus (a
// *publish.Publisher): all of a call or none and an error.
type Publisher interface {
	Publish(ctx context.Context, org, env string, evs ...*event.Event) error
	PublishPoints(ctx context.Context, org, env string, pts []event.Point, evs ...*event.Event) error
}

// Thresholds finds the detection settings for a device of a scope; ok is
// false when the device has none.
type Thresholds interface {
	DetectThresholds(ctx context.Context, s store.Scope, deviceID string) (t detect.Thresholds, ok bool, err error)
}

// SpeedCounter counts the speeds the trips were driven on the roads
// (roadspeed.Table, roadspeed.Shared).
type SpeedCounter interface {
	Observe(org string, edge int, backward bool, at time.Time, kmh float64)
	Stats() (cells int, refused int64)
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
	// Trackers is how many trips keep their analysis state in memory
	// between uploads (default DefaultActiveTrips); a trip beyond it is
	// read back from the store, its points included, at its next upload.
	Trackers int
	// Vehicle is the default fuel model, of a vehicle without a profile
	// (zero fields: analytics' defaults, 8 L/100 km).
	Vehicle analytics.Vehicle
	// Profiles reads the vehicles' profiles for their fuel model, tank
	// and odometer unit (nil: every trip uses Vehicle).
	Profiles Profiles
	// Now is the clock that times pauses and stamps lifecycle changes
	// (default time.Now).
	Now func() time.Time
	// ThresholdsRefresh is how long a trip in progress keeps the
	// detection thresholds it read before reading its device's settings
	// again (default 1 s): new settings reach it within that time.
	ThresholdsRefresh time.Duration
	// Roads matches the trips' points to the road network (--osm); a
	// point matched to a road is judged for speeding by that road's
	// limit. Nil: no road network, every point is judged by the
	// configured limit.
	Roads *mapmatch.Matcher
	// Speeds, when not nil, counts the speed of every point the road
	// matcher placed on a road, per organization, road edge, direction
	// and hour of the week (the route optimizer's real_time_traffic).
	Speeds SpeedCounter
	// Router, when not nil, finds the alternative routes of a trip's
	// route data on the road network.
	Router Router
	// MatchWorkers is how many goroutines match the trips' points
	// beside the upload path, each for its share of the trips (default
	// GOMAXPROCS); RunRoads runs them.
	MatchWorkers int
	// MatchQueue is how many points may wait for a worker's matching
	// (default 50,000 per worker); points beyond it are judged without a
	// road (match none).
	MatchQueue int
	// MatchTrips is how many trips the road matcher keeps a trace of
	// (default DefaultActiveTrips, shared by the workers): a trip judged least
	// recently is forgotten past it, its points in the window decided
	// then and its speeding episode closed, and its next points start
	// a new trace.
	MatchTrips int
	// Summaries records the speeding episodes of devices whose speeding
	// alerts are a daily summary (digest.Summaries); nil: they are
	// dropped.
	Summaries Summaries
}

// Service is the trip domain service.
type Service struct {
	cfg   Config
	store Store
	pub   Publisher
	// pubFailing is set while publishes fail, so the bus's outage is
	// logged once (by published), not once per upload
	pubFailing atomic.Bool
	// storeFailing is set while storing points fails with the store
	// unavailable, and cleared by the next stored upload
	storeFailing atomic.Bool
	thr          Thresholds
	log          *slog.Logger
	now          func() time.Time
	tracks       *lru.Cache[string, *tracker]
	newMu        sync.Mutex   // serializes tracker creation
	roads        *roadMatcher // nil without Config.Roads
	speeds       SpeedCounter
	router       Router
	roadMet      *roadMetrics
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
	if cfg.Trackers <= 0 {
		cfg.Trackers = DefaultActiveTrips
	}
	if cfg.MatchWorkers <= 0 {
		cfg.MatchWorkers = runtime.GOMAXPROCS(0)
	}
	if cfg.MatchQueue <= 0 {
		cfg.MatchQueue = defaultMatchQueue
	}
	if cfg.MatchTrips <= 0 {
		cfg.MatchTrips = DefaultActiveTrips
	}
	if cfg.ThresholdsRefresh <= 0 {
		cfg.ThresholdsRefresh = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, err := lru.New[string, *tracker](cfg.Trackers)
	if err != nil {
		return nil, fmt.Errorf("trips: tracker cache: %w", err)
	}
	s := &Service{cfg: cfg, store: st, pub: pub, thr: thr, log: log, now: cfg.Now, tracks: c, roadMet: newRoadMetrics()}
	if cfg.Roads != nil {
		s.speeds = cfg.Speeds
		s.router = cfg.Router
		if s.roads, err = newRoadMatcher(cfg.Roads, cfg.MatchWorkers, cfg.MatchQueue, cfg.MatchTrips, s.roadMet); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// state is the running state kept in the trip row.
type state struct {
	Running      analytics.Running `json:"running"`
	PausedAt     int64             `json:"paused_at,omitempty"`
	PauseLoc     *Location         `json:"pause_location,omitempty"`
	PauseCount   int               `json:"pause_count"`
	TotalPauseMS int64             `json:"total_pause_ms"`
	Pauses       [][2]int64        `json:"pauses,omitempty"`
	LastTS       int64             `json:"last_ts,omitempty"`
	Last         *Point            `json:"last,omitempty"`
	Blocks       int64             `json:"blocks"`
	Seq          int64             `json:"seq"`
	DeviceID     string            `json:"device_id,omitempty"`
	Device       *DeviceRecord     `json:"device,omitempty"`
	// the readings the stop gave, as given
	Odometer  *int64   `json:"odometer,omitempty"`
	FuelLevel *float64 `json:"fuel_level,omitempty"`
	// the readings the trip started with: the vehicle's previous trip's
	// stop readings (fuel.go)
	StartOdometer  *int64   `json:"start_odometer,omitempty"`
	StartFuelLevel *float64 `json:"start_fuel_level,omitempty"`
	// Profile is the vehicle's profile as the start read it, and the
	// stop again; nil: none, the default model
	Profile *fuelProfile `json:"profile,omitempty"`
	// Roads is what the road matcher made of the points, as last
	// stored; nil without a road network or before the first
	Roads *RoadStats `json:"roads,omitempty"`
}

// encodeState is st as stored with its trip.
func encodeState(st *state) ([]byte, error) {
	b, err := gojson.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("trips: state: %w", err)
	}
	return b, nil
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
	return &Location{Latitude: p.Latitude, Longitude: p.Longitude, Address: optional(p.Address)}
}

func placePtr(l *Location) *store.Place {
	if l == nil {
		return nil
	}
	return &store.Place{Latitude: l.Latitude, Longitude: l.Longitude, Address: l.addressOf()}
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
	if math.IsInf(v*p, 0) {
		return v // far beyond 2^53: no fraction left to round
	}
	return math.Round(v*p) / p
}

// analyticsOf builds the full analytics of a trip's state.
func (s *Service) analyticsOf(st *state) Analytics {
	f := s.figuresOf(st)
	sum := f.sum
	a := Analytics{
		DistanceKm: round(sum.DistanceKm, 3), GPSDistanceKm: round(f.gpsKm, 3), DistanceSource: f.distanceSource,
		DurationMinutes: round(sum.DurationMinutes, 2),
		MaxSpeedKmh:     maxSpeedOf(sum.SpeedMeasured, sum.MaxSpeedKmh), AvgSpeedKmh: avgSpeedOf(sum.LocationsCount, sum.DurationMinutes, sum.AvgSpeedKmh),
		IdleTimeMinutes: round(sum.IdleTimeMinutes, 2),
		LocationsCount:  sum.LocationsCount, EventsCount: sum.EventsCount,
		SafetyScore: scoreOf(sum.LocationsCount, sum.SafetyScore), EcoScore: scoreOf(sum.LocationsCount, sum.EcoScore),
		stored: storedScores{safety: round(sum.SafetyScore, 1), eco: round(sum.EcoScore, 1)},
		HarshEvents: HarshEvents{HarshAcceleration: sum.HarshAcceleration, HarshBraking: sum.HarshBraking,
			HarshCornering: sum.HarshCornering, Speeding: sum.Speeding},
		FuelEfficiency: FuelEfficiency{FuelConsumedLiters: round(sum.FuelConsumedLiters, 3), FuelEfficiencyKmpl: kmplOf(sum.FuelConsumedLiters, sum.FuelEfficiencyKmpl),
			FuelModel: f.model, FuelSource: f.fuelSource},
	}
	if f.odometerKm != nil {
		km := round(*f.odometerKm, 3)
		a.OdometerDistanceKm = &km
	}
	if p := st.Profile; p != nil {
		a.FuelEfficiency.FuelType = p.FuelType
		if p.FuelType == "electric" && (p.KWhPer100Km > 0 || f.fuelSource == FuelFromLevels) {
			kwh := round(sum.EnergyConsumedKWh, 3)
			a.FuelEfficiency.EnergyConsumedKWh = &kwh
		}
	}
	return a
}

// noMaxSpeed is the max_speed_kmh column of a trip that measured no
// speed; the listing shows it as null. Rows written before it hold 0.
const noMaxSpeed = -1

func maxSpeedColumn(v *float64) float64 {
	if v == nil {
		return noMaxSpeed
	}
	return *v
}

// listedMaxSpeed is the listing's max_speed_kmh of a trip whose column
// holds v, with n locations.
func listedMaxSpeed(n int, v float64) *float64 {
	if v < 0 {
		return nil
	}
	return scoreOf(n, v)
}

// orZero is *p, 0 for nil: a trip without locations keeps 0 in the
// store's columns, which the answers show as null.
func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// scoreOf is a score or a speed rounded for the answer, or nil for a
// trip without any location (n): it has driven nothing, and the 100 its
// empty summary holds would state a perfect drive that was never
// measured, as its 0 km/h would state a vehicle seen standing.
// avgSpeedOf is the average speed v of a trip with n accepted locations
// spanning durMin minutes: null while they span no time (none, or a
// single point), where distance over duration is no speed at all.
func avgSpeedOf(n int, durMin, v float64) *float64 {
	if !(durMin > 0) {
		return nil
	}
	return scoreOf(n, v)
}

// maxSpeedOf is the maximum speed v of a trip, rounded for the answer;
// nil unless measured: no point reported a speed and none were far
// enough apart to give one (a single point without speed_kmh), where
// 0 km/h would state a vehicle seen standing.
func maxSpeedOf(measured bool, v float64) *float64 {
	if !measured {
		return nil
	}
	r := round(v, 1)
	return &r
}

// kmplOf is the fuel efficiency k of a trip that burnt liters of fuel,
// rounded for the answer; nil while it burnt none.
func kmplOf(liters, k float64) *float64 {
	if !(liters > 0) {
		return nil
	}
	r := round(k, 2)
	return &r
}

func scoreOf(n int, v float64) *float64 {
	if n == 0 {
		return nil
	}
	r := round(v, 1)
	return &r
}

// totalsOf are the stored columns of a. The max_speed_kmh column holds
// noMaxSpeed while no speed was measured. The score columns hold the
// summary's scores, shown ones or not: the store averages and filters
// them over trips with locations only (store.TripSummary,
// TripFilter.WithPoints) and sorts the others below every score.
func totalsOf(a Analytics) store.TripTotals {
	return store.TripTotals{DistanceKm: a.DistanceKm, DurationMinutes: a.DurationMinutes, AvgSpeedKmh: orZero(a.AvgSpeedKmh),
		MaxSpeedKmh: maxSpeedColumn(a.MaxSpeedKmh), SafetyScore: a.stored.safety, EcoScore: a.stored.eco, EventsCount: a.EventsCount, LocationsCount: a.LocationsCount}
}

// metadataMap decodes a trip's stored metadata; what cannot be read is
// logged and shown as none.
func (s *Service) metadataMap(tripID string, b []byte) map[string]any {
	m := map[string]any{}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			s.log.Warn("trip metadata unreadable; shown as none", "trip_id", tripID, "error", err)
			return map[string]any{}
		}
	}
	return m
}

// View renders the full trip resource.
func (s *Service) view(t store.Trip, st *state) Trip {
	v := Trip{TripID: t.ID, OrganizationID: t.Org, VehicleID: t.VehicleID, DriverID: optional(t.DriverID), Status: t.Status,
		StartTime: t.StartTime, EndTime: timePtr(t.EndTime), StartLocation: locPtr(t.StartLocation), EndLocation: locPtr(t.EndLocation),
		Metadata: s.metadataMap(t.ID, t.Metadata), Analytics: s.analyticsOf(st), PauseCount: st.PauseCount,
		TotalPauseDuration: round(float64(st.TotalPauseMS)/1000, 1), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if st.PausedAt != 0 {
		pt := time.UnixMilli(st.PausedAt).UTC()
		v.PausedAt = &pt
	}
	v.OdometerReading, v.FuelLevelPercent, v.DeviceInfo = st.Odometer, st.FuelLevel, st.Device
	v.StartOdometerReading, v.StartFuelLevelPercent = st.StartOdometer, st.StartFuelLevel
	return v
}

// update applies f to a fresh copy of the trip under the tracker lock and
// writes it (with the events f returns); it retries when another writer
// got there first. at is the time of the change, read once per attempt
// under the lock: f stamps what it changes with it and it becomes the
// trip's updated_at, so every time the change shows is the same.
func (s *Service) update(ctx context.Context, sc store.Scope, id string, f func(t *store.Trip, st *state, at time.Time) error) (store.Trip, state, error) {
	return s.updateWith(ctx, sc, id, func(t *store.Trip, st *state, _ *tracker, at time.Time) ([]store.TripEvent, error) {
		return nil, f(t, st, at)
	})
}

func (s *Service) updateWith(ctx context.Context, sc store.Scope, id string, f func(t *store.Trip, st *state, tr *tracker, at time.Time) ([]store.TripEvent, error)) (store.Trip, state, error) {
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
		at := apitime.Of(s.now())
		events, err := f(&t, &st, tr, at)
		if err != nil {
			return t, st, err
		}
		t.Version = prev + 1
		t.UpdatedAt = at
		t.Totals = totalsOf(s.analyticsOf(&st))
		tr.withRoads(&st)
		if t.State, err = encodeState(&st); err != nil {
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

// sortPoints orders points by timestamp, stable.
func sortPoints(p []Point) { sort.SliceStable(p, func(i, j int) bool { return p[i].TS < p[j].TS }) }
