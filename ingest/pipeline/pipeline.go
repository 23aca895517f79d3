// Package pipeline is the consume → filter → publish pipeline of the hub:
// it reads telemetry and events from the bus in a consumer group, matches
// each message against the compiled stream filters of its tenant, applies
// each stream's processing rules (deduplication, per-source ordering,
// telemetry frequency, correlation, enrichment, metadata) and appends the
// message to the stream's log, from which websocket and webhook sinks
// deliver. The bus offset is committed when the handler returns, after
// every append: at-least-once, with event-id deduplication for streams
// that ask for it.
//
// Backpressure: bus → pipeline blocks (the next batch of a partition waits
// for the previous one); pipeline → log never blocks on a client.
// Messages held by a reorder buffer wait at most OrderWait; a crash in that
// window loses their place in order but the bus redelivers them (their
// offsets were committed only if the batch that carried them returned,
// which holds: release happens before the next commit of that partition
// or, for gaps, within OrderWait after).
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/filters/order"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/streams"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
)

// Config of the pipeline.
type Config struct {
	Group       string        // consumer group, default "fleethub-pipeline"
	Topics      []string      // default telemetry and events
	OrderWait   time.Duration // longest wait for a sequence gap, default 2s
	MaxBuffered int           // per source, default 1000
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

// Pipeline is the hub's matching pipeline.
type Pipeline struct {
	cfg    Config
	bus    hub.Bus
	reg    *streams.Registry
	log    hub.Log
	dedup  dedup.Window
	enrich Enricher
	sink   Sink
	logger *slog.Logger
	now    func() time.Time

	mu         sync.Mutex // guards seqs and throttle
	seqs       map[string]*order.Sequencer[[]byte]
	throttle   *lru.Cache[string, int64]
	correlated *expirable.LRU[string, int]
}

// New makes a pipeline. enrich and sink may be nil.
func New(cfg Config, bus hub.Bus, reg *streams.Registry, log hub.Log, window dedup.Window, enrich Enricher, sink Sink, logger *slog.Logger) *Pipeline {
	if cfg.Group == "" {
		cfg.Group = "fleethub-pipeline"
	}
	if len(cfg.Topics) == 0 {
		cfg.Topics = []string{hub.TopicTelemetry, hub.TopicEvents}
	}
	if cfg.OrderWait == 0 {
		cfg.OrderWait = 2 * time.Second
	}
	if cfg.MaxBuffered == 0 {
		cfg.MaxBuffered = 1000
	}
	th, _ := lru.New[string, int64](100_000)
	return &Pipeline{cfg: cfg, bus: bus, reg: reg, log: log, dedup: window, enrich: enrich, sink: sink, logger: logger, now: time.Now,
		seqs: map[string]*order.Sequencer[[]byte]{}, throttle: th,
		correlated: expirable.NewLRU[string, int](100_000, nil, 24*time.Hour)}
}

// Run consumes until ctx ends.
func (p *Pipeline) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(p.cfg.Topics)+1)
	for _, t := range p.cfg.Topics {
		wg.Add(1)
		go func(t string) {
			defer wg.Done()
			if err := p.bus.Subscribe(ctx, hub.Subscription{Topic: t, Group: p.cfg.Group, Start: hub.StartEarliest}, p.Handle); err != nil {
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
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			out := map[string][][]byte{}
			p.mu.Lock()
			now := p.now()
			for id, s := range p.seqs {
				for _, it := range s.Expire(now) {
					out[id] = append(out[id], it.Value)
				}
			}
			p.mu.Unlock()
			for id, data := range out {
				p.appendTo(ctx, id, data)
			}
		}
	}
}

func (p *Pipeline) appendTo(ctx context.Context, id string, data [][]byte) {
	e := p.reg.ByID(id)
	if e == nil {
		return
	}
	if err := p.deliver(ctx, e, data); err != nil {
		p.logger.Error("appending released messages failed", "stream_id", id, "error", err)
	}
}

// deliver appends data to a stream's log and hands webhook streams'
// entries to the sink.
func (p *Pipeline) deliver(ctx context.Context, e *streams.Entry, data [][]byte) error {
	id := e.Rec.ID
	last, err := p.log.Append(ctx, id, data)
	if err != nil {
		return err
	}
	if p.sink == nil || e.Info.Delivery != "webhook" {
		return nil
	}
	ents, err := p.log.Read(ctx, id, last-int64(len(data))+1, len(data))
	if err != nil {
		return err
	}
	return p.sink.Accept(ctx, e.Info, ents)
}

// batch collects appends per stream for one bus batch.
type batch struct {
	order   []string
	entries map[string]*streams.Entry
	data    map[string][][]byte
}

func (b *batch) add(e *streams.Entry, d []byte) {
	id := e.Rec.ID
	if _, ok := b.data[id]; !ok {
		b.order = append(b.order, id)
		b.entries[id] = e
	}
	b.data[id] = append(b.data[id], d)
}

