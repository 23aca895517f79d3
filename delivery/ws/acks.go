package ws

import (
	"context"
	"sync"
)

// Position is an acknowledged place in a stream: an offset of the history
// named Epoch ("" for an ack stored before epochs existed, which matches
// any history).
type Position struct {
	Offset int64
	Epoch  string
}

// Acks stores the highest position a key acknowledged per stream. A
// reconnect of that key to an at_least_once stream without last_offset
// resumes after it, or from the oldest retained offset with history_lost
// when the stream's epoch is no longer the ack's.
type Acks interface {
	// Ack records p for (keyID, streamID): within one epoch the highest
	// offset is kept; an ack of another epoch replaces the stored one.
	Ack(ctx context.Context, keyID, streamID string, p Position) error
	// Acked returns the position recorded; ok is false when none.
	Acked(ctx context.Context, keyID, streamID string) (p Position, ok bool, err error)
}

// MemoryAcks is the in-process Acks: it lives as long as the process and
// serves one node.
type MemoryAcks struct {
	mu sync.Mutex // guards m
	m  map[ackKey]Position
}

type ackKey struct{ key, stream string }

var _ Acks = (*MemoryAcks)(nil)

// NewMemoryAcks returns an empty in-memory store.
func NewMemoryAcks() *MemoryAcks { return &MemoryAcks{m: map[ackKey]Position{}} }

// Ack keeps the highest offset of an epoch.
func (a *MemoryAcks) Ack(_ context.Context, keyID, streamID string, p Position) error {
	k := ackKey{keyID, streamID}
	a.mu.Lock()
	if cur, ok := a.m[k]; !ok || cur.Epoch != p.Epoch || p.Offset > cur.Offset {
		a.m[k] = p
	}
	a.mu.Unlock()
	return nil
}

// Acked returns the position acknowledged.
func (a *MemoryAcks) Acked(_ context.Context, keyID, streamID string) (Position, bool, error) {
	a.mu.Lock()
	p, ok := a.m[ackKey{keyID, streamID}]
	a.mu.Unlock()
	return p, ok, nil
}
