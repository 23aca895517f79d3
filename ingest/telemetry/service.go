package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Publisher puts messages on the bus.
type Publisher interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}

// Config of the service. Zero fields take the defaults.
type Config struct {
	// MaxFuture rejects timestamps further ahead of the server clock
	// (default 5 min).
	MaxFuture time.Duration
	// CoolantLimit is the coolant temperature in °C above which
	// engine_overheating is raised (default 110); it is raised again
	// only after the temperature fell below CoolantLimit -
	// CoolantHysteresis (default 5).
	CoolantLimit      float64
	CoolantHysteresis float64
	// Vehicles is how many vehicles keep rule and watchdog state
	// (default 100,000; the least recently heard are forgotten first).
	Vehicles int
	// CheckEvery is the watchdog period (default 10 s); SilenceAfter is
	// how long a vehicle may stay silent before device_offline (default
	// 5 min).
	CheckEvery   time.Duration
	SilenceAfter time.Duration
	// Topics (default hub.TopicTelemetry and hub.TopicEvents).
	TelemetryTopic, EventsTopic string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Fleets stamps the events of vehicles with their fleet
	// (source.fleet_id) when their sender gave none; nil: only the
	// fleets senders give.
	Fleets Fleets
	// Roads fills in an event's location.speed_limit and road_type from
	// the road it lies on when the sender gave none; nil: no road
	// network (--osm), they stay as sent.
	Roads Roads
}

// Service is the telemetry and event intake.
type Service struct {
	cfg    Config
	pub    Publisher
	log    *slog.Logger
	schema schema
	tables map[string]map[string]*fieldTable // the schema's groups for bodyReader

	mu       sync.Mutex // guards vehicles and gen; never held across Publish
	vehicles *simplelru.LRU[vehicleKey, *vehicle]
	gen      uint64
}

