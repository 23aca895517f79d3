package webhook_test

import (
	"context"
	"sync"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// writes is what the dispatcher wrote to the store for one stream, row
// by row.
type writes struct {
	queued   int // rows inserted into the delivery log (leased or not)
	parked   int // rows parked
	attempts int // outcomes of attempts recorded
	outcomes int // outcomes recorded, attempts or not
	released int // leased rows given back unattempted
	claimed  int // rows leased by a claim
}

// countingStore is a backend that counts the rows the dispatcher writes,
// per stream.
type countingStore struct {
	backend
	mu     sync.Mutex
	stream map[string]string // delivery id → stream id
	by     map[string]*writes
}

func newCountingStore(b backend) *countingStore {
	return &countingStore{backend: b, stream: map[string]string{}, by: map[string]*writes{}}
}

// of returns the counts of a stream; lock held.
func (c *countingStore) of(stream string) *writes {
	w := c.by[stream]
	if w == nil {
		w = &writes{}
		c.by[stream] = w
	}
	return w
}

// get returns a copy of a stream's counts.
func (c *countingStore) get(stream string) writes {
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.of(stream)
}

func (c *countingStore) EnqueueDeliveries(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	ins, err := c.backend.EnqueueDeliveries(ctx, ds)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range ds {
		c.stream[d.ID] = d.StreamID
		if d.Park && err == nil {
			c.of(d.StreamID).parked++
		}
	}
	for _, d := range ins {
		c.of(d.StreamID).queued++
	}
	return ins, err
}

func (c *countingStore) UnparkDeliveries(ctx context.Context, streamID string, limit int) (int64, error) {
	n, err := c.backend.UnparkDeliveries(ctx, streamID, limit)
	c.mu.Lock()
	c.of(streamID).queued += int(n)
	c.mu.Unlock()
	return n, err
}

func (c *countingStore) ClaimDeliveries(ctx context.Context, cl store.DeliveryClaim) ([]store.Delivery, error) {
	ds, err := c.backend.ClaimDeliveries(ctx, cl)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range ds {
		c.stream[d.ID] = d.StreamID
		c.of(d.StreamID).claimed++
	}
	return ds, err
}

func (c *countingStore) RecordDeliveries(ctx context.Context, owner string, rs []store.DeliveryResult) error {
	err := c.backend.RecordDeliveries(ctx, owner, rs)
	if err != nil {
		return err // nothing written: the recorder tries the batch again
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range rs {
		w := c.of(c.stream[r.ID])
		w.outcomes++
		if r.Attempted {
			w.attempts++
		}
	}
	return nil
}

func (c *countingStore) ReleaseDeliveries(ctx context.Context, owner string, ids []string, next time.Time) error {
	err := c.backend.ReleaseDeliveries(ctx, owner, ids, next)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.of(c.stream[id]).released++
	}
	return err
}
