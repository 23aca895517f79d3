package pipeline

import (
	"context"
	"encoding/json"
	"time"

	"github.com/fleethub/fleethub/filters/order"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/streams"
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

// wantsDedup reports whether a stream of matched deduplicates events.
func wantsDedup(matched []*streams.Entry) bool {
	for _, e := range matched {
		if ev := e.Cfg.Events; ev != nil && ev.ProcessingRules != nil && ev.ProcessingRules.Deduplication {
			return true
		}
	}
	return false
}

// process applies each matched stream's rules to one message and adds
// what the streams take to b. It fails only when another node's copy of a
// deduplicated event is in flight.
func (p *Pipeline) process(ctx context.Context, env *event.Envelope, from busRef, matched []*streams.Entry, b *batch, now time.Time) error {
	var base []byte
	var c *claim // this node's claim on the event's dedup key
	dup := false
	if env.Kind == event.KindEvent && env.Event.EventID != "" && wantsDedup(matched) {
		var err error
		if c, dup, err = p.claimEvent(ctx, dedupKey(env), from, b); err != nil {
			return err
		}
	}
	for _, e := range matched {
		p.reg.Count(e.Rec.ID, "matched", 1)
		streams.MarkMatched(e, now, env.IngestedAt)
		switch env.Kind {
		case event.KindEvent:
			ev := env.Event
			rules := e.Cfg.Events.ProcessingRules
			if dup && rules != nil && rules.Deduplication {
				p.reg.Count(e.Rec.ID, "duplicates_suppressed", 1)
				continue
			}
			data := p.eventData(ctx, env, e, &base, b)
			if rules != nil && rules.EventOrdering {
				p.sequence(e, ev, &heldItem{stream: e.Rec.ID, data: data, from: from, claim: c}, b, now)
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
			b.add(e, base)
		}
	}
	return nil
}

// sequence pushes an event into its stream's reorder buffer and adds what
// the buffer releases to b. An event the buffer keeps is tracked until it
// is handed off.
func (p *Pipeline) sequence(e *streams.Entry, ev *event.Event, hi *heldItem, b *batch, now time.Time) {
	src := ev.Source.VehicleID
	if src == "" {
		src = ev.Source.DriverID + "|" + ev.Source.TripID
	}
	hi.key = holdKey{stream: e.Rec.ID, source: src, seq: ev.Metadata.SequenceNumber}
	p.mu.Lock()
	defer p.mu.Unlock()
	seq := p.seqs[e.Rec.ID]
	if seq == nil {
		seq, _ = order.New[*heldItem](order.Config{MaxBuffered: p.cfg.MaxBuffered, MaxWait: p.cfg.OrderWait})
		p.seqs[e.Rec.ID] = seq
	}
	released := seq.Push(src, ev.Metadata.SequenceNumber, hi, now)
	kept := true
	for _, it := range released {
		if it.Value == hi {
			kept = false
		}
	}
	// A kept event is buffered, unless the buffer already held its
	// sequence number (a copy, which the buffer drops): the buffered one
	// is tracked already.
	if _, buffered := p.holds[hi.key]; kept && !buffered {
		p.track(hi)
	}
	for _, it := range released {
		b.add(e, it.Value.data)
		if it.Value.tracked {
			b.held = append(b.held, it.Value)
		}
	}
}

// eventData encodes an event for a stream: the shared encoding when the
// stream asks for nothing special, else a copy with its enrichment.
func (p *Pipeline) eventData(ctx context.Context, env *event.Envelope, e *streams.Entry, base *[]byte, b *batch) []byte {
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
		b.undo = append(b.undo, undo{correlation: true, key: key})
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
