package ws

import (
	"context"
	"sync"
)

// Acks stores the highest offset a key acknowledged per stream. A
// reconnect of that key to an at_least_once stream without last_offset
// resumes after it.
type Acks interface {
	// Ack records offset for (keyID, streamID) if it is higher than the
	// one stored.
	Ack(ctx context.Context, keyID, streamID string, offset int64) error
	// Acked returns the highest offset recorded; ok is false when none.
	Acked(ctx context.Context, keyID, streamID string) (offset int64, ok bool, err error)
}

// MemoryAcks is the in-process Acks: it lives as long as the process and
// serves one node.
type MemoryAcks struct {
	mu sync.Mutex // guards m
	m  map[ackKey]int64
}

type ackKey struct{ key, stream string }

var _ Acks = (*MemoryAcks)(nil)

// NewMemoryAcks returns an empty in-memory store.
func NewMemoryAcks() *MemoryAcks { return &MemoryAcks{m: map[ackKey]int64{}} }

// Ack keeps the highest offset.
func (a *MemoryAcks) Ack(_ context.Context, keyID, streamID string, offset int64) error {
	k := ackKey{keyID, streamID}
	a.mu.Lock()
	if cur, ok := a.m[k]; !ok || offset > cur {
		a.m[k] = offset
	}
	a.mu.Unlock()
	return nil
}

// Acked returns the highest offset acknowledged.
func (a *MemoryAcks) Acked(_ context.Context, keyID, streamID string) (int64, bool, error) {
	a.mu.Lock()
	off, ok := a.m[ackKey{keyID, streamID}]
	a.mu.Unlock()
	return off, ok, nil
}
