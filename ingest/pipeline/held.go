package pipeline

import (
	"context"

	"github.com/fleethub/fleethub/hub"
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

// holdKey is a place in a stream's reorder buffer.
type holdKey struct {
	stream, source string
	seq            int64
}

// heldItem is an event for a stream with event_ordering, the value of its
// reorder buffer.
type heldItem struct {
	stream  string
	key     holdKey
	data    []byte
	from    busRef
	claim   *claim // nil without deduplication
	tracked bool   // kept in a buffer, not yet handed off; p.mu
}

// track records a kept event until its hand-off; p.mu must be held.
func (p *Pipeline) track(hi *heldItem) {
	hi.tracked = true
	p.holds[hi.key] = hi
	pk := partKey{hi.from.topic, hi.from.partition}
	offs := p.heldAt[pk]
	if offs == nil {
		offs = map[int64]int{}
		p.heldAt[pk] = offs
	}
	offs[hi.from.offset]++
	if hi.claim != nil {
		hi.claim.refs++
	}
}

// untrack forgets a handed-off (or abandoned) event and returns its claim
// when nothing else owes it; p.mu must be held.
func (p *Pipeline) untrack(hi *heldItem) *claim {
	if !hi.tracked {
		return nil
	}
	hi.tracked = false
	if p.holds[hi.key] == hi {
		delete(p.holds, hi.key)
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

// flushHeld hands off what reorder buffers release after their wait, and
// retries released events whose hand-off failed. What fails again waits
// for the next call; events of streams that no longer exist are dropped.
func (p *Pipeline) flushHeld(ctx context.Context) {
	p.mu.Lock()
	now := p.now()
	out := p.stash
	p.stash = map[string][]*heldItem{}
	for id, s := range p.seqs {
		for _, it := range s.Expire(now) {
			out[id] = append(out[id], it.Value)
		}
		if s.Buffered() == 0 && p.reg.ByID(id) == nil {
			delete(p.seqs, id)
		}
	}
	p.mu.Unlock()
	for id, items := range out {
		var err error
		if e := p.reg.ByID(id); e != nil {
			data := make([][]byte, len(items))
			for i, hi := range items {
				data[i] = hi.data
			}
			err = p.deliver(ctx, e, data)
		}
		p.mu.Lock()
		var finished []*claim
		if err != nil {
			p.stash[id] = append(items, p.stash[id]...)
		} else {
			for _, hi := range items {
				if c := p.untrack(hi); c != nil {
					finished = append(finished, c)
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
		p.claimsDone(ctx, finished)
	}
}
