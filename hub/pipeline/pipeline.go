// Package pipeline is the consume → filter → publish pipeline of the hub:
// it reads telemetry and events from the bus in a consumer group, matches
// each message against the compiled stream filters of its tenant, applies
// each stream's processing rules (deduplication, per-source ordering,
// telemetry frequency, correlation, enrichment, metadata) and appends the
// message to the stream's log, from which websocket and webhook sinks
// deliver; webhook streams' entries are also handed to the Sink (the
// durable delivery queue).
//
// # Delivery guarantee
//
// At-least-once. Handle returns nil only once every message its streams
// take from the batch, other than those a reorder buffer keeps, was
// appended to its streams' logs and, for webhook streams, accepted by the
// Sink; any failure returns an error, and the bus redelivers the whole
// batch. On a log that appends to several streams at once (the embedded
// embedlog: one durable write per batch) a failed append leaves none of the
// batch's messages; on one that appends stream by stream (redislog),
// appends that succeeded before the failure are not undone and their
// messages are appended again (a duplicate under a new stream offset).
// The rest of what a failed batch changed is undone, so that its
// redelivery is handled as a first delivery: telemetry frequency marks
// and correlation positions are given back, and dedup claims are given
// up.
//
// # Ordering
//
// While an organization and environment has an events stream with
// event_ordering, every event of that scope with a sequence number (>= 1)
// goes through the scope's reorder buffer (package order), keyed by its
// source (vehicle, else driver and trip), whatever streams matched it:
// a number taken by an event no ordering stream takes is known, and
// releases its successor at once. The buffer releases an event to the
// ordering streams that took it (matched and not suppressed as a
// duplicate) in sequence order, behind a gap after at most OrderWait, and
// a number below the next expected one at once with metadata.late set.
// Streams without event_ordering take the event when it arrives: they
// wait for nothing and get nothing twice. Events without a sequence
// number are not ordered. The encoding of a released event for a stream
// is made at its release, so a correlation position follows the stream's
// delivery order.
//
// Events kept in a reorder buffer for an ordering stream are not done
// when Handle returns. The pipeline remembers the bus topic, partition and
// offset of each until it is appended and accepted, and subscribes with a
// hub.Subscription.Held that reports the oldest such offset per partition:
// the bus commits no further, so after a crash it delivers the message
// again (the running bus goes on from its own position: nothing is handed
// twice meanwhile). A kept message is released by a later batch or by
// Run's expiry loop (every 50 ms). Released messages whose hand-off fails
// are not lost: those that came in the failed batch come back with its
// redelivery (as late events, so possibly out of order), the others are
// stashed and the expiry loop retries them.
//
// # Deduplication
//
// processing_rules.deduplication suppresses an event whose event_id was
// already seen within the window's TTL (one hour in cmd/fleethub) in
// every deduplicating stream of the same organization and environment;
// the key is organization, environment and event_id, so ids of other
// tenants never collide. An event is recorded when a deduplicating stream
// matched it, and only once every stream it matched took it: once it has
// matched a batch's messages, the pipeline claims the keys of the events
// deduplicating streams matched in the dedup.Window (all at once,
// dedup.ClaimAll), records them (Done) after the hand-off, copies kept in
// reorder buffers included, and forgets the claims when the batch fails.
// A copy of an event that this node has in flight or held is suppressed
// (the first one's bus message is not committed before its hand-off, so
// it cannot be lost); a copy whose key another node claimed makes Handle
// fail with ErrInFlight (the messages before it processed, none after),
// and the bus retries the batch until that claim is done, forgotten or,
// after a crash, lapsed (dedup.DefaultLease). When the window fails,
// events are delivered without deduplication.
//
// A window of this process alone (dedup.Private: the embedded hub's
// Compact) has no other node to hold off, and is lost with the process:
// there the keys new to it are recorded as they are claimed, with one
// call per batch (RecordAll), and forgotten when the batch fails, so
// that nothing is left to record after the hand-off. The window itself
// then answers Duplicate for a copy of an event in flight or held here,
// and the claim index is not used. An id's TTL counts from its claim,
// not its hand-off (earlier by at most OrderWait for a held event).
//
// # Encryption
//
// A stream with stream_config.encryption (an Entry with a Sealer) gets
// each of its messages sealed just before the append (sealed), after
// every rule and shape of the stream made it: its log holds ciphertext,
// and every consumer of the log delivers it as it is. Sealing happens
// once per stream and message appended; a retried hand-off seals anew.
// Plain streams share one encoding of a message as before.
//
// Backpressure: bus → pipeline blocks (the next batch of a partition waits
// for the previous one); pipeline → log never blocks on a client.
package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/filters/order"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
)

