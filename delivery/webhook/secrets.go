package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// StreamStore reads stream records; the secrets live in store.Stream.Secret.
type StreamStore interface {
	GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error)
}

// secretSet is the stored form of a stream's secrets (the JSON written by
// hub/streams: the current secret and, during a rotation, the previous
// one until previous_until).
type secretSet struct {
	Current       string    `json:"current"`
	Previous      string    `json:"previous,omitempty"`
	PreviousUntil time.Time `json:"previous_until,omitempty"`
}

// signingKeys are the decoded keys of a stream, with their HMAC states.
type signingKeys struct {
	current       []byte
	previous      []byte
	previousUntil time.Time
	fetched       time.Time
	macs          [2]*macPool // current's, previous's
}

// at returns the keys to sign with at now: the current one, then the
// previous one while the rotation overlap lasts.
func (k *signingKeys) at(now time.Time) [][]byte {
	if k.previous != nil && now.Before(k.previousUntil) {
		return [][]byte{k.current, k.previous}
	}
	return [][]byte{k.current}
}

// sign returns the webhook-signature header value of a message signed at
// now (as Sign with the keys of at), from the keys' kept HMAC states.
func (k *signingKeys) sign(now time.Time, id string, ts int64, body []byte) string {
	if k.macs[0] == nil { // keys not made by the cache
		return Sign(k.at(now), id, ts, body)
	}
	buf := make([]byte, 0, 96)
	buf = k.macs[0].appendSignature(buf, id, ts, body)
	if k.previous != nil && now.Before(k.previousUntil) {
		buf = append(buf, ' ')
		buf = k.macs[1].appendSignature(buf, id, ts, body)
	}
	return string(buf)
}

// secretCache caches streams' keys for ttl, so that a rotation reaches
// the signer within ttl and the store is read once per stream per ttl.
type secretCache struct {
	st  StreamStore
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex // guards m
	m  map[string]*signingKeys
}

func newSecretCache(st StreamStore, ttl time.Duration, now func() time.Time) *secretCache {
	return &secretCache{st: st, ttl: ttl, now: now, m: map[string]*signingKeys{}}
}

// get returns a stream's keys. A failed refresh keeps serving the keys
// already known.
func (c *secretCache) get(ctx context.Context, sc store.Scope, streamID string) (*signingKeys, error) {
	now := c.now()
	c.mu.Lock()
	k := c.m[streamID]
	c.mu.Unlock()
	if k != nil && now.Sub(k.fetched) < c.ttl {
		return k, nil
	}
	fresh, err := c.load(ctx, sc, streamID, now)
	if err != nil {
		if k != nil {
			return k, nil
		}
		return nil, err
	}
	c.mu.Lock()
	c.m[streamID] = fresh
	c.mu.Unlock()
	return fresh, nil
}

func (c *secretCache) load(ctx context.Context, sc store.Scope, streamID string, now time.Time) (*signingKeys, error) {
	rec, err := c.st.GetStream(ctx, sc, streamID)
	if err != nil {
		return nil, fmt.Errorf("webhook: signing secret of %s: %w", streamID, err)
	}
	var set secretSet
	if rec.Secret == "" || json.Unmarshal([]byte(rec.Secret), &set) != nil || set.Current == "" {
		return nil, fmt.Errorf("webhook: stream %s has no signing secret", streamID)
	}
	k := &signingKeys{fetched: now, previousUntil: set.PreviousUntil}
	if k.current, err = secretKey(set.Current); err != nil {
		return nil, err
	}
	k.macs[0] = newMACPool(k.current)
	if set.Previous != "" {
		if k.previous, err = secretKey(set.Previous); err != nil {
			k.previous = nil
		} else {
			k.macs[1] = newMACPool(k.previous)
		}
	}
	return k, nil
}

// forget drops a stream's keys.
func (c *secretCache) forget(streamID string) {
	c.mu.Lock()
	delete(c.m, streamID)
	c.mu.Unlock()
}
