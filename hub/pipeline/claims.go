package pipeline

import (
	"context"
	"errors"
	"hash/maphash"
	"strings"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub/event"
)

// ErrInFlight is returned by Handle when another node holds the dedup
// claim of an event in the batch: the bus retries the batch until that
// claim is done, forgotten or lapsed.
var ErrInFlight = errors.New("pipeline: event in flight on another node")

// appendDedupKey appends the dedup key of an event to dst: its id scoped
// to its organization and environment, so that one tenant's ids never
// suppress another's.
func appendDedupKey(dst []byte, env *event.Envelope) []byte {
	dst = append(dst, env.Org...)
	dst = append(dst, 0)
	dst = append(dst, env.Env...)
	dst = append(dst, 0)
	return append(dst, env.Event.EventID...)
}

// claim is this node's claim on an event's dedup key. The event counts as
// seen once nothing owes it a hand-off any more.
type claim struct {
	key  string
	hash uint64 // of key, in claimIndex
	by   busRef // the bus message that claimed it
	refs int    // hand-offs owed: each batch in flight with it, each held copy; p.mu
	// own says key is a string of its own, not part of the string of
	// its batch's keys; p.mu
	own bool
	// indexed says the claim is in p.claims, next is the next one there
	// with the same hash; p.mu
	indexed bool
	next    *claim
}

// claimIndex finds this node's claims by key: a map from a 64-bit hash
// of the key (a map of integers costs less than one of strings) to the
// claims with that hash, which are compared by key. Guarded by p.mu.
type claimIndex struct {
	seed maphash.Seed
	m    map[uint64]*claim
}

func newClaimIndex() claimIndex {
	return claimIndex{seed: maphash.MakeSeed(), m: map[uint64]*claim{}}
}

// hash is the hash of a key in x.
func (x *claimIndex) hash(key string) uint64 { return maphash.String(x.seed, key) }

// get returns the claim on key, whose hash is h; nil if none.
func (x *claimIndex) get(key string, h uint64) *claim {
	for c := x.m[h]; c != nil; c = c.next {
		if c.key == key {
			return c
		}
	}
	return nil
}

// put adds c, whose key has no claim in x.
func (x *claimIndex) put(c *claim) {
	c.next = x.m[c.hash]
	x.m[c.hash] = c
	c.indexed = true
}

// drop removes c from x, if it is there.
func (x *claimIndex) drop(c *claim) {
	if !c.indexed {
		return
	}
	c.indexed = false
	first := x.m[c.hash]
	if first == c {
		if c.next == nil {
			delete(x.m, c.hash)
		} else {
			x.m[c.hash] = c.next
		}
		c.next = nil
		return
	}
	for prev := first; prev != nil; prev = prev.next {
		if prev.next == c {
			prev.next, c.next = c.next, nil
			return
		}
	}
}

// release drops one reference and reports whether it was the last; p.mu
// must be held.
func (c *claim) release() bool {
	c.refs--
	return c.refs == 0
}

// keep gives a claim that outlives its batch (its event waits in a
// reorder buffer) a key of its own, so that it does not keep the batch's
// keys; p.mu must be held. (It keeps the batch's claims, allocated
// together: a few kilobytes for as long as the event waits.)
func (p *Pipeline) keep(c *claim) {
	if !c.own {
		c.key, c.own = strings.Clone(c.key), true
	}
}

