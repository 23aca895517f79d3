package dedup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Defaults of NewLocal and NewRedis.
const (
	DefaultSize   = 100_000
	DefaultTTL    = 10 * time.Minute
	DefaultPrefix = "fleethub:dedup:"
	// DefaultLease is how long a claim lasts when its holder neither
	// finishes nor forgets it (a crash): longer than a batch in flight
	// plus a reorder buffer's wait (2 s), short enough that a message
	// redelivered after a crash waits little for it.
	DefaultLease = 15 * time.Second
)

// ErrEmptyID is returned for an empty id: a message without an id cannot
// be deduplicated.
var ErrEmptyID = errors.New("dedup: empty id")

// State is what Claim found for an id.
type State int

const (
	// Unseen: the id was neither seen nor claimed; the caller now holds
	// its claim and must call Done or Forget.
	Unseen State = iota
	// InFlight: another caller holds a live claim on the id and has not
	// finished; its message may still fail.
	InFlight
	// Duplicate: the id was seen within the TTL.
	Duplicate
)

// Window remembers recently seen ids.
type Window interface {
	// Seen records id and reports whether it had been recorded (or
	// claimed) before, within the window's TTL.
	Seen(ctx context.Context, id string) (dup bool, err error)
	// Claim reserves id for a caller about to process its message, for
	// the window's lease, unless it was seen or claimed already.
	Claim(ctx context.Context, id string) (State, error)
	// Done records claimed ids as seen, for the TTL, once their
	// messages were handed off.
	Done(ctx context.Context, ids ...string) error
	// Forget removes id's record or claim, so that it is Unseen again.
	Forget(ctx context.Context, id string) error
}

var (
	_ Window = (*Local)(nil)
	_ Window = (*Redis)(nil)
)

// Local is an in-memory window of one node. It is safe for concurrent use.
type Local struct {
	lease time.Duration
	ttl   time.Duration
	size  int
	now   func() time.Time // the clock of records and claims

	mu     sync.Mutex                        // guards lru and claims
	lru    *simplelru.LRU[string, time.Time] // id → when it was recorded
	claims map[string]time.Time              // id → end of its lease; mu must be held
}

// LocalOption configures NewLocal.
type LocalOption func(*Local)

// WithClock sets the clock a Local reads for its records' TTL and its
// claims' lease (default time.Now); tests move it ahead instead of
// waiting.
func WithClock(now func() time.Time) LocalOption {
	return func(l *Local) {
		if now != nil {
			l.now = now
		}
	}
}

// NewLocal returns a window remembering up to size ids for ttl each; zero
// or negative values mean DefaultSize and DefaultTTL. Claims last
// DefaultLease.
func NewLocal(size int, ttl time.Duration, opts ...LocalOption) *Local {
	if size <= 0 {
		size = DefaultSize
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	lru, err := simplelru.NewLRU[string, time.Time](size, nil)
	if err != nil {
		panic(err) // only for a size below 1, excluded above
	}
	l := &Local{lease: DefaultLease, ttl: ttl, size: size, now: time.Now, lru: lru, claims: map[string]time.Time{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Seen records id and reports whether it was already recorded and not
// expired, or is claimed. It does not block; ctx is unused.
func (l *Local) Seen(_ context.Context, id string) (bool, error) {
	if id == "" {
		return false, ErrEmptyID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.state(id, now) != Unseen {
		return true, nil
	}
	// Clone: the id may point into a larger or reused buffer.
	l.lru.Add(strings.Clone(id), now)
	return false, nil
}

// Claim reserves id unless it is recorded or claimed. It does not block;
// ctx is unused.
func (l *Local) Claim(_ context.Context, id string) (State, error) {
	if id == "" {
		return Unseen, ErrEmptyID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claim(id, l.now()), nil
}

// ClaimAll implements Batcher, under one lock.
func (l *Local) ClaimAll(_ context.Context, ids []string, states []State) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	states = states[:len(ids)]
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for i, id := range ids {
		states[i] = l.claim(id, now)
	}
	return nil
}

// claim reserves id unless it is recorded or claimed; mu must be held.
func (l *Local) claim(id string, now time.Time) State {
	if s := l.state(id, now); s != Unseen {
		return s
	}
	if len(l.claims) >= l.size {
		// Claims outlive their lease only when their holder never
		// finished them: drop those before growing.
		for k, end := range l.claims {
			if !now.Before(end) {
				delete(l.claims, k)
			}
		}
	}
	l.claims[strings.Clone(id)] = now.Add(l.lease)
	return Unseen
}

// state reports what id is now; mu must be held.
func (l *Local) state(id string, now time.Time) State {
	// an expired record stays until evicted for size or recorded again
	// (Add then renews it); Peek does not move it
	if at, ok := l.lru.Peek(id); ok && now.Sub(at) < l.ttl {
		return Duplicate
	}
	if end, ok := l.claims[id]; ok && now.Before(end) {
		return InFlight
	}
	return Unseen
}

// Done records ids as seen and drops their claims.
func (l *Local) Done(_ context.Context, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, id := range ids {
		delete(l.claims, id)
		l.lru.Add(strings.Clone(id), now)
	}
	return nil
}

// Forget removes id's record and claim, so that its next Seen reports
// false.
func (l *Local) Forget(_ context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.claims, id)
	l.lru.Remove(id)
	return nil
}

// ForgetAll implements Batcher, under one lock.
func (l *Local) ForgetAll(_ context.Context, ids ...string) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		delete(l.claims, id)
		l.lru.Remove(id)
	}
	return nil
}

// Len returns the number of ids recorded, expired ones not yet removed
// included (claims not included).
func (l *Local) Len() int { return l.lru.Len() }
