package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

const (
	// shardCount is the number of independently locked shards of a Memory.
	shardCount = 64
	// sweepMinCalls is the fewest Allow calls on a shard between two lazy
	// sweeps of it. A shard is swept again after max(sweepMinCalls, the
	// size the last sweep left) calls, so sweeping costs O(1) amortized
	// per call.
	sweepMinCalls = 1024
)

// Memory is an in-process limiter: a map of buckets split into 64 shards by
// a seeded hash of the key, each shard under its own mutex. The zero value
// is not usable; call NewMemory.
type Memory struct {
	now    func() time.Time
	seed   maphash.Seed
	shards [shardCount]shard
}

type shard struct {
	mu      sync.Mutex
	buckets map[string]*bucket // lock must be held
	calls   int                // Allow calls since the last sweep; lock must be held
	due     int                // calls at which to sweep next; lock must be held
	_       [32]byte           // pad to a 64-byte cache line against false sharing
}

// bucket is one key's state: its GCRA theoretical arrival time in Unix
// nanoseconds. A bucket with tat <= now is full, exactly like a missing one.
type bucket struct {
	tat     int64
	revoked bool
}

// NewMemory returns an empty Memory reading time from now (time.Now when
// nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	m := &Memory{now: now, seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].buckets = make(map[string]*bucket)
		m.shards[i].due = sweepMinCalls
	}
	return m
}

func (m *Memory) shard(key string) *shard {
	return &m.shards[maphash.String(m.seed, key)%shardCount]
}

// Allow takes one token from key's bucket under lim. It never blocks; ctx
// is accepted for symmetry with Redis. Once key's bucket exists Allow does
// not allocate.
func (m *Memory) Allow(_ context.Context, key string, lim Limit) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	g, err := lim.gcra(time.Nanosecond)
	if err != nil {
		return Result{}, err
	}
	now := m.now().UnixNano()
	s := m.shard(key)

	s.mu.Lock()
	b := s.buckets[key]
	if b == nil {
		// Clone so that key, often a view of a request buffer, never
		// escapes: the lookup above and the hot path stay allocation-free.
		b = &bucket{}
		s.buckets[strings.Clone(key)] = b
	}
	if b.revoked {
		s.mu.Unlock()
		return Result{}, ErrRevoked
	}
	tat, ok := g.admit(b.tat, now)
	if ok {
		b.tat = tat
	}
	if s.calls++; s.calls >= s.due {
		s.sweep(now)
	}
	s.mu.Unlock()

	return g.result(ok, tat, now, time.Nanosecond), nil
}

// Revoke makes every later Allow for key return ErrRevoked. Revocations are
// kept until the Memory is dropped; sweeps never evict them.
func (m *Memory) Revoke(_ context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.buckets[key]; b != nil {
		b.revoked = true
		return nil
	}
	s.buckets[strings.Clone(key)] = &bucket{revoked: true}
	return nil
}

// revoked reports whether key has been revoked.
func (m *Memory) revoked(key string) bool {
	s := m.shard(key)
	s.mu.Lock()
	b := s.buckets[key]
	r := b != nil && b.revoked
	s.mu.Unlock()
	return r
}

// Sweep evicts every bucket that is full again at now, that is, idle for
// at least its full-refill time, and returns how many it evicted. Eviction
// is lossless: a missing bucket is a full one. Allow already sweeps each
// shard lazily; call Sweep to reclaim memory after a burst of one-off keys.
func (m *Memory) Sweep(now time.Time) int {
	n := 0
	t := now.UnixNano()
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.sweep(t)
		s.mu.Unlock()
	}
	return n
}

// sweep evicts the full, unrevoked buckets of s at now; lock must be held.
func (s *shard) sweep(now int64) int {
	n := 0
	for k, b := range s.buckets {
		if !b.revoked && b.tat <= now {
			delete(s.buckets, k)
			n++
		}
	}
	s.calls = 0
	s.due = max(sweepMinCalls, len(s.buckets))
	return n
}

// Len returns the number of buckets held, revoked keys included.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.buckets)
		s.mu.Unlock()
	}
	return n
}