// Config of the pipeline.
type Config struct {
	Group       string        // consumer group, default "fleethub-pipeline"
	Topics      []string      // default telemetry and events
	OrderWait   time.Duration // longest wait for a sequence gap, default 2s
	MaxBuffered int           // per source, default 1000
	MaxSources  int           // sources tracked per organization and environment, default 100,000
	// DedupTTL is how long a log that keeps message ids (redislog)
	// remembers a deduplicating stream's event ids, default 1h (the
	// window's TTL).
	DedupTTL time.Duration
}

// Enricher adds driver_info and vehicle_details to an event.
type Enricher interface {
	Enrich(ctx context.Context, org, env string, ev *event.Event, what []string) map[string]any
}

// Sink receives the messages appended for webhook streams (the durable
// delivery queue); optional. Accept returns once the entries are durable:
// the bus offset is committed after it.
type Sink interface {
	Accept(ctx context.Context, info hub.StreamInfo, entries []hub.Entry) error
}

// manySink is the optional ability to store several streams' entries
// at once (one transaction for a whole bus batch).
type manySink interface {
	AcceptMany(ctx context.Context, infos []hub.StreamInfo, entries [][]hub.Entry) error
}

// Named pauses and limits.
const (
	expireEvery   = 50 * time.Millisecond // how often held messages are checked
	settleTimeout = 5 * time.Second       // dedup Done and Forget calls, even after ctx ended
)

// Pipeline is the hub's matching pipeline.
type Pipeline struct {
	cfg    Config
	bus    hub.Bus
	reg    *streams.Registry
	log    hub.Log
	dedup  dedup.Window
	taken  TakenSet // ids each deduplicating stream's log held at start; nil when the log keeps them
	enrich Enricher
	sink   Sink
	logger *slog.Logger
	now    func() time.Time

	// private is dedup when it is a window of this process alone: ids
	// are recorded as they are claimed (recordAll)
	private dedup.Private

	mu         sync.Mutex // guards everything below
	seqs       map[scope]*order.Sequencer[*heldItem]
	holds      map[busRef]*heldItem      // held or released and not yet handed off
	heldAt     map[partKey]map[int64]int // bus offsets of holds → count
	stash      []stashed                 // released, hand-off failed, retried by Run
	claims     claimIndex                // dedup key → this node's claim
	throttle   *lru.Cache[string, int64]
	correlated *expirable.LRU[string, int]

	scratch sync.Pool // of *scratch
}

// New makes a pipeline. enrich and sink may be nil.
func New(cfg Config, bus hub.Bus, reg *streams.Registry, log hub.Log, window dedup.Window, enrich Enricher, sink Sink, logger *slog.Logger) *Pipeline {
	if cfg.Group == "" {
		cfg.Group = "fleethub-pipeline"
	}
	if len(cfg.Topics) == 0 {
		cfg.Topics = []string{hub.TopicTelemetry, hub.TopicEvents}
	}
	if cfg.OrderWait <= 0 {
		cfg.OrderWait = 2 * time.Second
	}
	if cfg.MaxBuffered <= 0 {
		cfg.MaxBuffered = 1000
	}
	if cfg.DedupTTL == 0 {
		cfg.DedupTTL = time.Hour
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = order.DefaultMaxSources
	}
	th, err := lru.New[string, int64](100_000)
	if err != nil {
		panic(fmt.Sprintf("pipeline: throttle cache: %v", err)) // a constant positive size never fails
	}
	p := &Pipeline{cfg: cfg, bus: bus, reg: reg, log: log, dedup: window, enrich: enrich, sink: sink, logger: logger, now: time.Now,
		seqs: map[scope]*order.Sequencer[*heldItem]{}, holds: map[busRef]*heldItem{}, heldAt: map[partKey]map[int64]int{},
		claims: newClaimIndex(), throttle: th,
		correlated: expirable.NewLRU[string, int](100_000, nil, 24*time.Hour)}
	p.private, _ = window.(dedup.Private)
	return p
}

