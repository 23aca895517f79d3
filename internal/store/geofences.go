package store

import (
	"context"
	"time"
)

// Geofence is a stored circle or polygon. Area is the JSON of the shape.
type Geofence struct {
	ID        string
	Org       string
	Env       string
	Name      string
	Type      string // circle or polygon
	Area      []byte
	Metadata  []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Geofences stores geofences.
type Geofences interface {
	CreateGeofence(ctx context.Context, g Geofence) error
	GetGeofence(ctx context.Context, s Scope, id string) (Geofence, error)
	// ListGeofences returns the geofences of a scope, oldest first.
	ListGeofences(ctx context.Context, s Scope) ([]Geofence, error)
	// UpdateGeofence replaces a geofence of the scope; ErrNotFound when absent.
	UpdateGeofence(ctx context.Context, g Geofence) error
	DeleteGeofence(ctx context.Context, s Scope, id string) error
}