// claimAll decides, for each message of b that a deduplicating stream
// matched, whether its event is a duplicate. Unless it is one, the
// message gets this node's claim on its key with a reference for b; it
// is marked inFlight when another node's claim on the key is live. A copy
// of an event this node has in flight (another message's claim, of this
// batch or another) is a duplicate. The keys new to this node are
// reserved first, so that a copy handled meanwhile by another partition
// is suppressed, then asked of the window in one call.
func (p *Pipeline) claimAll(ctx context.Context, b *batch) {
	if len(b.keys) == 0 {
		return
	}
	if p.private != nil {
		p.recordAll(ctx, b)
		return
	}
	keys := string(b.keys) // one string for the batch: each key is part of it
	var slab []claim       // the batch's new claims, allocated at once
	p.mu.Lock()
	for i := range b.ms {
		m := &b.ms[i]
		if m.keyHi == 0 {
			continue
		}
		m.key = keys[m.keyLo:m.keyHi]
		h := p.claims.hash(m.key)
		if c := p.claims.get(m.key, h); c != nil {
			if c.by != m.from {
				// Another copy of an event this node has in flight: that
				// one's bus message is not committed before its hand-off.
				m.dup = true
				continue
			}
			// The claiming message itself, delivered again.
			c.refs++
			m.claim = c
			b.claims = append(b.claims, c)
			continue
		}
		if len(slab) == cap(slab) {
			slab = make([]claim, 0, b.nkeys)
		}
		slab = append(slab, claim{key: m.key, hash: h, by: m.from, refs: 1})
		m.claim = &slab[len(slab)-1]
		p.claims.put(m.claim)
		b.ask = append(b.ask, m.key)
		b.asked = append(b.asked, i)
	}
	p.mu.Unlock()
	if len(b.ask) == 0 {
		return
	}
	b.states = append(b.states[:0], make([]dedup.State, len(b.ask))...)
	if err := dedup.ClaimAll(ctx, p.dedup, b.ask, b.states); err != nil {
		p.logger.Warn("dedup window failed; delivering", "events", len(b.ask), "error", err)
		clear(b.states) // Unseen
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for j, i := range b.asked {
		m := &b.ms[i]
		c := m.claim
		switch b.states[j] {
		case dedup.Unseen:
			b.claims = append(b.claims, c)
			continue
		case dedup.InFlight:
			m.inFlight = true
		default:
			m.dup = true
		}
		m.claim = nil
		if c.release() {
			p.claims.drop(c)
		}
	}
}

// recordAll is claimAll with a window of this process alone
// (dedup.Private): the keys new to the window are recorded as they are
// claimed, in one call, and forgotten if the batch fails, so that
// nothing is left to record after the hand-off. The window then answers
// Duplicate for a copy of an event this node has in flight or held, as
// the claim index would (the first copy's bus message is not committed
// before its hand-off; after a crash the window starts again from the
// logs), and the index is not used: the one message whose claim it
// would find, a held event's own message delivered again after its
// batch failed, is found among the held events.
func (p *Pipeline) recordAll(ctx context.Context, b *batch) {
	keys := string(b.keys) // one string for the batch: each key is part of it
	p.mu.Lock()
	held := len(p.holds) > 0
	for i := range b.ms {
		m := &b.ms[i]
		if m.keyHi == 0 {
			continue
		}
		m.key = keys[m.keyLo:m.keyHi]
		if held {
			if hi := p.holds[m.from]; hi != nil && hi.claim != nil && hi.claim.key == m.key {
				// The message of a held event, delivered again: its
				// claim (and its record) stand.
				hi.claim.refs++
				m.claim = hi.claim
				b.claims = append(b.claims, m.claim)
				continue
			}
		}
		b.ask = append(b.ask, m.key)
		b.asked = append(b.asked, i)
	}
	p.mu.Unlock()
	if len(b.ask) == 0 {
		return
	}
	b.states = append(b.states[:0], make([]dedup.State, len(b.ask))...)
	if err := p.private.RecordAll(ctx, b.ask, b.states); err != nil {
		p.logger.Warn("dedup window failed; delivering", "events", len(b.ask), "error", err)
		clear(b.states) // Unseen
	}
	var slab []claim // the batch's new claims, allocated at once
	for j, i := range b.asked {
		m := &b.ms[i]
		switch b.states[j] {
		case dedup.Unseen:
			if slab == nil {
				slab = make([]claim, 0, len(b.asked)-j)
			}
			slab = append(slab, claim{key: m.key, by: m.from, refs: 1})
			m.claim = &slab[len(slab)-1]
			b.claims = append(b.claims, m.claim)
		case dedup.InFlight:
			m.inFlight = true
		default:
			m.dup = true
		}
	}
}

// claimsDone records finished claims as seen in the window, then lets
// them go. keys is memory for their keys, returned for reuse. A window
// of this process alone recorded them when they were claimed
// (recordAll): nothing is left to do.
func (p *Pipeline) claimsDone(ctx context.Context, cs []*claim, keys []string) []string {
	if len(cs) == 0 || p.private != nil {
		return keys
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	keys = claimKeys(keys, cs)
	if err := p.dedup.Done(ctx, keys...); err != nil {
		// The claims lapse after their lease: a later copy may pass.
		p.logger.Warn("dedup window failed to record delivered events", "events", len(keys), "error", err)
	}
	p.dropClaims(cs)
	return keys
}

// claimsForgotten gives up the claims of a failed batch, so that its
// redelivery is not taken for a duplicate. keys is memory for their
// keys, returned for reuse.
func (p *Pipeline) claimsForgotten(ctx context.Context, cs []*claim, keys []string) []string {
	if len(cs) == 0 {
		return keys
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	keys = claimKeys(keys, cs)
	if err := dedup.ForgetAll(ctx, p.dedup, keys...); err != nil {
		// The claims lapse after their lease; the redelivery waits.
		p.logger.Warn("dedup window failed to forget claims", "events", len(keys), "error", err)
	}
	p.dropClaims(cs)
	return keys
}

// claimKeys sets keys to the keys of cs, reusing its memory.
func claimKeys(keys []string, cs []*claim) []string {
	keys = keys[:0]
	for _, c := range cs {
		keys = append(keys, c.key)
	}
	return keys
}

// dropClaims forgets claims nothing references any more.
func (p *Pipeline) dropClaims(cs []*claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if c.refs == 0 {
			p.claims.drop(c)
		}
	}
}