// Handle processes one bus batch; it is the bus handler.
func (p *Pipeline) Handle(ctx context.Context, msgs []hub.Message) error {
	b := batch{entries: map[string]*streams.Entry{}, data: map[string][][]byte{}}
	var ids []string
	var matched []*streams.Entry
	now := p.now()
	for _, m := range msgs {
		env, err := event.Unmarshal(m.Value)
		if err != nil {
			p.logger.Warn("undecodable bus message skipped", "topic", m.Topic, "offset", m.Offset, "error", err)
			continue
		}
		if env.Kind != event.KindEvent && env.Kind != event.KindTelemetry {
			continue
		}
		ids, matched = p.reg.Match(env, ids, matched[:0])
		if len(matched) == 0 {
			continue
		}
		p.process(ctx, env, matched, &b, now)
	}
	// append every stream's matches, then hand all webhook streams' entries
	// to the sink at once, so a neighbour stream costs no extra commit
	type hand struct {
		e    *streams.Entry
		ents []hub.Entry
	}
	var hands []hand
	for _, id := range b.order {
		e, data := b.entries[id], b.data[id]
		last, err := p.log.Append(ctx, id, data)
		if err != nil {
			return err
		}
		if p.sink == nil || e.Info.Delivery != "webhook" {
			continue
		}
		ents, err := p.log.Read(ctx, id, last-int64(len(data))+1, len(data))
		if err != nil {
			return err
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

func (p *Pipeline) process(ctx context.Context, env *event.Envelope, matched []*streams.Entry, b *batch, now time.Time) {
	var base []byte
	dupChecked, dup := false, false
	for _, e := range matched {
		p.reg.Count(e.Rec.ID, "matched", 1)
		streams.MarkMatched(e, now, env.IngestedAt)
		switch env.Kind {
		case event.KindEvent:
			ev := env.Event
			rules := e.Cfg.Events.ProcessingRules
			if rules != nil && rules.Deduplication && ev.EventID != "" {
				if !dupChecked {
					dupChecked = true
					var err error
					if dup, err = p.dedup.Seen(ctx, ev.EventID); err != nil {
						p.logger.Warn("dedup window failed; delivering", "error", err)
						dup = false
					}
				}
				if dup {
					p.reg.Count(e.Rec.ID, "duplicates_suppressed", 1)
					continue
				}
			}
			data := p.eventData(ctx, env, e, &base)
			if rules != nil && rules.EventOrdering {
				src := ev.Source.VehicleID
				if src == "" {
					src = ev.Source.DriverID + "|" + ev.Source.TripID
				}
				p.mu.Lock()
				seq := p.seqs[e.Rec.ID]
				if seq == nil {
					seq, _ = order.New[[]byte](order.Config{MaxBuffered: p.cfg.MaxBuffered, MaxWait: p.cfg.OrderWait})
					p.seqs[e.Rec.ID] = seq
				}
				released := seq.Push(src, ev.Metadata.SequenceNumber, data, now)
				p.mu.Unlock()
				for _, it := range released {
					b.add(e, it.Value)
				}
				continue
			}
			b.add(e, data)
		case event.KindTelemetry:
			t := env.Telemetry
			if every := streams.Frequency(e); every > 0 {
				key := e.Rec.ID + "|" + t.VehicleID + "|" + t.DataType
				ts := t.Timestamp.UnixMilli()
				p.mu.Lock()
				last, seen := p.throttle.Get(key)
				keep := !seen || ts-last >= every.Milliseconds() || ts < last
				if keep {
					p.throttle.Add(key, ts)
				}
				p.mu.Unlock()
				if !keep {
					p.reg.Count(e.Rec.ID, "throttled", 1)
					continue
				}
			}
			if base == nil {
				base, _ = json.Marshal(t)
			}
			b.add(e, base)
		}
	}
}

// eventData encodes an event for a stream: the shared encoding when the
// stream asks for nothing special, else a copy with its enrichment.
func (p *Pipeline) eventData(ctx context.Context, env *event.Envelope, e *streams.Entry, base *[]byte) []byte {
	ev := env.Event
	cfg := e.Cfg.Events
	rules := cfg.ProcessingRules
	noMeta := cfg.StreamConfig != nil && cfg.StreamConfig.IncludeMetadata != nil && !*cfg.StreamConfig.IncludeMetadata
	special := noMeta || (rules != nil && (rules.CorrelationEnabled || len(rules.Enrichment) > 0))
	if !special {
		if *base == nil {
			*base, _ = json.Marshal(ev)
		}
		return *base
	}
	c := *ev
	extra := map[string]any{}
	for k, v := range ev.Enrichment {
		extra[k] = v
	}
	if rules != nil && rules.CorrelationEnabled && ev.Metadata.CorrelationID != "" {
		key := env.Org + "|" + env.Env + "|" + e.Rec.ID + "|" + ev.Metadata.CorrelationID
		p.mu.Lock()
		n, _ := p.correlated.Get(key)
		n++
		p.correlated.Add(key, n)
		p.mu.Unlock()
		extra["correlation"] = map[string]any{"correlation_id": ev.Metadata.CorrelationID, "position": n, "related_events": n - 1}
	}
	if rules != nil && len(rules.Enrichment) > 0 && p.enrich != nil {
		for k, v := range p.enrich.Enrich(ctx, env.Org, env.Env, ev, rules.Enrichment) {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		c.Enrichment = extra
	}
	if noMeta {
		c.Metadata = event.Metadata{}
		b, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		delete(m, "metadata")
		b, _ = json.Marshal(m)
		return b
	}
	b, _ := json.Marshal(c)
	return b
}
