package ws

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Plans gives the plan of a key ("starter", "professional",
// "enterprise"; anything else counts as starter), which sets how many
// websocket connections the key and its organization may hold open.
type Plans interface {
	Plan(ctx context.Context, org, env, keyID string) (string, error)
}

// PlanFunc adapts a function to Plans.
type PlanFunc func(ctx context.Context, org, env, keyID string) (string, error)

// Plan calls f.
func (f PlanFunc) Plan(ctx context.Context, org, env, keyID string) (string, error) {
	return f(ctx, org, env, keyID)
}

// Conns counts open connections per key and per organization. Acquire
// takes a slot for one connection when the key holds fewer than keyCap
// and the organization fewer than orgCap, else it returns a
// *CapError; release gives the slot back and may be called more than
// once (only the first call counts).
type Conns interface {
	Acquire(ctx context.Context, org, keyID string, keyCap, orgCap int) (release func(), err error)
}

// CapError is a connection refused because a cap is reached.
type CapError struct {
	Scope string // "key" or "organization"
	Cap   int
}

func (e *CapError) Error() string {
	return fmt.Sprintf("ws: too many connections: the %s holds its %d", e.Scope, e.Cap)
}

// Default connection caps per key, by plan; an organization may hold
// DefaultOrgCapFactor times the key cap of the connecting key's plan.
const (
	DefaultStarterConns      = 100
	DefaultProfessionalConns = 1000
	DefaultEnterpriseConns   = 10000
	DefaultOrgCapFactor      = 10
)

// DefaultKeyCaps returns the default per-key caps by plan.
func DefaultKeyCaps() map[string]int {
	return map[string]int{"starter": DefaultStarterConns, "professional": DefaultProfessionalConns, "enterprise": DefaultEnterpriseConns}
}

// caps returns the key and organization caps of a plan.
func (c *Config) caps(plan string) (keyCap, orgCap int) {
	keyCap, ok := c.KeyCaps[plan]
	if !ok || keyCap <= 0 {
		keyCap = c.KeyCaps["starter"]
	}
	if keyCap <= 0 {
		keyCap = DefaultStarterConns
	}
	return keyCap, keyCap * c.OrgCapFactor
}

// acquire takes a connection slot for the key before the upgrade. With no
// Plans configured connections are not capped.
func (s *Server) acquire(org, env, keyID string) (func(), error) {
	if s.cfg.Plans == nil {
		return func() {}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), acksTimeout)
	defer cancel()
	plan, err := s.cfg.Plans.Plan(ctx, org, env, keyID)
	if err != nil {
		// a key that just authenticated: a failed lookup counts as starter
		s.logger.Warn("ws: key plan lookup failed; starter caps apply", "key_id", keyID, "err", err)
	}
	keyCap, orgCap := s.cfg.caps(plan)
	release, err := s.counts.Acquire(ctx, org, keyID, keyCap, orgCap)
	if err != nil {
		if ce, ok := err.(*CapError); ok {
			return nil, &RequestError{Status: fasthttp.StatusTooManyRequests, Code: "too_many_connections",
				Message: fmt.Sprintf("at most %d websocket connections per %s", ce.Cap, ce.Scope), Cause: err}
		}
		return nil, &RequestError{Status: fasthttp.StatusInternalServerError, Code: "internal_error", Message: "could not count connections", Cause: err}
	}
	return release, nil
}

// MemoryConns counts connections of this process.
type MemoryConns struct {
	mu   sync.Mutex // guards keys and orgs
	keys map[string]int
	orgs map[string]int
}

var _ Conns = (*MemoryConns)(nil)

// NewMemoryConns returns an empty count.
func NewMemoryConns() *MemoryConns {
	return &MemoryConns{keys: map[string]int{}, orgs: map[string]int{}}
}

// Acquire implements Conns.
func (m *MemoryConns) Acquire(_ context.Context, org, keyID string, keyCap, orgCap int) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys[keyID] >= keyCap {
		return nil, &CapError{Scope: "key", Cap: keyCap}
	}
	if m.orgs[org] >= orgCap {
		return nil, &CapError{Scope: "organization", Cap: orgCap}
	}
	m.keys[keyID]++
	m.orgs[org]++
	var once sync.Once
	return func() { once.Do(func() { m.release(org, keyID) }) }, nil
}

func (m *MemoryConns) release(org, keyID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys[keyID]--; m.keys[keyID] <= 0 {
		delete(m.keys, keyID)
	}
	if m.orgs[org]--; m.orgs[org] <= 0 {
		delete(m.orgs, org)
	}
}

// Count returns the connections held by a key and by an organization.
func (m *MemoryConns) Count(org, keyID string) (key, orgN int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.keys[keyID], m.orgs[org]
}

// held returns every key and organization holding a connection.
func (m *MemoryConns) held() (keys, orgs []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.keys {
		keys = append(keys, k)
	}
	for o := range m.orgs {
		orgs = append(orgs, o)
	}
	return keys, orgs
}

// slot is a connection's hold on its cap: released when the connection
// ends, or after abandonAfter when the upgrade's response could not be
// written (fasthttp then never runs the connection).
type slot struct {
	release func()
	started atomic.Bool
	timer   *time.Timer
}

func newSlot(release func(), abandonAfter time.Duration) *slot {
	sl := &slot{release: release}
	sl.timer = time.AfterFunc(abandonAfter, func() {
		if sl.started.CompareAndSwap(false, true) {
			sl.release()
		}
	})
	return sl
}

// start marks the connection running; it reports false when the slot was
// already given up (the connection then runs without one).
func (sl *slot) start() bool {
	sl.timer.Stop()
	return sl.started.CompareAndSwap(false, true)
}