// Run consumes until ctx ends.
func (p *Pipeline) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(p.cfg.Topics)+1)
	for _, t := range p.cfg.Topics {
		wg.Add(1)
		go func(t string) {
			defer wg.Done()
			sub := hub.Subscription{Topic: t, Group: p.cfg.Group, Start: hub.StartEarliest, Held: p.held(t)}
			if err := p.bus.Subscribe(ctx, sub, p.Handle); err != nil {
				errs <- err
			}
		}(t)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.expireLoop(ctx)
	}()
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func (p *Pipeline) expireLoop(ctx context.Context) {
	t := time.NewTicker(expireEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.flushHeld(ctx)
		}
	}
}

// uniqueAppender is the optional ability of a log to keep message ids
// with the entries (redislog): an entry whose id the stream took is not
// appended again, and its earlier offset is returned, so a deduplicating
// stream holds an event once even when the node crashed between the
// append and recording the event as seen.
type uniqueAppender interface {
	AppendUnique(ctx context.Context, id string, data [][]byte, ids []string, ttl time.Duration) ([]int64, error)
}

// appended is where one stream's entries of a hand-off are: first..last,
// appended now, plus earlier offsets of entries the log already held.
type appended struct {
	first, last int64
	earlier     []int64
}

// appendStream appends data to one stream's log; ids are the event ids
// of the entries ("" for none).
func (p *Pipeline) appendStream(ctx context.Context, e *streams.Entry, data [][]byte, ids []string) (appended, error) {
	id := e.Rec.ID
	if ua, ok := p.log.(uniqueAppender); ok && ids != nil && dedups(e) {
		offs, err := ua.AppendUnique(ctx, id, sealed(e, data), ids, p.cfg.DedupTTL)
		if err != nil {
			return appended{}, err
		}
		var a appended
		for _, off := range offs {
			switch {
			case off > a.last:
				if a.first == 0 {
					a.first = off
				}
				a.last = off
			default:
				a.earlier = append(a.earlier, off)
			}
		}
		if len(a.earlier) > 0 {
			p.reg.Count(id, "duplicates_suppressed", int64(len(a.earlier)))
		}
		return a, nil
	}
	data, _ = p.filterTaken(ctx, e, data, ids)
	if len(data) == 0 {
		return appended{}, nil
	}
	last, err := p.log.Append(ctx, id, sealed(e, data))
	return appended{first: last - int64(len(data)) + 1, last: last}, err
}

// sealed is what a stream's log holds of data: the messages as they
// are, or encrypted (stream_config.encryption). Every message a stream
// takes reaches its log through here, after every change the stream
// makes to it, so each consumer of the log (websocket, webhook, Server-
// Sent Events, replays) delivers it as it is, and the log at rest holds
// the ciphertext.
func sealed(e *streams.Entry, data [][]byte) [][]byte {
	if e.Sealer == nil || len(data) == 0 {
		return data
	}
	return e.Sealer.SealAll(data)
}

