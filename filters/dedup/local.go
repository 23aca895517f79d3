package dedup

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// Defaults of NewLocal and NewRedis.
const (
	DefaultSize   = 100_000
	DefaultTTL    = 10 * time.Minute
	DefaultPrefix = "fleethub:dedup:"
)

// ErrEmptyID is returned for an empty id: a message without an id cannot
// be deduplicated.
var ErrEmptyID = errors.New("dedup: empty id")

// Window reports whether an id was seen within the window.
type Window interface {
	// Seen records id and reports whether it had been recorded before,
	// within the window's TTL.
	Seen(ctx context.Context, id string) (dup bool, err error)
}

var (
	_ Window = (*Local)(nil)
	_ Window = (*Redis)(nil)
)

// Local is an in-memory window of one node. It is safe for concurrent use.
type Local struct {
	mu  sync.Mutex // makes Peek+Add atomic
	lru *expirable.LRU[string, struct{}]
}

// NewLocal returns a window remembering up to size ids for ttl each; zero
// or negative values mean DefaultSize and DefaultTTL.
func NewLocal(size int, ttl time.Duration) *Local {
	if size <= 0 {
		size = DefaultSize
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Local{lru: expirable.NewLRU[string, struct{}](size, nil, ttl)}
}

// Seen records id and reports whether it was already recorded and not
// expired. It does not block; ctx is unused.
func (l *Local) Seen(_ context.Context, id string) (bool, error) {
	if id == "" {
		return false, ErrEmptyID
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Peek, unlike Contains, ignores an expired entry the cleanup
	// goroutine has not removed yet; Add then renews it.
	if _, ok := l.lru.Peek(id); ok {
		return true, nil
	}
	// Clone: the id may point into a larger or reused buffer.
	l.lru.Add(strings.Clone(id), struct{}{})
	return false, nil
}

// Forget removes id, so that its next Seen reports false.
func (l *Local) Forget(_ context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	l.lru.Remove(id)
	return nil
}

// Len returns the number of ids held, expired ones not yet removed
// included.
func (l *Local) Len() int { return l.lru.Len() }
