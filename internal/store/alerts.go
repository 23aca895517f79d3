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

// Alerts stores emergency alerts.
type Alerts interface {
	CreateAlert(ctx context.Context, a Alert) error
	GetAlert(ctx context.Context, s Scope, id string) (Alert, error)
	// UpdateAlert writes a if the stored version is still prev.
	UpdateAlert(ctx context.Context, a Alert, prev int64) error
}
