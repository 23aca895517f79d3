package pipeline

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/fleethub/fleethub/filters/order"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
)

// undo reverts one change of a batch to the frequency or correlation
// state when the batch fails.
type undo struct {
	correlation bool   // a correlation position was taken, else a frequency mark set
	key         string // of correlated or throttle
	set, prev   int64  // the frequency mark set and the one it replaced
	had         bool   // whether it replaced one
}

// rollback reverts changes, newest first; p.mu must be held. A position
// is given back (other batches may have taken later ones meanwhile); a
// frequency mark is restored unless a later message moved it on.
func (p *Pipeline) rollback(us []undo) {
	for i := len(us) - 1; i >= 0; i-- {
		u := us[i]
		if u.correlation {
			if n, ok := p.correlated.Peek(u.key); ok && n > 1 {
				p.correlated.Add(u.key, n-1)
			} else if ok {
				p.correlated.Remove(u.key)
			}
			continue
		}
		if cur, ok := p.throttle.Peek(u.key); !ok || cur != u.set {
			continue
		}
		if u.had {
			p.throttle.Add(u.key, u.prev)
		} else {
			p.throttle.Remove(u.key)
		}
	}
}

// dedups reports whether a stream deduplicates events.
func dedups(e *streams.Entry) bool {
	ev := e.Cfg.Events
	return ev != nil && ev.ProcessingRules != nil && ev.ProcessingRules.Deduplication
}

// wantsDedup reports whether a stream of matched deduplicates events.
func wantsDedup(matched []*streams.Entry) bool {
	return slices.ContainsFunc(matched, dedups)
}

// process applies each matched stream's rules to one message and adds
// what the streams take to b; ordered says the message is an event whose
// source's sequence the pipeline tracks (see sequence). It fails only
// when another node's copy of a deduplicated event is in flight.
func (p *Pipeline) process(ctx context.Context, env *event.Envelope, from busRef, matched []*streams.Entry, ordered bool, b *batch, now time.Time) error {
	var base []byte
	var c *claim // this node's claim on the event's dedup key
	dup := false
	if env.Kind == event.KindEvent && env.Event.EventID != "" && wantsDedup(matched) {
		var err error
		if c, dup, err = p.claimEvent(ctx, dedupKey(env), from, b); err != nil {
			return err
		}
	}
	var takes []*streams.Entry // ordering streams that take the event
	if ordered {
		takes = make([]*streams.Entry, 0, len(matched))
	}
	for _, e := range matched {
		p.reg.Count(e.Rec.ID, "matched", 1)
		streams.MarkMatched(e, now, env.IngestedAt)
		switch env.Kind {
		case event.KindEvent:
			rules := e.Cfg.Events.ProcessingRules
			if dup && rules != nil && rules.Deduplication {
				p.reg.Count(e.Rec.ID, "duplicates_suppressed", 1)
				continue
			}
			if ordered && streams.Ordered(e) {
				takes = append(takes, e)
				continue
			}
			b.add(e, p.eventData(ctx, env, e, &base, &b.undo, false), env.Event.EventID)
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
					b.undo = append(b.undo, undo{key: key, set: ts, prev: last, had: seen})
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
			b.add(e, base, "")
		}
	}
	if ordered {
		p.sequence(ctx, env, &heldItem{env: env, from: from, takes: takes, claim: c}, b, now)
	}
	return nil
}

// orderSource is the order key of an event within its scope: its
// vehicle, else its driver and trip.
func orderSource(ev *event.Event) string {
	if ev.Source.VehicleID != "" {
		return ev.Source.VehicleID
	}
	return ev.Source.DriverID + "|" + ev.Source.TripID
}

// sequence pushes an event into its scope's reorder buffer, whatever
// streams took it, so that every sequence number of a source is known
// before filters, and adds what the buffer releases to the ordering
// streams in b. An event kept for an ordering stream is tracked until it
// is handed off. A redelivered message whose event is still buffered
// (its batch failed after the buffer kept it) is not pushed again.
func (p *Pipeline) sequence(ctx context.Context, env *event.Envelope, hi *heldItem, b *batch, now time.Time) {
	sc := scope{env.Org, env.Env}
	p.mu.Lock()
	if _, held := p.holds[hi.from]; held {
		p.mu.Unlock()
		return
	}
	seq := p.seqs[sc]
	if seq == nil {
		seq, _ = order.New[*heldItem](order.Config{MaxBuffered: p.cfg.MaxBuffered, MaxWait: p.cfg.OrderWait, MaxSources: p.cfg.MaxSources})
		p.seqs[sc] = seq
	}
	released := seq.Push(orderSource(env.Event), env.Event.Metadata.SequenceNumber, hi, now)
	kept := true
	for _, it := range released {
		if it.Value == hi {
			kept = false
		}
	}
	if kept && len(hi.takes) > 0 {
		p.track(hi)
	}
	p.mu.Unlock()
	for _, it := range released {
		p.release(ctx, it.Value, it.Late, b)
	}
}

// release adds an event the reorder buffer released to its ordering
// streams in b. Its encoding is made now, so a correlation position
// follows the stream's delivery order; for an event of another batch
// the position is not given back if b fails (the event is kept with its
// encodings and retried). An event released by the batch that brought it
// uses the streams it matched in this batch.
func (p *Pipeline) release(ctx context.Context, hi *heldItem, late bool, b *batch) {
	var base []byte
	var us *[]undo
	here := hi.from.in(b.msgs)
	if here {
		us = &b.undo
	}
	hi.data = hi.data[:0]
	for _, e := range hi.takes {
		if !here {
			if e = p.reg.ByID(e.Rec.ID); e == nil {
				continue
			}
		}
		d := p.eventData(ctx, hi.env, e, &base, us, late)
		if hi.tracked {
			hi.data = append(hi.data, streamData{stream: e.Rec.ID, data: d})
		}
		b.add(e, d, hi.env.Event.EventID)
	}
	if hi.tracked {
		b.held = append(b.held, hi)
	}
}

// eventData encodes an event for a stream: the shared encoding when the
// stream asks for nothing special, else a copy with its enrichment.
func (p *Pipeline) eventData(ctx context.Context, env *event.Envelope, e *streams.Entry, base *[]byte, us *[]undo, late bool) []byte {
	ev := env.Event
	cfg := e.Cfg.Events
	rules := cfg.ProcessingRules
	noMeta := cfg.StreamConfig != nil && cfg.StreamConfig.IncludeMetadata != nil && !*cfg.StreamConfig.IncludeMetadata
	special := late || noMeta || (rules != nil && (rules.CorrelationEnabled || len(rules.Enrichment) > 0))
	if !special {
		if *base == nil {
			*base, _ = json.Marshal(ev)
		}
		return *base
	}
	c := *ev
	c.Metadata.Late = late
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
		if us != nil {
			*us = append(*us, undo{correlation: true, key: key})
		}
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
		out, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		delete(m, "metadata")
		out, _ = json.Marshal(m)
		return out
	}
	out, _ := json.Marshal(c)
	return out
}