// entries reads what a hand-off appended, and the entries it found
// already there (handed to the sink again: it ignores what it holds).
func (p *Pipeline) entries(ctx context.Context, id string, a appended) ([]hub.Entry, error) {
	var out []hub.Entry
	for _, off := range a.earlier {
		ents, err := p.log.Read(ctx, id, off, 1)
		if err != nil {
			return nil, err
		}
		if len(ents) > 0 && ents[0].Offset == off {
			out = append(out, ents[0])
		}
	}
	if a.first > 0 && a.last >= a.first {
		n := int(a.last - a.first + 1)
		ents, err := p.log.Read(ctx, id, a.first, n)
		if err != nil {
			return nil, err
		}
		out = append(out, ents...)
	}
	return out, nil
}

// deliver appends data to a stream's log and hands webhook streams'
// entries to the sink.
func (p *Pipeline) deliver(ctx context.Context, e *streams.Entry, data [][]byte, ids []string) error {
	a, err := p.appendStream(ctx, e, data, ids)
	if err != nil {
		return err
	}
	if p.sink == nil || e.Info.Delivery != "webhook" {
		return nil
	}
	ents, err := p.entries(ctx, e.Rec.ID, a)
	if err != nil || len(ents) == 0 {
		return err
	}
	return p.sink.Accept(ctx, e.Info, ents)
}

// batch collects what one bus batch appends per stream, and what to
// settle once the hand-off succeeded or failed.
type batch struct {
	msgs   []hub.Message
	held   []*heldItem // released from reorder buffers into the streams' data
	claims []*claim    // claims carrying one reference for this batch
	undo   []undo      // frequency and correlation changes, in order
	*scratch
}

// streamAppend is what a batch appends to one stream.
type streamAppend struct {
	e    *streams.Entry
	data [][]byte
	ids  []string // event ids of data
}

// scratch is the working memory of a batch that nothing keeps once
// Handle returns, reused by later batches.
type scratch struct {
	// the streams the batch appends to, in the order first met: their
	// ids, their data, and where each stream is in both (the memory kept
	// from batch to batch: three maps and two slices per stream a batch
	// were most of a small batch's allocations, BenchmarkHandleOne)
	order    []string
	at       map[string]int
	streams  []streamAppend
	appendTo [][][]byte // appendAll's data, in order
	matchIDs []string   // the registry's matches of a message (match)
	ms       []matchedMsg
	matched  []*streams.Entry // the streams of ms, one message after the other
	keys     []byte           // the dedup keys of ms, one after the other
	nkeys    int              // how many
	ask      []string         // keys to claim in the window
	asked    []int            // their messages in ms
	states   []dedup.State    // the window's answers
	takes    []*streams.Entry // the ordering streams that take each event of ms, one after the other
	pushes   []order.Pushed[*heldItem]
	released []order.Item[*heldItem] // what the pushes released, one push after the other
	ends     []int                   // where what each push released ends in released
	claimBuf []*claim                // batch.claims' memory
	finished []*claim
	done     []string
	items    []heldItem // the items of ms pushed into reorder buffers
}

// reset drops what s points to, keeping its memory.
func (s *scratch) reset() {
	clear(s.order)
	clear(s.at)
	for i := range s.streams {
		sd := &s.streams[i]
		clear(sd.data)
		clear(sd.ids)
		*sd = streamAppend{data: sd.data[:0], ids: sd.ids[:0]}
	}
	clear(s.appendTo)
	clear(s.matchIDs)
	s.matchIDs = s.matchIDs[:0]
	s.order, s.streams, s.appendTo = s.order[:0], s.streams[:0], s.appendTo[:0]
	clear(s.ms)
	clear(s.matched)
	clear(s.takes)
	clear(s.pushes)
	clear(s.released)
	clear(s.ask)
	clear(s.claimBuf)
	clear(s.finished)
	clear(s.done)
	clear(s.items)
	s.ms, s.matched, s.keys, s.ask, s.asked, s.states = s.ms[:0], s.matched[:0], s.keys[:0], s.ask[:0], s.asked[:0], s.states[:0]
	s.takes, s.pushes, s.released, s.ends = s.takes[:0], s.pushes[:0], s.released[:0], s.ends[:0]
	s.claimBuf, s.finished, s.done, s.nkeys, s.items = s.claimBuf[:0], s.finished[:0], s.done[:0], 0, s.items[:0]
}

