package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
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

// process applies the rules of each stream that matched m to it and
// adds what the streams take to b; for an event whose source's sequence
// the pipeline tracks (m.ordered), sequenceAll has pushed it into its
// reorder buffer, and the ordering streams that take it get what that
// released. claimAll has decided whether it is a duplicate for
// deduplicating streams.
func (p *Pipeline) process(ctx context.Context, m *matchedMsg, matched []*streams.Entry, b *batch, now time.Time) {
	env := m.env
	var base []byte
	for _, e := range matched {
		p.reg.Count(e.Rec.ID, "matched", 1)
		streams.MarkMatched(e, now, env.IngestedAt)
		switch env.Kind {
		case event.KindEvent:
			rules := e.Cfg.Events.ProcessingRules
			if m.dup && rules != nil && rules.Deduplication {
				p.reg.Count(e.Rec.ID, "duplicates_suppressed", 1)
				continue
			}
			if m.ordered && streams.Ordered(e) {
				continue // in m.held.takes
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
					if e.Shape != nil {
						p.addAlerts(b, e, t) // alerts are not throttled
					}
					continue
				}
			}
			if e.Shape != nil {
				p.addShaped(b, e, t, &base)
				continue
			}
			if base == nil {
				base = p.encode(t, e.Rec.ID)
			}
			b.add(e, base, "")
		}
	}
	if m.push < 0 {
		return
	}
	from := 0
	if m.push > 0 {
		from = b.ends[m.push-1]
	}
	for _, it := range b.released[from:b.ends[m.push]] {
		if it.Value == m.held {
			p.release(ctx, it.Value, it.Late, b, &base)
		} else {
			p.release(ctx, it.Value, it.Late, b, nil)
		}
	}
}

// orderSource is the order key of an event within its scope: its
// vehicle, else its driver and trip.
func orderSource(ev *event.Event) string {
	if ev.Source.VehicleID != "" {
		return ev.Source.VehicleID
	}
	return ev.Source.DriverID + "|" + ev.Source.TripID
}

// sequenceAll pushes the events of ms whose source's sequence the
// pipeline tracks into their scopes' reorder buffers, whatever streams
// took them, so that every sequence number of a source is known before
// filters; process hands what each push released to the ordering
// streams that take it. The pushes are made in the messages' order under
// one lock, a scope's run of them in one call. An event kept for an
// ordering stream is tracked until it is handed off. A redelivered
// message whose event is still buffered (its batch failed after the
// buffer kept it) is not pushed again.
func (p *Pipeline) sequenceAll(ms []matchedMsg, b *batch, now time.Time) {
	b.takes = slices.Grow(b.takes[:0], len(b.matched)) // never moved: each event's takes are part of it
	n := 0
	for i := range ms {
		if ms[i].ordered {
			n++
		}
	}
	// the batch's items, in memory later batches reuse: an item a
	// reorder buffer keeps past the batch is copied out of it (keepHeld)
	b.items = slices.Grow(b.items[:0], n)[:n]
	slab := b.items
	for i := range ms {
		m := &ms[i]
		m.push = -1
		if !m.ordered {
			continue
		}
		lo := len(b.takes)
		for _, e := range b.matched[m.lo:m.hi] {
			if (!m.dup || !dedups(e)) && streams.Ordered(e) {
				b.takes = append(b.takes, e)
			}
		}
		m.held = &slab[len(slab)-n]
		n--
		*m.held = heldItem{env: m.env, from: m.from, claim: m.claim}
		if len(b.takes) > lo {
			m.held.takes = b.takes[lo:len(b.takes):len(b.takes)]
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var seq *order.Sequencer[*heldItem]
	var sc scope
	pushed := 0
	flush := func() {
		if len(b.pushes) > 0 {
			b.released, b.ends = seq.AppendPushAll(b.released, b.ends, b.pushes, now)
			b.pushes = b.pushes[:0]
		}
	}
	for i := range ms {
		m := &ms[i]
		if !m.ordered {
			continue
		}
		if len(p.holds) > 0 {
			if _, held := p.holds[m.from]; held {
				continue
			}
		}
		if s := (scope{m.env.Org, m.env.Env}); seq == nil || s != sc {
			flush()
			if sc, seq = s, p.seqs[s]; seq == nil {
				var err error
				if seq, err = order.New[*heldItem](order.Config{MaxBuffered: p.cfg.MaxBuffered, MaxWait: p.cfg.OrderWait, MaxSources: p.cfg.MaxSources}); err != nil {
					panic(fmt.Sprintf("pipeline: sequencer: %v", err)) // New checked the config
				}
				seq.KeepWith(keepHeld)
				p.seqs[s] = seq
			}
		}
		ev := m.env.Event
		b.pushes = append(b.pushes, order.Pushed[*heldItem]{Source: orderSource(ev), Seq: ev.Metadata.SequenceNumber, Value: m.held})
		m.push = pushed
		pushed++
	}
	flush()
	for i := range ms {
		if m := &ms[i]; m.push >= 0 && m.held.kept != nil {
			m.held = m.held.kept // what its buffer released or keeps
		}
	}
	// an event its own push did not release was kept
	for i := range ms {
		m := &ms[i]
		if m.push < 0 || len(m.held.takes) == 0 {
			continue
		}
		from := 0
		if m.push > 0 {
			from = b.ends[m.push-1]
		}
		if !slices.ContainsFunc(b.released[from:b.ends[m.push]], func(it order.Item[*heldItem]) bool { return it.Value == m.held }) {
			p.track(m.held)
		}
	}
}

// release adds an event the reorder buffer released to its ordering
// streams in b. Its encoding is made now, so a correlation position
// follows the stream's delivery order; for an event of another batch
// the position is not given back if b fails (the event is kept with its
// encodings and retried). An event released by the batch that brought it
// uses the streams it matched in this batch, and shares base, its
// encoding for the streams that took it as it came (nil: none shared).
func (p *Pipeline) release(ctx context.Context, hi *heldItem, late bool, b *batch, base *[]byte) {
	if base == nil {
		base = new([]byte)
	}
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
		d := p.eventData(ctx, hi.env, e, base, us, late)
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
			*base = p.encode(ev, e.Rec.ID)
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
		out := p.encode(c, e.Rec.ID)
		var m map[string]any
		if out == nil || json.Unmarshal(out, &m) != nil {
			return nil
		}
		delete(m, "metadata")
		return p.encode(m, e.Rec.ID)
	}
	return p.encode(c, e.Rec.ID)
}
