// Package store declares the persistence interfaces of Fleethub, one per
// aggregate, and the errors every backend returns. Backends live in
// store/sqlite (embedded default) and store/postgres; both pass the contract
// suite in store/storetest.
//
// Every record is scoped by (organization, environment). A lookup outside
// the caller's scope answers ErrNotFound, exactly as a missing record.
//
// Every backend is safe for concurrent use; a write that must not be lost
// to a concurrent one says how it is kept (a version compared, a lease
// held, a claim no other caller gets).
package store

import (
	"context"
	"errors"
	"time"
)

// Errors shared by every backend.
var (
	ErrNotFound = errors.New("store: not found")
	ErrConflict = errors.New("store: conflict")
)

// Scope is the tenant boundary of every record.
type Scope struct {
	Org string
	Env string
}

// APIKey is a stored key. The secret itself is never stored: Hash is the
// hex HMAC-SHA-256 of the key under the server secret.
type APIKey struct {
	ID          string
	Name        string
	Org         string
	Env         string
	Permissions []string
	Plan        string // starter, professional, enterprise, custom; "" means environment default
	RPM         int    // 0: the plan's rate
	Hash        string
	Hint        string // last four characters of the key, for listings
	CreatedAt   time.Time
	LastUsedAt  time.Time // zero when never used
	RevokedAt   time.Time // zero when active
}

// Keys stores API keys.
type Keys interface {
	CreateKey(ctx context.Context, k APIKey) error
	// KeyByHash returns a key, revoked or not, by its hash.
	KeyByHash(ctx context.Context, hash string) (APIKey, error)
	ListKeys(ctx context.Context, s Scope) ([]APIKey, error)
	// RevokeKey marks a key of scope s revoked; ErrNotFound when absent.
	RevokeKey(ctx context.Context, s Scope, id string, at time.Time) (APIKey, error)
	// TouchKeys records last use times in bulk.
	TouchKeys(ctx context.Context, used map[string]time.Time) error
}

// Secrets keeps server secrets that every node must share.
type Secrets interface {
	// Secret returns the secret called name, storing gen() first when
	// there is none yet. Concurrent callers all get the same value.
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
}

// Stats is what health reports about a backend.
type Stats struct {
	Driver          string
	OpenConnections int
	InUse           int
}

// Backend is a whole store: every aggregate plus lifecycle.
type Backend interface {
	Keys
	Secrets
	Trips
	Streams
	Devices
	Geofences
	Incidents
	Alerts
	Optimizations
	Contacts
	AlertSchedule
	Notifications
	Vehicles
	Tokens
	SpeedingSummaries
	Ping(ctx context.Context) error
	Stats() Stats
	Close() error
}

// Scope returns the key's scope.
func (k APIKey) Scope() Scope { return Scope{Org: k.Org, Env: k.Env} }
