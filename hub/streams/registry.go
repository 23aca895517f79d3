// Package streams is the stream registry and the streams service: stream
// records live in the store (so every node and every restart sees them),
// compiled filter programs live in a per-tenant index in memory, and each
// node refreshes its copy from the store every PollEvery (a lookup of an
// unknown id goes to the store at once, so a stream started on node A is
// usable on node B immediately; configuration changes reach B within
// PollEvery). On several nodes, Changes counts every change in Redis and
// CatchUp brings a node up to date before it matches a message sent after
// a change.
//
// The Registry is also the hub's matcher: Match finds the active streams
// of a message's organization and environment through the tenant's
// filters/expr Index, and the registry implements hub.Streams and
// hub.Counter for the sinks. The Service starts, stops, configures and
// reports streams for api/streams.
//
// An Entry also carries what the pipeline applies per stream beyond the
// filter: a telemetry stream's Shape (shape.go: include_metadata,
// precision, calculated metrics, alert events), nil for a stream that
// takes messages as they come, and an encrypted stream's Sealer
// (encrypt.go: its key lives in the record's secrets, so every node
// loading the record seals with it). Settings the hub does not carry out are
// refused when a stream is started or configured (refuse.go), never when
// a stored stream loads, so a stream saved before a refusal keeps running.
//
// Concurrency: a Registry and a Service are safe for concurrent use. The
// registry's maps (streams, per-tenant indexes, ordering streams) are
// guarded by one read-write mutex, never held across a store read; an
// Entry's record, configuration and program are never changed once it is
// installed (a new configuration installs a new Entry, which takes over
// the counters), and its counters and match times are atomics. An
// Index's Match takes no lock, so the pipeline's partitions match at once
// while Run (one goroutine) refreshes the registry every PollEvery.
package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
)

// Store is what the registry needs of the store.
type Store interface {
	CreateStream(ctx context.Context, s store.Stream) error
	GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error)
	UpdateStream(ctx context.Context, s store.Stream, prev int64) error
	ListStreams(ctx context.Context, since time.Time) ([]store.Stream, error)
	StreamVersions(ctx context.Context, since time.Time) ([]store.StreamVersion, error)
}

// Counter names: each counts what happened since the stream's start (on
// this node, or on every node with shared counters). How many webhook
// deliveries wait or sit in the dead-letter list now is the store's
// (the status's webhook.counts), not a counter's. There is no count of
// dropped messages: nothing a stream matched is dropped (its log keeps
// it until retention; a client that falls behind retention is told so,
// offsets_expired), so such a count could only ever read 0.
var counterNames = []string{"matched", "delivered", "duplicates_suppressed", "failed_attempts", "dead_lettered", "throttled"}

// Entry is one stream as a node knows it.
type Entry struct {
	Rec  store.Stream
	Cfg  Config
	Prog *expr.Program
	Info hub.StreamInfo
	// Shape is what a telemetry stream changes in the messages it takes
	// and the alerts it adds; nil when it takes them as they come.
	Shape *Shape
	// Sealer encrypts the stream's messages (stream_config.encryption);
	// nil for a stream that delivers them as they are.
	Sealer *Sealer

	counters  map[string]*atomic.Int64
	connected atomic.Int64
	lastMatch atomic.Int64 // unix ms of the last matched message
	lagMS     atomic.Int64 // ingest to match of the last matched message
}

// Counter returns a counter of the entry.
func (e *Entry) Counter(name string) int64 {
	if c := e.counters[name]; c != nil {
		return c.Load()
	}
	return 0
}

type scopeKey struct{ org, env string }

// RegistryConfig tunes the registry.
type RegistryConfig struct {
	PollEvery        time.Duration // default 1s
	StoppedRetention time.Duration // how long stopped streams stay readable, default 24h
	// ClockSkew is how far the clocks of the nodes may differ, for
	// CatchUp; default DefaultClockSkew.
	ClockSkew time.Duration
	// Reread is how far before the newest update it has seen each refresh
	// reads again, default DefaultReread: a record's update time is taken
	// before its write commits, so on several nodes a record can commit
	// after a later one was read, with an older time than it.
	Reread time.Duration
}

// DefaultReread is RegistryConfig.Reread's default: far longer than a
// stream record's write takes to commit.
const DefaultReread = 30 * time.Second

