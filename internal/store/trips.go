package store

import (
	"context"
	"time"
)

// Trip statuses.
const (
	TripActive      = "active"
	TripPaused      = "paused"
	TripCompleted   = "completed"
	TripCancelled   = "cancelled"
	TripInterrupted = "interrupted"
)

// Place is a location with an optional address.
type Place struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Address   string  `json:"address,omitempty"`
}

// TripTotals are the analytics columns a trip is listed, sorted and
// summarized by.
type TripTotals struct {
	DistanceKm      float64
	DurationMinutes float64
	AvgSpeedKmh     float64
	MaxSpeedKmh     float64 // negative while the trip measured no speed (see fleet/trips)
	SafetyScore     float64
	EcoScore        float64
	EventsCount     int
	LocationsCount  int
}

// Trip is a stored trip. State is the ingest pipeline's running state
// (analytics, pauses, last point), opaque to the store.
type Trip struct {
	ID              string
	Org             string
	Env             string
	VehicleID       string
	DriverID        string
	Status          string
	StartTime       time.Time
	EndTime         time.Time // zero while not ended
	StartLocation   *Place
	EndLocation     *Place
	Metadata        []byte // JSON object
	MetadataHistory []byte // JSON array
	State           []byte // JSON
	Totals          TripTotals
	Version         int64 // bumped by every update; updates compare it
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// PointBlock is a compact block of points of one trip, in timestamp
// order within the block.
type PointBlock struct {
	TripID  string
	Seq     int64 // block number within the trip, from 1
	FirstTS int64 // unix ms
	LastTS  int64
	Count   int
	Data    []byte
}

// TripEvent is a safety event detected on a trip. IDs are deterministic,
// so writing the same event twice keeps one.
type TripEvent struct {
	ID     string
	TripID string
	Type   string
	Time   time.Time
	Data   []byte // JSON of the detected event
}

// TripFilter selects trips for listing.
type TripFilter struct {
	Scope
	VehicleID   string
	DriverID    string
	Statuses    []string
	StartAfter  time.Time
	StartBefore time.Time
	// ExcludeID leaves that trip out; WithPoints keeps only trips with
	// at least one location; SafetyBelow, when set, only trips whose
	// safety score is under it.
	ExcludeID   string
	WithPoints  bool
	SafetyBelow *float64
	// Sort is one of start_time, end_time, distance, duration,
	// safety_score; Desc orders descending. By safety_score a trip
	// without locations, which has no score, sorts as NoScore: below
	// every score.
	Sort  string
	Desc  bool
	Limit int
	// After continues strictly after (Before: strictly before) the
	// given keyset position, in the listing's order; at or after (at or
	// before) it when the Keyset is Inclusive.
	After  *Keyset
	Before *Keyset
}

// NoScore is the safety_score sort value of a trip without locations,
// below every score (which lie in (0, 100]).
const NoScore = -1.0

// Keyset is a position in a sorted listing.
type Keyset struct {
	Value float64
	ID    string
	// Inclusive takes the position itself too.
	Inclusive bool
}

// TripSummary aggregates trips matching a filter (ignoring paging).
// Scored counts the trips with at least one location, the only ones
// with a score: AvgSafetyScore and AvgEcoScore average theirs, and are 0
// when Scored is.
type TripSummary struct {
	Count            int
	TotalDistanceKm  float64
	TotalDurationMin float64
	Scored           int
	AvgSafetyScore   float64
	AvgEcoScore      float64
	Active           int
	Completed        int
}

// Trips stores trips, their points and their events.
type Trips interface {
	// CreateTrip inserts a trip; ErrConflict when its vehicle already
	// has an active or paused trip in the scope.
	CreateTrip(ctx context.Context, t Trip) error
	GetTrip(ctx context.Context, s Scope, id string) (Trip, error)
	// UpdateTrip writes t if the stored version is still prev (t.Version
	// is the new one); ErrConflict otherwise.
	UpdateTrip(ctx context.Context, t Trip, prev int64) error
	// AppendPoints writes blocks and events and updates the trip, in one
	// transaction, under the same version rule. With replaceEvents the
	// trip's stored events are replaced by events.
	AppendPoints(ctx context.Context, t Trip, prev int64, blocks []PointBlock, events []TripEvent, replaceEvents bool) error
	// ReadPoints returns every block of a trip in block order.
	ReadPoints(ctx context.Context, s Scope, tripID string) ([]PointBlock, error)
	TripEvents(ctx context.Context, s Scope, tripID string) ([]TripEvent, error)
	ListTrips(ctx context.Context, f TripFilter) ([]Trip, error)
	SummarizeTrips(ctx context.Context, f TripFilter) (TripSummary, error)
	// ActiveTripStats counts active trips in sc; the zero Scope means
	// every scope (cross-organization figures, for administrators only).
	ActiveTripStats(ctx context.Context, sc Scope, now time.Time) (total, orgs int, avgMinutes float64, err error)
}
