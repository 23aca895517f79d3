// Package event is the one message model of the hub: the Event message
// (fleet events in nine categories) and the Telemetry message, with their
// JSON and msgpack codecs. It is a leaf: it imports nothing of Fleethub.
//
// Besides those two messages an Envelope carries accepted location
// points (Point: one, or the points of one upload), always with the
// tenant and the kind of what it holds; Marshal and Unmarshal are the
// bus's codec of it.
//
// Marshal writes event envelopes without reflection (event_encoder.go),
// byte for byte as the msgpack library would, and leaves the rest to the
// library; Unmarshal reads event and telemetry envelopes without it.
//
// Concurrency: Marshal and Unmarshal keep no state and are safe for
// concurrent use. The message types are plain values without locks: one
// may be read by many goroutines at once but must not be changed while it
// is shared (the pipeline copies an event before it changes it for one
// stream). A TelemetryEncoder is not safe for concurrent use: one
// goroutine owns it, as one request's intake does. The package-level
// lists (Categories, Severities, Priorities, DataTypes) are only read.
package event

import (
	"time"
)

// Categories of events.
const (
	CategoryTripLifecycle = "trip_lifecycle"
	CategorySafety        = "safety_events"
	CategoryMaintenance   = "maintenance_events"
	CategoryOperational   = "operational_events"
	CategoryDriver        = "driver_events"
	CategoryVehicle       = "vehicle_events"
	CategoryGeofence      = "geofence_events"
	CategoryEmergency     = "emergency_events"
	CategorySystem        = "system_events"
)

// Categories lists every category.
var Categories = []string{CategoryTripLifecycle, CategorySafety, CategoryMaintenance, CategoryOperational,
	CategoryDriver, CategoryVehicle, CategoryGeofence, CategoryEmergency, CategorySystem}

// Severities and priorities.
var (
	Severities = []string{"low", "medium", "high", "critical"}
	Priorities = []string{"normal", "urgent", "emergency"}
)

// DataTypes of telemetry.
var DataTypes = []string{"engine_diagnostics", "fuel_system", "vehicle_dynamics", "electrical_system",
	"environmental", "maintenance_indicators", "gps_enhanced", "driver_behavior"}

// Source names who an event is about.
type Source struct {
	VehicleID string `json:"vehicle_id,omitempty" msgpack:"vehicle_id,omitempty"`
	DriverID  string `json:"driver_id,omitempty" msgpack:"driver_id,omitempty"`
	TripID    string `json:"trip_id,omitempty" msgpack:"trip_id,omitempty"`
	// FleetID is the fleet of the source's vehicle (an extension of the
	// interface's source): given by the sender of an event, else stamped
	// from the vehicle's profile when the event is accepted. Event
	// streams with fleet_id take only events of their fleet.
	FleetID string `json:"fleet_id,omitempty" msgpack:"fleet_id,omitempty"`
}

// Location is where an event happened.
type Location struct {
	Latitude                  float64  `json:"latitude" msgpack:"latitude"`
	Longitude                 float64  `json:"longitude" msgpack:"longitude"`
	Address                   string   `json:"address,omitempty" msgpack:"address,omitempty"`
	Geofence                  string   `json:"geofence,omitempty" msgpack:"geofence,omitempty"`
	Accuracy                  *float64 `json:"accuracy,omitempty" msgpack:"accuracy,omitempty"`
	SpeedLimit                *float64 `json:"speed_limit,omitempty" msgpack:"speed_limit,omitempty"`
	RoadType                  string   `json:"road_type,omitempty" msgpack:"road_type,omitempty"`
	EmergencyServicesDistance *float64 `json:"emergency_services_distance,omitempty" msgpack:"emergency_services_distance,omitempty"`
}

// Metadata of an event.
type Metadata struct {
	CorrelationID  string `json:"correlation_id,omitempty" msgpack:"correlation_id,omitempty"`
	SequenceNumber int64  `json:"sequence_number" msgpack:"sequence_number"`
	ProcessingTime string `json:"processing_time,omitempty" msgpack:"processing_time,omitempty"`
	SourceSystem   string `json:"source_system,omitempty" msgpack:"source_system,omitempty"`
	// Late is set by the pipeline on an event an ordering stream delivers
	// after its place in sequence order had passed. Server-owned: ingest
	// refuses it from clients.
	Late bool `json:"late,omitempty" msgpack:"late,omitempty"`
}