// Registry is the node's view of every stream.
type Registry struct {
	cfg   RegistryConfig
	store Store
	log   *slog.Logger
	now   func() time.Time

	shared SharedCounters // nil on one node

	changes  Changes      // nil on one node
	checkMu  sync.Mutex   // one CatchUp at a time; guards synced and reported
	synced   int64        // the changes' version the registry has read the store after
	reported time.Time    // when CatchUp last returned a failure
	checked  atomic.Int64 // when the last CatchUp check began, unix ns
	fl       flusher

	mu       sync.RWMutex // guards streams, indexes and ordering
	streams  map[string]*Entry
	indexes  map[scopeKey]*expr.Index[string]
	ordering map[scopeKey]map[string]struct{} // events streams with event_ordering, not stopped
	// active counts the active streams of each scope, events streams
	// first, then telemetry streams (Scope)
	active map[scopeKey]*[2]int
	since  time.Time
	// version moves on whenever an entry is installed, replaced or
	// dropped (Version)
	version atomic.Uint64
}

var (
	_ hub.Streams   = (*Registry)(nil)
	_ hub.Versioned = (*Registry)(nil)
	_ hub.Counter   = (*Registry)(nil)
)

// NewRegistry makes a registry; Load fills it.
func NewRegistry(cfg RegistryConfig, st Store, log *slog.Logger) *Registry {
	if cfg.PollEvery == 0 {
		cfg.PollEvery = time.Second
	}
	if cfg.StoppedRetention == 0 {
		cfg.StoppedRetention = 24 * time.Hour
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	if cfg.Reread == 0 {
		cfg.Reread = DefaultReread
	}
	return &Registry{cfg: cfg, store: st, log: log, now: time.Now, streams: map[string]*Entry{}, indexes: map[scopeKey]*expr.Index[string]{}, ordering: map[scopeKey]map[string]struct{}{},
		active: map[scopeKey]*[2]int{}, fl: flusher{flushed: map[string]map[string]int64{}, pending: map[string]*sealed{}, conn: map[string]int64{}}}
}

// ShareCounters makes status report the counters of every node; call
// before Run.
func (r *Registry) ShareCounters(s SharedCounters) { r.shared = s }

func newEntry(rec store.Stream) (*Entry, error) {
	e := &Entry{Rec: rec, counters: map[string]*atomic.Int64{}}
	for _, n := range counterNames {
		e.counters[n] = &atomic.Int64{}
	}
	if err := json.Unmarshal(rec.Config, &e.Cfg); err != nil {
		return nil, fmt.Errorf("streams: config of %s: %w", rec.ID, err)
	}
	if e.Cfg.Encrypted() {
		key, err := storedKey(rec.Secret)
		if err != nil {
			return nil, fmt.Errorf("streams: secrets of %s: %w", rec.ID, err)
		}
		if key == nil {
			// stored with the flag before it was carried out: its
			// messages never were encrypted, and it does not say so
			e.Cfg.dropEncryption()
		} else if e.Sealer, err = NewSealer(rec.ID, *key); err != nil {
			return nil, err
		}
	}
	prog, info, err := Compile(rec.Kind, &e.Cfg)
	if err != nil {
		return nil, fmt.Errorf("streams: compile %s: %w", rec.ID, err)
	}
	info.ID, info.Org, info.Env, info.State, info.Version = rec.ID, rec.Org, rec.Env, rec.State, rec.Version
	e.Prog, e.Info, e.Shape = prog, info, shapeOf(e.Cfg.Telemetry)
	return e, nil
}

// put installs or replaces an entry; lock held.
func (r *Registry) put(rec store.Stream) *Entry {
	old := r.streams[rec.ID]
	if old != nil && old.Rec.Version >= rec.Version {
		return old
	}
	e, err := newEntry(rec)
	if err != nil {
		r.log.Error("stream not loaded", "stream_id", rec.ID, "error", err)
		return old
	}
	if old != nil {
		e.counters = old.counters
		e.connected.Store(old.connected.Load())
		e.lastMatch.Store(old.lastMatch.Load())
		e.lagMS.Store(old.lagMS.Load())
	}
	r.streams[rec.ID] = e
	r.version.Add(1)
	k := scopeKey{rec.Org, rec.Env}
	r.countActive(k, old, -1)
	r.countActive(k, e, 1)
	ix := r.indexes[k]
	if ix == nil {
		ix = &expr.Index[string]{}
		r.indexes[k] = ix
	}
	ix.Remove(rec.ID)
	if rec.State != hub.StateStopped {
		ix.Add(rec.ID, e.Prog)
	}
	ord := r.ordering[k]
	if Ordered(e) && rec.State != hub.StateStopped {
		if ord == nil {
			ord = map[string]struct{}{}
			r.ordering[k] = ord
		}
		ord[rec.ID] = struct{}{}
	} else if ord != nil {
		delete(ord, rec.ID)
		if len(ord) == 0 {
			delete(r.ordering, k)
		}
	}
	return e
}

// countActive adds d to the count of e's kind in scope k if e is an
// active stream; lock held.
func (r *Registry) countActive(k scopeKey, e *Entry, d int) {
	if e == nil || e.Rec.State != hub.StateActive {
		return
	}
	kind := 0
	if e.Rec.Kind == hub.KindTelemetry {
		kind = 1
	}
	n := r.active[k]
	if n == nil {
		n = new([2]int)
		r.active[k] = n
	}
	if n[kind] += d; *n == [2]int{} {
		delete(r.active, k)
	}
}

// Scope reports what the streams of a scope could take: events (an
// active events stream), telemetry (an active telemetry stream), and
// whether it orders (an events stream with event_ordering that is not
// stopped, paused ones included: it tracks every sequenced event of the
// scope, as Orders). A message of a kind its scope takes nothing of, and
// for an event of a scope that does not order, matches no stream and is
// tracked by nothing: the pipeline skips it without decoding it. On
// several nodes, call CatchUp first.
func (r *Registry) Scope(org, env string) (events, telemetry, orders bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k := scopeKey{org, env}
	if n := r.active[k]; n != nil {
		events, telemetry = n[0] > 0, n[1] > 0
	}
	return events, telemetry, len(r.ordering[k]) > 0
}

// Ordered reports whether an entry is an events stream with
// event_ordering.
func Ordered(e *Entry) bool {
	ev := e.Cfg.Events
	return ev != nil && ev.ProcessingRules != nil && ev.ProcessingRules.EventOrdering
}

// Orders reports whether a scope has an events stream with
// event_ordering that is not stopped: only then does the pipeline track
// its sources' sequence numbers.
func (r *Registry) Orders(org, env string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.ordering[scopeKey{org, env}]) > 0
}

