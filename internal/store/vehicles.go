package store

import (
	"context"
	"time"
)

// Vehicle is a stored vehicle profile; Doc is the JSON of the resource.
// FleetID is kept beside the document so listings can filter on it ("" when
// the vehicle belongs to no fleet).
type Vehicle struct {
	ID        string
	Org       string
	Env       string
	FleetID   string
	Doc       []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// VehicleFleet is a vehicle of a scope and the fleet its profile names.
type VehicleFleet struct {
	Scope
	ID, FleetID string
}

// VehicleFilter selects vehicles of a scope in id order. FleetID matches
// exactly when set. AfterID continues a listing after that id.
type VehicleFilter struct {
	Scope
	FleetID string
	AfterID string
	Limit   int // 0: every match
}

// Vehicles stores vehicle profiles, one per vehicle id of a scope.
type Vehicles interface {
	// PutVehicle creates or replaces the profile of v.ID and answers it
	// as stored: a replaced profile keeps its creation time.
	PutVehicle(ctx context.Context, v Vehicle) (Vehicle, error)
	GetVehicle(ctx context.Context, s Scope, id string) (Vehicle, error)
	ListVehicles(ctx context.Context, f VehicleFilter) ([]Vehicle, error)
	// ListVehicleFleets lists the profiles that name a fleet, of every
	// scope, at most limit of them (0: all).
	ListVehicleFleets(ctx context.Context, limit int) ([]VehicleFleet, error)
	// DeleteVehicle deletes a profile; ErrNotFound when absent.
	DeleteVehicle(ctx context.Context, s Scope, id string) error
}