// Event is a fleet event message.
type Event struct {
	EventID   string         `json:"event_id" msgpack:"event_id"`
	EventType string         `json:"event_type" msgpack:"event_type"`
	Category  string         `json:"category" msgpack:"category"`
	Timestamp time.Time      `json:"timestamp" msgpack:"timestamp"`
	Severity  string         `json:"severity" msgpack:"severity"`
	Priority  string         `json:"priority" msgpack:"priority"`
	Source    Source         `json:"source" msgpack:"source"`
	Location  *Location      `json:"location,omitempty" msgpack:"location,omitempty"`
	EventData map[string]any `json:"event_data,omitempty" msgpack:"event_data,omitempty"`
	Metadata  Metadata       `json:"metadata" msgpack:"metadata"`
	// Category-specific objects, free-form.
	RiskAssessment       map[string]any `json:"risk_assessment,omitempty" msgpack:"risk_assessment,omitempty"`
	AutomaticActions     map[string]any `json:"automatic_actions,omitempty" msgpack:"automatic_actions,omitempty"`
	EmergencyResponse    map[string]any `json:"emergency_response,omitempty" msgpack:"emergency_response,omitempty"`
	Escalation           map[string]any `json:"escalation,omitempty" msgpack:"escalation,omitempty"`
	Recommendations      any            `json:"recommendations,omitempty" msgpack:"recommendations,omitempty"`
	PredictiveIndicators map[string]any `json:"predictive_indicators,omitempty" msgpack:"predictive_indicators,omitempty"`
	PerformanceMetrics   map[string]any `json:"performance_metrics,omitempty" msgpack:"performance_metrics,omitempty"`
	// Enrichment added by the pipeline.
	Enrichment map[string]any `json:"enrichment,omitempty" msgpack:"enrichment,omitempty"`
}

// QualityIndicators of a telemetry message.
type QualityIndicators struct {
	SignalStrength   *float64 `json:"signal_strength,omitempty" msgpack:"signal_strength,omitempty"`
	DataCompleteness *float64 `json:"data_completeness,omitempty" msgpack:"data_completeness,omitempty"`
	SensorHealth     string   `json:"sensor_health,omitempty" msgpack:"sensor_health,omitempty"`
}

// Telemetry is a vehicle telemetry message.
type Telemetry struct {
	Timestamp         time.Time          `json:"timestamp" msgpack:"timestamp"`
	VehicleID         string             `json:"vehicle_id" msgpack:"vehicle_id"`
	DataType          string             `json:"data_type" msgpack:"data_type"`
	Sequence          int64              `json:"sequence" msgpack:"sequence"`
	Data              map[string]any     `json:"data" msgpack:"data"`
	QualityIndicators *QualityIndicators `json:"quality_indicators,omitempty" msgpack:"quality_indicators,omitempty"`
}

// Point is an accepted location point, as published on the locations
// topic for live positions and geofences.
type Point struct {
	TripID    string    `json:"trip_id" msgpack:"trip_id"`
	VehicleID string    `json:"vehicle_id" msgpack:"vehicle_id"`
	DriverID  string    `json:"driver_id,omitempty" msgpack:"driver_id,omitempty"`
	Org       string    `json:"organization_id" msgpack:"organization_id"`
	Env       string    `json:"environment" msgpack:"environment"`
	Timestamp time.Time `json:"timestamp" msgpack:"timestamp"`
	Latitude  float64   `json:"latitude" msgpack:"latitude"`
	Longitude float64   `json:"longitude" msgpack:"longitude"`
	SpeedKmh  *float64  `json:"speed_kmh,omitempty" msgpack:"speed_kmh,omitempty"`
	Heading   *float64  `json:"heading,omitempty" msgpack:"heading,omitempty"`
	Accuracy  *float64  `json:"accuracy_meters,omitempty" msgpack:"accuracy_meters,omitempty"`
}

// Envelope is what travels on the bus: one message with its tenant, so
// the pipeline never mixes organizations or environments.
type Envelope struct {
	Org       string     `json:"organization_id" msgpack:"o"`
	Env       string     `json:"environment" msgpack:"e"`
	Kind      string     `json:"kind" msgpack:"k"` // event, telemetry or point
	Event     *Event     `json:"event,omitempty" msgpack:"ev,omitempty"`
	Telemetry *Telemetry `json:"telemetry,omitempty" msgpack:"t,omitempty"`
	Point     *Point     `json:"point,omitempty" msgpack:"p,omitempty"`
	// Points carries the accepted points of one upload (KindPoints).
	Points []Point `json:"points,omitempty" msgpack:"ps,omitempty"`
	// IngestedAt is when the hub accepted the message (for latency).
	IngestedAt time.Time `json:"ingested_at" msgpack:"i"`
}

// Kinds of envelopes.
const (
	KindEvent     = "event"
	KindTelemetry = "telemetry"
	KindPoint     = "point"
	KindPoints    = "points"
)