// Load reads every stream from the store.
func (r *Registry) Load(ctx context.Context) error {
	return r.refresh(ctx)
}

func (r *Registry) refresh(ctx context.Context) error {
	r.mu.RLock()
	since := r.since
	r.mu.RUnlock()
	recs, err := r.store.ListStreams(ctx, since)
	if err != nil {
		return err
	}
	if !since.IsZero() {
		if recs, err = r.lateCommits(ctx, since, recs); err != nil {
			return err
		}
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		if rec.State == hub.StateStopped && now.Sub(rec.StoppedAt) > r.cfg.StoppedRetention {
			continue
		}
		r.put(rec)
		if rec.UpdatedAt.After(r.since) {
			// a later poll re-reads this millisecond: an update in the
			// same millisecond is not missed, versions keep it idempotent
			r.since = rec.UpdatedAt
		}
	}
	for id, e := range r.streams {
		if e.Rec.State == hub.StateStopped && now.Sub(e.Rec.StoppedAt) > r.cfg.StoppedRetention {
			delete(r.streams, id)
			r.version.Add(1)
		}
	}
	return nil
}

// lateCommits adds to recs the streams updated within Reread before
// since whose version is newer than the registry's: a record's update
// time is taken before its write commits, so on several nodes a record
// can commit after a later one was read, with an older time than it. Only
// their versions are read for the whole window, and the settings of
// those that changed, so that streams updated a moment ago are not read
// and decoded again every poll.
func (r *Registry) lateCommits(ctx context.Context, since time.Time, recs []store.Stream) ([]store.Stream, error) {
	vers, err := r.store.StreamVersions(ctx, since.Add(-r.cfg.Reread))
	if err != nil {
		return recs, err
	}
	read := make(map[string]int64, len(recs))
	for _, rec := range recs {
		read[rec.ID] = rec.Version
	}
	var stale []store.StreamVersion
	r.mu.RLock()
	for _, v := range vers {
		if n, ok := read[v.ID]; ok && n >= v.Version {
			continue
		}
		if e := r.streams[v.ID]; e != nil && e.Rec.Version >= v.Version {
			continue
		}
		stale = append(stale, v)
	}
	r.mu.RUnlock()
	for _, v := range stale {
		rec, err := r.store.GetStream(ctx, store.Scope{Org: v.Org, Env: v.Env}, v.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// Run refreshes from the store until ctx ends.
func (r *Registry) Run(ctx context.Context) error {
	t := time.NewTicker(r.cfg.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.refresh(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("stream registry refresh failed", "error", err)
			}
			r.flushCounters(ctx)
		}
	}
}

// Get returns a stream of the scope, reading the store on a miss.
func (r *Registry) Get(ctx context.Context, org, env, id string) (*Entry, error) {
	r.mu.RLock()
	e := r.streams[id]
	r.mu.RUnlock()
	if e != nil {
		if e.Rec.Org != org || e.Rec.Env != env {
			return nil, hub.ErrStreamNotFound
		}
		return e, nil
	}
	rec, err := r.store.GetStream(ctx, store.Scope{Org: org, Env: env}, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, hub.ErrStreamNotFound
	}
	if err != nil {
		return nil, err
	}
	if rec.State == hub.StateStopped && r.now().Sub(rec.StoppedAt) > r.cfg.StoppedRetention {
		return nil, hub.ErrStreamNotFound
	}
	r.mu.Lock()
	e = r.put(rec)
	r.mu.Unlock()
	if e == nil {
		return nil, hub.ErrStreamNotFound
	}
	return e, nil
}

// Stream implements hub.Streams from memory (with a store read on a miss).
func (r *Registry) Stream(org, env, id string) (hub.StreamInfo, bool) {
	// every websocket pump asks on every wake-up: answer from memory
	// without the miss path's context and timer
	r.mu.RLock()
	e := r.streams[id]
	r.mu.RUnlock()
	if e != nil {
		if e.Rec.Org != org || e.Rec.Env != env {
			return hub.StreamInfo{}, false
		}
		return e.Info, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := r.Get(ctx, org, env, id)
	if err != nil {
		return hub.StreamInfo{}, false
	}
	return e.Info, true
}

// Version implements hub.Versioned: it moves on whenever the registry
// installs, replaces or drops a stream, so what Stream answered stands
// while it has not moved. Sinks that look their stream up on every
// wake-up (websocket subscriptions, SSE responses) ask it instead,
// through hub.StreamCache: an atomic read instead of a lock and a map
// look-up.
func (r *Registry) Version() uint64 { return r.version.Load() }

// Count implements hub.Counter.
func (r *Registry) Count(id, name string, n int64) {
	r.mu.RLock()
	e := r.streams[id]
	r.mu.RUnlock()
	if e == nil {
		return
	}
	if c := e.counters[name]; c != nil {
		c.Add(n)
	}
}

// Connected implements hub.Counter.
func (r *Registry) Connected(id string, delta int) {
	r.mu.RLock()
	e := r.streams[id]
	r.mu.RUnlock()
	if e != nil {
		e.connected.Add(int64(delta))
	}
}

// Match returns the entries whose filters match env, appending to out.
func (r *Registry) Match(env *event.Envelope, ids []string, out []*Entry) ([]string, []*Entry) {
	r.mu.RLock()
	ix := r.indexes[scopeKey{env.Org, env.Env}]
	r.mu.RUnlock()
	if ix == nil {
		return ids, out
	}
	ids = ix.Match(env, ids[:0])
	r.mu.RLock()
	for _, id := range ids {
		if e := r.streams[id]; e != nil && e.Rec.State == hub.StateActive {
			out = append(out, e)
		}
	}
	r.mu.RUnlock()
	return ids, out
}

// install puts a record written by this node.
func (r *Registry) install(rec store.Stream) *Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.put(rec)
}

// MarkMatched records a match time and the ingest-to-match lag.
func MarkMatched(e *Entry, now, ingested time.Time) {
	e.lastMatch.Store(now.UnixMilli())
	if !ingested.IsZero() {
		e.lagMS.Store(now.Sub(ingested).Milliseconds())
	}
}

// Frequency is the minimum spacing of a telemetry stream's messages per
// vehicle and data type (0: every message).
func Frequency(e *Entry) time.Duration { return telemetryFrequency(&e.Cfg) }

// ByID returns a known stream by id alone (for internal callers that
// already hold a stream id from the pipeline).
func (r *Registry) ByID(id string) *Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.streams[id]
}
