package pipeline

import (
	"context"
	"slices"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
)

// busRef names the bus message a stream's message came from.
type busRef struct {
	topic     string
	partition int
	offset    int64
}

// in reports whether r is one of msgs, a batch of one partition in offset
// order.
func (r busRef) in(msgs []hub.Message) bool {
	if len(msgs) == 0 {
		return false
	}
	first, last := msgs[0], msgs[len(msgs)-1]
	return r.topic == first.Topic && r.partition == first.Partition && r.offset >= first.Offset && r.offset <= last.Offset
}

type partKey struct {
	topic     string
	partition int
}

// scope is an organization and environment: the reach of an order key.
type scope struct{ org, env string }

// streamData is an event's encoding for one stream.
type streamData struct {
	stream string
	data   []byte
}

// heldItem is a sequenced event, the value of its scope's reorder
// buffer.
type heldItem struct {
	env   *event.Envelope
	from  busRef
	takes []*streams.Entry // the ordering streams that take it (matched, not suppressed)
	claim *claim           // nil without deduplication
	// data is its encoding per stream, made at release; owed counts
	// the stream hand-offs still to do after a failed one; p.mu.
	data    []streamData
	owed    int
	tracked bool // kept in a buffer, not yet handed off; p.mu
	// kept is the copy a reorder buffer keeps of an item of its batch's
	// memory (keepHeld); nil: none
	kept *heldItem
}

// keepHeld is the reorder buffers' KeepWith: sequenceAll makes a batch's
// items in one allocation, and the few a buffer keeps past their push
// are copied out of it, so that a kept item holds no other.
func keepHeld(hi *heldItem) *heldItem {
	c := new(heldItem)
	*c = *hi
	hi.kept = c
	return c
}

// stashed is a released event's hand-off to one stream that failed and
// is retried by Run.
type stashed struct {
	hi *heldItem
	streamData
}

// track records a kept event until its hand-off; p.mu must be held.
func (p *Pipeline) track(hi *heldItem) {
	hi.tracked = true
	hi.takes = slices.Clone(hi.takes) // its own: they were part of its batch's matches
	p.holds[hi.from] = hi
	pk := partKey{hi.from.topic, hi.from.partition}
	offs := p.heldAt[pk]
	if offs == nil {
		offs = map[int64]int{}
		p.heldAt[pk] = offs
	}
	offs[hi.from.offset]++
	if hi.claim != nil {
		hi.claim.refs++
		p.keep(hi.claim)
	}
}

// untrack forgets a handed-off (or abandoned) event and returns its claim
// when nothing else owes it; p.mu must be held.
func (p *Pipeline) untrack(hi *heldItem) *claim {
	if !hi.tracked {
		return nil
	}
	hi.tracked = false
	if p.holds[hi.from] == hi {
		delete(p.holds, hi.from)
	}
	pk := partKey{hi.from.topic, hi.from.partition}
	if offs := p.heldAt[pk]; offs != nil {
		if offs[hi.from.offset]--; offs[hi.from.offset] <= 0 {
			delete(offs, hi.from.offset)
		}
		if len(offs) == 0 {
			delete(p.heldAt, pk)
		}
	}
	if hi.claim != nil && hi.claim.release() {
		return hi.claim
	}
	return nil
}

// held is the Subscription.Held of a topic: the oldest bus offset of the
// partition whose event is kept in a reorder buffer or waits for a retried
// hand-off.
func (p *Pipeline) held(topic string) func(partition int) (int64, bool) {
	return func(partition int) (int64, bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		first, ok := int64(0), false
		for off := range p.heldAt[partKey{topic, partition}] {
			if !ok || off < first {
				first, ok = off, true
			}
		}
		return first, ok
	}
}

// stashAll queues a released event's hand-offs for Run to retry; p.mu
// must be held.
func (p *Pipeline) stashAll(hi *heldItem) {
	hi.owed = len(hi.data)
	for _, sd := range hi.data {
		p.stash = append(p.stash, stashed{hi: hi, streamData: sd})
	}
}

// flushHeld hands off what reorder buffers release after their wait, and
// retries released events whose hand-off failed. What fails again waits
// for the next call; events of streams that no longer exist are dropped.
func (p *Pipeline) flushHeld(ctx context.Context) {
	p.mu.Lock()
	now := p.now()
	out := p.stash
	p.stash = nil
	var released []*heldItem
	for sc, s := range p.seqs {
		for _, it := range s.Expire(now) {
			released = append(released, it.Value)
		}
		if s.Buffered() == 0 && !p.reg.Orders(sc.org, sc.env) {
			delete(p.seqs, sc)
		}
	}
	p.mu.Unlock()
	var finished []*claim
	for _, hi := range released {
		// released after its wait: never late
		var base []byte
		hi.data = hi.data[:0]
		for _, t := range hi.takes {
			// the stream as it is now: it may have been stopped or changed
			if e := p.reg.ByID(t.Rec.ID); e != nil {
				hi.data = append(hi.data, streamData{stream: e.Rec.ID, data: p.eventData(ctx, hi.env, e, &base, nil, false)})
			}
		}
		p.mu.Lock()
		if len(hi.data) == 0 {
			if c := p.untrack(hi); c != nil {
				finished = append(finished, c)
			}
		}
		hi.owed = len(hi.data)
		p.mu.Unlock()
		for _, sd := range hi.data {
			out = append(out, stashed{hi: hi, streamData: sd})
		}
	}
	p.claimsDone(ctx, finished, nil)
	// per stream, in order
	var ids []string
	per := map[string][]stashed{}
	for _, s := range out {
		if _, ok := per[s.stream]; !ok {
			ids = append(ids, s.stream)
		}
		per[s.stream] = append(per[s.stream], s)
	}
	for _, id := range ids {
		items := per[id]
		var err error
		if e := p.reg.ByID(id); e != nil {
			data := make([][]byte, len(items))
			ids := make([]string, len(items))
			for i, s := range items {
				data[i], ids[i] = s.data, s.hi.env.Event.EventID
			}
			err = p.deliver(ctx, e, data, ids)
		}
		p.mu.Lock()
		finished = finished[:0]
		if err != nil {
			p.stash = append(p.stash, items...)
		} else {
			for _, s := range items {
				if s.hi.owed--; s.hi.owed <= 0 {
					if c := p.untrack(s.hi); c != nil {
						finished = append(finished, c)
					}
				}
			}
		}
		p.mu.Unlock()
		if err != nil {
			if ctx.Err() == nil {
				p.logger.Error("handing off released messages failed; retrying", "stream_id", id, "messages", len(items), "error", err)
			}
			continue
		}
		p.claimsDone(ctx, finished, nil)
	}
}