// matchedMsg is a message of a batch that streams matched or whose
// source's sequence the pipeline tracks.
type matchedMsg struct {
	env          *event.Envelope
	from         busRef
	lo, hi       int  // its streams: scratch.matched[lo:hi]
	ordered      bool // see process
	keyLo, keyHi int  // its dedup key, scratch.keys[keyLo:keyHi], when a deduplicating stream matched it
	key          string
	claim        *claim    // this node's claim on key
	dup          bool      // a duplicate for deduplicating streams
	inFlight     bool      // claimed by another node
	held         *heldItem // its item in the reorder buffer, when ordered
	push         int       // which of the batch's pushes into reorder buffers was its own (sequenceAll); -1: none
}

// add appends one message's encoding for a stream; eventID is the
// event's id ("" for telemetry).
func (b *batch) add(e *streams.Entry, d []byte, eventID string) {
	if d == nil {
		return // could not be encoded: logged by encode
	}
	id := e.Rec.ID
	i, ok := b.at[id]
	if !ok {
		if b.at == nil {
			b.at = map[string]int{}
		}
		i = len(b.order)
		b.at[id] = i
		b.order = append(b.order, id)
		if len(b.streams) < cap(b.streams) {
			b.streams = b.streams[:i+1] // keeps the memory of the slices in it
		} else {
			b.streams = append(b.streams, streamAppend{})
		}
		b.streams[i].e = e
	}
	sd := &b.streams[i]
	sd.data = append(sd.data, d)
	sd.ids = append(sd.ids, eventID)
}

// encode marshals v, a stream's copy of a message; one that cannot be
// encoded (a non-finite number in free-form data) is logged and nil
// returned, and batch.add leaves it out: the stream misses that message,
// and the log says so. Events and telemetry are written without
// reflection (event.AppendEventJSON, AppendTelemetryJSON: the same bytes)
// unless a free-form value needs encoding/json.
func (p *Pipeline) encode(v any, streamID string) []byte {
	var fast []byte
	ok := false
	switch x := v.(type) {
	case *event.Event:
		fast, ok = event.AppendEventJSON(make([]byte, 0, 512), x)
	case event.Event:
		fast, ok = event.AppendEventJSON(make([]byte, 0, 512), &x)
	case *event.Telemetry:
		fast, ok = event.AppendTelemetryJSON(make([]byte, 0, 384), x)
	case event.Telemetry:
		fast, ok = event.AppendTelemetryJSON(make([]byte, 0, 384), &x)
	}
	if ok {
		return fast
	}
	b, err := json.Marshal(v)
	if err != nil {
		p.logger.Error("pipeline: message left out of a stream: cannot encode it", "stream_id", streamID, "error", err)
		return nil
	}
	return b
}

// Handle processes one bus batch (messages of one partition, in offset
// order); it is the bus handler.
func (p *Pipeline) Handle(ctx context.Context, msgs []hub.Message) error {
	s, _ := p.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	defer func() {
		s.reset()
		p.scratch.Put(s)
	}()
	b := batch{msgs: msgs, claims: s.claimBuf, scratch: s}
	err := p.match(ctx, msgs, &b)
	if err == nil {
		err = p.handOff(ctx, &b)
	}
	p.settle(ctx, msgs, &b, err == nil)
	s.claimBuf = b.claims
	return err
}

