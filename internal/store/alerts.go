package store

import (
	"context"
	"time"
)

// Alert is a stored emergency alert; Doc is the JSON of the resource.
type Alert struct {
	ID        string
	Org       string
	Env       string
	Status    string
	Doc       []byte
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
	ExpiresAt time.Time
}

// AlertFilter selects alerts of a scope, newest first. Status "active"
// matches active alerts not yet expired at Now, "expired" also matches
// active alerts whose expiry passed at Now. A listing continues after
// (BeforeTime, BeforeID) when BeforeID is set.
type AlertFilter struct {
	Scope
	Status     string
	Now        time.Time
	BeforeTime time.Time
	BeforeID   string
	Limit      int // 0: every match
}

// Alerts stores emergency alerts.
type Alerts interface {
	CreateAlert(ctx context.Context, a Alert) error
	GetAlert(ctx context.Context, s Scope, id string) (Alert, error)
	// UpdateAlert writes a if the stored version is still prev.
	UpdateAlert(ctx context.Context, a Alert, prev int64) error
	// ListAlerts returns the alerts matching f, newest first (by creation
	// time, then id).
	ListAlerts(ctx context.Context, f AlertFilter) ([]Alert, error)
}
