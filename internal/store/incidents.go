package store

import (
	"context"
	"time"
)

// Incident is a stored emergency incident; Doc is the JSON of the whole
// incident resource, the other fields are its filterable columns.
type Incident struct {
	ID        string
	Org       string
	Env       string
	Status    string
	Severity  string
	EventType string
	FleetID   string
	DriverID  string
	Doc       []byte
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IncidentFilter selects incidents.
type IncidentFilter struct {
	Scope
	Status, Severity, EventType, FleetID, DriverID string
	From, To                                       time.Time
	Limit, Offset                                  int
}

// Incidents stores emergency incidents.
type Incidents interface {
	CreateIncident(ctx context.Context, in Incident) error
	GetIncident(ctx context.Context, s Scope, id string) (Incident, error)
	// UpdateIncident writes in if the stored version is still prev.
	UpdateIncident(ctx context.Context, in Incident, prev int64) error
	// ListIncidents returns a page, newest first, and the total matching.
	ListIncidents(ctx context.Context, f IncidentFilter) ([]Incident, int, error)
}