// match processes every message of msgs into b: it decodes and matches
// them all (but those no stream of their scope could take: skipper),
// claims the dedup keys of the events deduplicating streams
// matched at once (claimAll), pushes the sequenced events into the
// reorder buffers at once (sequenceAll), then applies the streams' rules
// to each message in turn. It fails, with what came before it processed,
// at the first event whose copy another node has in flight.
func (p *Pipeline) match(ctx context.Context, msgs []hub.Message, b *batch) error {
	ids := b.matchIDs[:0]
	now := p.now()
	var sk skipper
	for _, m := range msgs {
		if sk.skip(ctx, p, m.Value, now) {
			continue
		}
		env, err := event.Unmarshal(m.Value)
		if err != nil {
			p.logger.Warn("undecodable bus message skipped", "topic", m.Topic, "offset", m.Offset, "error", err)
			continue
		}
		if env.Kind != event.KindEvent && env.Kind != event.KindTelemetry {
			continue
		}
		// a stream another node started before the message was sent
		// takes it (several nodes; a no-op on one)
		if err := p.reg.CatchUp(ctx, env.IngestedAt); err != nil {
			p.logger.Warn("stream registry not caught up; streams started in the last second on other nodes may miss this batch", "error", err)
		}
		lo := len(b.matched)
		ids, b.matched = p.reg.Match(env, ids, b.matched)
		// an ordering stream of the scope tracks every sequenced event
		// of its sources, matched or not
		ordered := env.Kind == event.KindEvent && env.Event.Metadata.SequenceNumber > 0 && sk.orders(p, env)
		if len(b.matched) == lo && !ordered {
			continue
		}
		mm := matchedMsg{env: env, from: busRef{topic: m.Topic, partition: m.Partition, offset: m.Offset}, lo: lo, hi: len(b.matched), ordered: ordered}
		if env.Kind == event.KindEvent && env.Event.EventID != "" && wantsDedup(b.matched[lo:]) {
			mm.keyLo = len(b.keys)
			b.keys = appendDedupKey(b.keys, env)
			mm.keyHi = len(b.keys)
			b.nkeys++
		}
		b.ms = append(b.ms, mm)
	}
	b.matchIDs = ids
	p.claimAll(ctx, b)
	ms := b.ms
	for i := range ms {
		if ms[i].inFlight {
			ms = ms[:i]
			break
		}
	}
	p.sequenceAll(ms, b, now)
	for i := range ms {
		m := &ms[i]
		p.process(ctx, m, b.matched[m.lo:m.hi], b, now)
	}
	if len(ms) < len(b.ms) {
		return ErrInFlight
	}
	return nil
}

// skipper tells, from the head of a bus message, whether no stream
// could take it: a message of another kind than events and telemetry,
// or of a scope without an active stream of its kind (nor, for an event,
// an ordering stream). Such a message is skipped without being decoded:
// telemetry uploaded while nobody streams it costs the pipeline a look
// at its first bytes. The registry's answer for a scope is kept for a
// run of messages of that scope, as is whether the scope orders (a
// stream started meanwhile takes the next batch, as it would have taken
// the next message).
type skipper struct {
	org, env          []byte
	known, caughtUp   bool
	events, telemetry bool // the scope has an active stream of the kind
	order             bool // the scope has an ordering stream
	// current says the fields above are those of the message skip was
	// last asked about
	current bool
}

func (s *skipper) skip(ctx context.Context, p *Pipeline, b []byte, now time.Time) bool {
	org, env, kind, ok := event.Head(b)
	s.current = false
	if !ok {
		return false // decoded, or reported undecodable, by Unmarshal
	}
	if string(kind) != event.KindEvent && string(kind) != event.KindTelemetry {
		return true
	}
	if !s.known || !bytes.Equal(org, s.org) || !bytes.Equal(env, s.env) {
		if !s.caughtUp {
			// on several nodes, a stream another node started before
			// now (so before the message was sent) is known first
			s.caughtUp = true
			if err := p.reg.CatchUp(ctx, now); err != nil {
				p.logger.Warn("stream registry not caught up; streams started in the last second on other nodes may miss this batch", "error", err)
			}
		}
		s.org, s.env, s.known = org, env, true
		s.events, s.telemetry, s.order = p.reg.Scope(string(org), string(env))
	}
	s.current = true
	if string(kind) == event.KindTelemetry {
		return !s.telemetry
	}
	return !s.events && !s.order
}