// New makes the service.
func New(cfg Config, pub Publisher, log *slog.Logger) (*Service, error) {
	if cfg.MaxFuture <= 0 {
		cfg.MaxFuture = 5 * time.Minute
	}
	if cfg.CoolantLimit == 0 {
		cfg.CoolantLimit = 110
	}
	if cfg.CoolantHysteresis <= 0 {
		cfg.CoolantHysteresis = 5
	}
	if cfg.Vehicles <= 0 {
		cfg.Vehicles = 100_000
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = 10 * time.Second
	}
	if cfg.SilenceAfter <= 0 {
		cfg.SilenceAfter = 5 * time.Minute
	}
	if cfg.TelemetryTopic == "" {
		cfg.TelemetryTopic = hub.TopicTelemetry
	}
	if cfg.EventsTopic == "" {
		cfg.EventsTopic = hub.TopicEvents
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if pub == nil {
		return nil, fmt.Errorf("telemetry: a publisher is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lru, err := simplelru.NewLRU[vehicleKey, *vehicle](cfg.Vehicles, nil)
	if err != nil {
		return nil, fmt.Errorf("telemetry: vehicle cache: %w", err)
	}
	sc := newSchema()
	return &Service{cfg: cfg, pub: pub, log: log, schema: sc, tables: sc.tables(), vehicles: lru}, nil
}

// Result is what an accepted request did.
type Result struct {
	Accepted int
	// Sequences are the sequence numbers of the accepted telemetry
	// messages, EventIDs the ids of the accepted events, both in request
	// order.
	Sequences []int64
	EventIDs  []string
	// Generated are the ids of the events the rules raised.
	Generated []string
	// Duplicates counts the events of an events request whose event_id
	// repeats one sent earlier in the same request; DuplicateEventIDs
	// lists those ids, each once, in the order of their first repeat.
	// Repeats are accepted and published like any event: the streams
	// that deduplicate drop them.
	Duplicates        int
	DuplicateEventIDs []string
	IngestedAt        time.Time
}

// batch checks the size of a request list.
func batch(n int, isNil bool, list string) error {
	switch {
	case isNil:
		return &ValidationError{Code: CodeValidation, Fields: map[string]string{list: "is required"}}
	case n == 0:
		return &ValidationError{Code: CodeValidation, Fields: map[string]string{list: "must carry at least one element"}}
	case n > MaxBatch:
		return &ValidationError{Code: CodeBatchSize, Fields: map[string]string{list: fmt.Sprintf("must carry at most %d elements, got %d", MaxBatch, n)}}
	}
	return nil
}

// IngestTelemetry validates telemetry messages (the decoded JSON of each)
// and publishes them with the events the maintenance rules raise, in one
// Publish call. Nothing is published if any message is invalid
// (*ValidationError) or if the bus refuses the request (ErrUnavailable).
func (s *Service) IngestTelemetry(ctx context.Context, org, env string, msgs []map[string]any) (Result, error) {
	if err := batch(len(msgs), msgs == nil, "messages"); err != nil {
		return Result{}, err
	}
	now := s.cfg.Now().UTC()
	var errs fieldErrors
	out := make([]event.Telemetry, len(msgs))
	for i, m := range msgs {
		out[i], _ = s.validateTelemetry(m, at{"messages", i}, now, &errs)
	}
	if err := errs.err(CodeValidation); err != nil {
		return Result{}, err
	}
	rs := make([]reading, len(out))
	pub := make([]hub.Message, 0, len(out)+1)
	for i := range out {
		rs[i] = readingOf(&out[i])
		m, err := s.message(s.cfg.TelemetryTopic, out[i].VehicleID, &event.Envelope{Org: org, Env: env, Kind: event.KindTelemetry, Telemetry: &out[i], IngestedAt: now})
		if err != nil {
			return Result{}, err
		}
		pub = append(pub, m)
	}
	return s.accept(ctx, org, env, rs, pub, now)
}

// IngestTelemetryJSON is IngestTelemetry for the JSON body of POST
// /v1/telemetry ({"messages": [...]}): when the body is valid and plainly
// written it reads, checks and encodes it in one pass (see bodyReader)
// and ingests it; it returns taken true and what IngestTelemetry would
// have returned for the decoded messages. Otherwise it does nothing and
// returns taken false: the caller decodes the body and calls
// IngestTelemetry, which words the errors.
func (s *Service) IngestTelemetryJSON(ctx context.Context, org, env string, body []byte) (res Result, taken bool, err error) {
	now := s.cfg.Now().UTC()
	r := bodyReader{b: body, s: s, org: org, env: env, now: now, limit: now.Add(s.cfg.MaxFuture),
		// envelopes take about the size of the JSON
		enc: event.NewTelemetryEncoder(len(body) + len(body)/4), names: make([][]byte, 0, 16)}
	pub, rs, ok := r.read()
	if !ok {
		return Result{}, false, nil
	}
	res, err = s.accept(ctx, org, env, rs, pub, now)
	return res, true, err
}

// accept runs the watchdog and the rules over a valid request and
// publishes its telemetry messages (pub, in request order) with the
// events the rules raised, in one Publish call.
func (s *Service) accept(ctx context.Context, org, env string, rs []reading, pub []hub.Message, now time.Time) (Result, error) {
	var tx txn
	var raised []*event.Event
	s.mu.Lock()
	for i := range rs {
		if ev := s.seen(s.touch(&tx, org, env, rs[i].vehicleID, true), now); ev != nil {
			raised = append(raised, ev)
		}
	}
	raised = s.diagnostics(&tx, org, env, rs, now, raised)
	s.commit(&tx)
	s.mu.Unlock()

	res := Result{Accepted: len(rs), Sequences: make([]int64, len(rs)), IngestedAt: now}
	for i := range rs {
		res.Sequences[i] = rs[i].sequence
	}
	for _, ev := range raised {
		m, err := s.eventMessage(ctx, org, env, ev.Source.VehicleID, ev, now)
		if err != nil {
			s.rollback(&tx)
			return Result{}, err
		}
		pub = append(pub, m)
		if ev.Category == event.CategoryMaintenance {
			res.Generated = append(res.Generated, ev.EventID)
		}
	}
	if err := s.publish(ctx, &tx, pub); err != nil {
		return Result{}, err
	}
	return res, nil
}

// IngestEvents validates external events (the decoded JSON of each),
// assigns missing event ids, stamps processing_time and publishes them in
// one Publish call, with the same all-or-nothing rule as IngestTelemetry.
// An event_id repeated within the request is not an error: every copy is
// published (stream deduplication decides what streams see) and counted
// in Result.Duplicates.
func (s *Service) IngestEvents(ctx context.Context, org, env string, evs []map[string]any) (Result, error) {
	if err := batch(len(evs), evs == nil, "events"); err != nil {
		return Result{}, err
	}
	now := s.cfg.Now().UTC()
	var errs fieldErrors
	out := make([]event.Event, len(evs))
	for i, m := range evs {
		out[i], _ = s.validateEvent(m, at{"events", i}, now, &errs)
	}
	if err := errs.err(CodeValidation); err != nil {
		return Result{}, err
	}
	return s.acceptEvents(ctx, org, env, out, now)
}

// IngestEventsJSON is IngestEvents for the JSON body of POST /v1/events
// ({"events": [...]}): when the body is valid and plainly written it
// reads and checks it in one pass, without decoding it first (see
// eventReader), and ingests it; it returns taken true and what
// IngestEvents would have returned for the decoded events. Otherwise it
// does nothing and returns taken false: the caller decodes the body and
// calls IngestEvents, which words the errors.
func (s *Service) IngestEventsJSON(ctx context.Context, org, env string, body []byte) (res Result, taken bool, err error) {
	now := s.cfg.Now().UTC()
	r := eventReader{bodyReader: bodyReader{b: body, s: s, now: now, names: make([][]byte, 0, 16)}}
	out, ok := r.read()
	if !ok {
		return Result{}, false, nil
	}
	res, err = s.acceptEvents(ctx, org, env, out, now)
	return res, true, err
}

// acceptEvents publishes valid events (out, in request order), with the
// device_online events their vehicles raise, in one Publish call.
func (s *Service) acceptEvents(ctx context.Context, org, env string, out []event.Event, now time.Time) (Result, error) {
	processed := apitime.Format(now)
	dups, dupIDs := duplicates(out)

	var tx txn
	var raised []*event.Event
	s.mu.Lock()
	for i := range out {
		if v := out[i].Source.VehicleID; v != "" {
			if ev := s.seen(s.touch(&tx, org, env, v, true), now); ev != nil {
				raised = append(raised, ev)
			}
		}
	}
	s.commit(&tx)
	s.mu.Unlock()

	pub := make([]hub.Message, 0, len(out)+len(raised))
	for _, ev := range raised {
		m, err := s.eventMessage(ctx, org, env, ev.Source.VehicleID, ev, now)
		if err != nil {
			s.rollback(&tx)
			return Result{}, err
		}
		pub = append(pub, m)
	}
	res := Result{Accepted: len(out), EventIDs: make([]string, len(out)), Duplicates: dups, DuplicateEventIDs: dupIDs, IngestedAt: now}
	for i := range out {
		e := &out[i]
		if e.EventID == "" {
			e.EventID = newEventID()
		}
		e.Metadata.ProcessingTime = processed
		s.fillRoad(e)
		res.EventIDs[i] = e.EventID
		m, err := s.eventMessage(ctx, org, env, eventKey(e), e, now)
		if err != nil {
			s.rollback(&tx)
			return Result{}, err
		}
		pub = append(pub, m)
	}
	if err := s.publish(ctx, &tx, pub); err != nil {
		return Result{}, err
	}
	return res, nil
}

// duplicates counts the events whose client-sent event_id repeats the
// id of an earlier event of the request, and lists the repeated ids, each
// once, in the order of their first repeat. Assigned ids never repeat.
func duplicates(evs []event.Event) (n int, ids []string) {
	if len(evs) < 2 {
		return 0, nil // nothing to repeat
	}
	var seen map[string]int // event_id → copies so far
	for i := range evs {
		id := evs[i].EventID
		if id == "" {
			continue
		}
		if seen == nil {
			seen = make(map[string]int, len(evs)-i)
		}
		c := seen[id]
		if c > 0 {
			n++
			if c == 1 {
				ids = append(ids, id)
			}
		}
		seen[id] = c + 1
	}
	return n, ids
}

// eventKey is the partition key of an event: the vehicle, else the
// driver, else the trip.
func eventKey(e *event.Event) string {
	switch {
	case e.Source.VehicleID != "":
		return e.Source.VehicleID
	case e.Source.DriverID != "":
		return e.Source.DriverID
	}
	return e.Source.TripID
}

func (s *Service) message(topic, key string, env *event.Envelope) (hub.Message, error) {
	b, err := event.Marshal(env)
	if err != nil {
		return hub.Message{}, fmt.Errorf("telemetry: %w", err)
	}
	return hub.Message{Topic: topic, Key: []byte(key), Value: b, Time: env.IngestedAt}, nil
}

// publish hands a request to the bus; on failure it undoes the request's
// state changes.
func (s *Service) publish(ctx context.Context, tx *txn, msgs []hub.Message) error {
	if err := s.pub.Publish(ctx, msgs...); err != nil {
		s.rollback(tx)
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

func newEventID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "evt_" + hex.EncodeToString(b[:])
}
