package ingestapi

import "github.com/fleethub/fleethub/hub/event"

// The request types below describe the bodies in the OpenAPI document.
// The handlers decode the lists generically (see telemetryBody) so that
// validation can name every bad field by its path; ingest/telemetry
// enforces what these types say, and TestDocumentedEnums keeps their
// enums equal to the hub's lists.

// TelemetryRequest is POST /v1/telemetry.
type TelemetryRequest struct {
	Messages []TelemetryMessage `json:"messages" required:"true" doc:"1 to 1,000 telemetry messages"`
}

// TelemetryMessage is one telemetry message as sent.
type TelemetryMessage struct {
	Timestamp         string                    `json:"timestamp" required:"true" doc:"ISO 8601 date-time with offset, at most 5 minutes ahead of the server clock"`
	VehicleID         string                    `json:"vehicle_id" required:"true" doc:"at most 200 characters, no control character"`
	DataType          string                    `json:"data_type" required:"true" enum:"engine_diagnostics,fuel_system,vehicle_dynamics,electrical_system,environmental,maintenance_indicators,gps_enhanced,driver_behavior"`
	Sequence          int64                     `json:"sequence,omitempty" doc:"integer ≥ 0, default 0"`
	Data              map[string]map[string]any `json:"data" required:"true" doc:"groups of the data type (engine, exhaust, turbo, status_codes for engine_diagnostics; fuel_level, consumption, system_health, efficiency_metrics for fuel_system; motion, braking, steering, suspension, tires for vehicle_dynamics; battery, charging_system, power_distribution, starter_system for electrical_system) with their documented fields; the other data types carry free-form groups of numbers. Unknown groups and fields are rejected. See docs/ingest.md."`
	QualityIndicators *event.QualityIndicators  `json:"quality_indicators,omitempty" doc:"signal_strength and data_completeness from 0 to 100"`
}

// EventsRequest is POST /v1/events.
type EventsRequest struct {
	Events []EventMessage `json:"events" required:"true" doc:"1 to 1,000 events"`
}

// EventMessage is one event as sent by an external system.
type EventMessage struct {
	EventID   string         `json:"event_id,omitempty" doc:"1 to 100 of [A-Za-z0-9_.:-] (so at most 100 bytes); assigned (evt_…) when absent. An id repeated within the request is accepted and counted in duplicates"`
	EventType string         `json:"event_type" required:"true" doc:"snake_case, at most 100 characters"`
	Category  string         `json:"category" required:"true" enum:"trip_lifecycle,safety_events,maintenance_events,operational_events,driver_events,vehicle_events,geofence_events,emergency_events,system_events"`
	Timestamp string         `json:"timestamp" required:"true" doc:"ISO 8601 date-time with offset, at most 5 minutes ahead of the server clock"`
	Severity  string         `json:"severity" required:"true" enum:"low,medium,high,critical"`
	Priority  string         `json:"priority,omitempty" enum:"normal,urgent,emergency" doc:"default normal"`
	Source    event.Source   `json:"source" required:"true" doc:"at least one of vehicle_id, driver_id, trip_id (strings of at most 200 characters, no control character); the partition key is the first present of these. fleet_id (an extension, at most 200 characters): the fleet of the event; when absent the hub stamps the fleet of vehicle_id from the vehicle profiles, and event streams with fleet_id take only events of their fleet"`
	Location  *EventLocation `json:"location,omitempty"`
	EventData map[string]any `json:"event_data,omitempty" doc:"free-form: at most 16 levels deep, finite numbers, no key repeated in its object nor the empty string"`
	Metadata  *EventMetadata `json:"metadata,omitempty"`

	RiskAssessment       map[string]any `json:"risk_assessment,omitempty"`
	AutomaticActions     map[string]any `json:"automatic_actions,omitempty"`
	EmergencyResponse    map[string]any `json:"emergency_response,omitempty"`
	Escalation           map[string]any `json:"escalation,omitempty"`
	Recommendations      any            `json:"recommendations,omitempty" doc:"an array or an object"`
	PredictiveIndicators map[string]any `json:"predictive_indicators,omitempty"`
	PerformanceMetrics   map[string]any `json:"performance_metrics,omitempty"`
}

// EventLocation is where an event happened.
type EventLocation struct {
	Latitude                  float64  `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude                 float64  `json:"longitude" required:"true" doc:"-180 to 180"`
	Address                   string   `json:"address,omitempty"`
	Geofence                  string   `json:"geofence,omitempty" id:"true" doc:"at most 200 characters, no control character"`
	Accuracy                  *float64 `json:"accuracy,omitempty" doc:"≥ 0"`
	SpeedLimit                *float64 `json:"speed_limit,omitempty" doc:"≥ 0"`
	RoadType                  string   `json:"road_type,omitempty"`
	EmergencyServicesDistance *float64 `json:"emergency_services_distance,omitempty" doc:"≥ 0"`
}

// EventMetadata is the metadata an external event may carry. The
// server-owned metadata.late is not among its fields: the type is closed
// (additionalProperties false) and ingest refuses it.
type EventMetadata struct {
	CorrelationID  string `json:"correlation_id,omitempty" doc:"at most 200 characters, no control character"`
	SequenceNumber int64  `json:"sequence_number,omitempty" doc:"an integer from 0 to 9007199254740991 (2^53-1), written as plain digits (1.0, 1e3, 1.5, strings and negative numbers are refused); 0 or absent means unsequenced: the event is not ordered by event_ordering streams"`
	ProcessingTime string `json:"processing_time,omitempty" doc:"ignored: the hub sets it when it accepts the event"`
	SourceSystem   string `json:"source_system,omitempty" doc:"at most 100 characters; default external"`
}