// orders reports whether env's scope has an ordering stream: skip's
// answer for the message it was last asked about, else the registry's.
func (s *skipper) orders(p *Pipeline, env *event.Envelope) bool {
	if s.current {
		return s.order
	}
	return p.reg.Orders(env.Org, env.Env)
}

// manyAppender is the optional ability of a log to append to several
// streams in one durable write.
type manyAppender interface {
	AppendMany(ctx context.Context, ids []string, data [][][]byte) ([]int64, error)
}

// appendAll appends a batch's matches to their streams and returns
// where each stream's entries are, in b.order: with one write when the
// log can.
func (p *Pipeline) appendAll(ctx context.Context, b *batch) ([]appended, error) {
	out := make([]appended, len(b.order))
	if ma, ok := p.log.(manyAppender); ok && len(b.order) > 1 {
		data := slices.Grow(b.appendTo[:0], len(b.order))[:len(b.order)]
		b.appendTo = data
		for i := range b.order {
			sd := &b.streams[i]
			data[i], _ = p.filterTaken(ctx, sd.e, sd.data, sd.ids)
			data[i] = sealed(sd.e, data[i])
		}
		lasts, err := ma.AppendMany(ctx, b.order, data)
		if err != nil {
			return nil, err
		}
		for i, last := range lasts {
			if len(data[i]) > 0 {
				out[i] = appended{first: last - int64(len(data[i])) + 1, last: last}
			}
		}
		return out, nil
	}
	for i := range b.order {
		sd := &b.streams[i]
		a, err := p.appendStream(ctx, sd.e, sd.data, sd.ids)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// handOff appends every stream's matches, then hands all webhook streams'
// entries to the sink at once, so a neighbour stream costs no extra
// commit.
func (p *Pipeline) handOff(ctx context.Context, b *batch) error {
	type hand struct {
		e    *streams.Entry
		ents []hub.Entry
	}
	var hands []hand
	places, err := p.appendAll(ctx, b)
	if err != nil {
		return err
	}
	for i, id := range b.order {
		e := b.streams[i].e
		if p.sink == nil || e.Info.Delivery != "webhook" {
			continue
		}
		ents, err := p.entries(ctx, id, places[i])
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			continue
		}
		hands = append(hands, hand{e, ents})
	}
	switch len(hands) {
	case 0:
		return nil
	case 1:
		return p.sink.Accept(ctx, hands[0].e.Info, hands[0].ents)
	}
	if ms, ok := p.sink.(manySink); ok {
		infos := make([]hub.StreamInfo, len(hands))
		ents := make([][]hub.Entry, len(hands))
		for i, h := range hands {
			infos[i], ents[i] = h.e.Info, h.ents
		}
		return ms.AcceptMany(ctx, infos, ents)
	}
	errs := make([]error, len(hands))
	var wg sync.WaitGroup
	for i, h := range hands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.sink.Accept(ctx, h.e.Info, h.ents)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// settle finishes a batch. After a hand-off, the held messages it
// delivered are done and its dedup claims count as seen once nothing
// else owes them. After a failure, its changes to frequency and
// correlation state are undone, held messages of other batches it had
// released are stashed for Run to retry, those of this batch are dropped
// (the bus delivers them again) and its claims are given up unless a held
// copy still owes them.
func (p *Pipeline) settle(ctx context.Context, msgs []hub.Message, b *batch, ok bool) {
	finished := b.finished
	p.mu.Lock()
	if !ok {
		p.rollback(b.undo)
	}
	for _, hi := range b.held {
		if ok || hi.from.in(msgs) {
			if c := p.untrack(hi); c != nil {
				finished = append(finished, c)
			}
			continue
		}
		p.stashAll(hi)
	}
	for _, c := range b.claims {
		if c.release() {
			finished = append(finished, c)
		}
	}
	p.mu.Unlock()
	b.finished = finished
	if ok {
		b.done = p.claimsDone(ctx, finished, b.done)
	} else {
		b.done = p.claimsForgotten(ctx, finished, b.done)
	}
}
