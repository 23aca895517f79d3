package pipeline

import (
	"context"
	"errors"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub/event"
)

// ErrInFlight is returned by Handle when another node holds the dedup
// claim of an event in the batch: the bus retries the batch until that
// claim is done, forgotten or lapsed.
var ErrInFlight = errors.New("pipeline: event in flight on another node")

// dedupKey scopes an event id to its organization and environment: one
// tenant's ids never suppress another's.
func dedupKey(env *event.Envelope) string {
	return env.Org + "\x00" + env.Env + "\x00" + env.Event.EventID
}

// claim is this node's claim on an event's dedup key. The event counts as
// seen once nothing owes it a hand-off any more.
type claim struct {
	key  string
	by   busRef // the bus message that claimed it
	refs int    // hand-offs owed: each batch in flight with it, each held copy; p.mu
}

// release drops one reference and reports whether it was the last; p.mu
// must be held.
func (c *claim) release() bool {
	c.refs--
	return c.refs == 0
}

// claimEvent decides whether an event is a duplicate for deduplicating
// streams. Unless it is one, it returns this node's claim on key with a
// reference for b. It fails with ErrInFlight when another node's claim on
// key is live.
func (p *Pipeline) claimEvent(ctx context.Context, key string, from busRef, b *batch) (c *claim, dup bool, err error) {
	p.mu.Lock()
	if c = p.claims[key]; c != nil {
		if c.by != from {
			// Another copy of an event this node has in flight: that
			// one's bus message is not committed before its hand-off.
			p.mu.Unlock()
			return nil, true, nil
		}
		// The claiming message itself, delivered again.
		c.refs++
		b.claims = append(b.claims, c)
		p.mu.Unlock()
		return c, false, nil
	}
	// Reserve the key before asking the window, so that a copy handled
	// meanwhile by another partition of this node is suppressed.
	c = &claim{key: key, by: from, refs: 1}
	p.claims[key] = c
	p.mu.Unlock()
	st, err := p.dedup.Claim(ctx, key)
	if err != nil {
		p.logger.Warn("dedup window failed; delivering", "error", err)
		st = dedup.Unseen
	}
	if st == dedup.Unseen {
		p.mu.Lock()
		b.claims = append(b.claims, c)
		p.mu.Unlock()
		return c, false, nil
	}
	p.mu.Lock()
	if c.release() && p.claims[key] == c {
		delete(p.claims, key)
	}
	p.mu.Unlock()
	if st == dedup.InFlight {
		return nil, false, ErrInFlight
	}
	return nil, true, nil
}

// claimsDone records finished claims as seen in the window, then lets
// them go.
func (p *Pipeline) claimsDone(ctx context.Context, cs []*claim) {
	if len(cs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = c.key
	}
	if err := p.dedup.Done(ctx, keys...); err != nil {
		// The claims lapse after their lease: a later copy may pass.
		p.logger.Warn("dedup window failed to record delivered events", "events", len(keys), "error", err)
	}
	p.dropClaims(cs)
}

// claimsForgotten gives up the claims of a failed batch, so that its
// redelivery is not taken for a duplicate.
func (p *Pipeline) claimsForgotten(ctx context.Context, cs []*claim) {
	if len(cs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for _, c := range cs {
		if err := p.dedup.Forget(ctx, c.key); err != nil {
			// The claim lapses after its lease; the redelivery waits.
			p.logger.Warn("dedup window failed to forget a claim", "error", err)
		}
	}
	p.dropClaims(cs)
}

// dropClaims forgets claims nothing references any more.
func (p *Pipeline) dropClaims(cs []*claim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		if c.refs == 0 && p.claims[c.key] == c {
			delete(p.claims, c.key)
		}
	}
}
