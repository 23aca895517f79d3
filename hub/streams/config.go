package streams

import (
	"bytes"
	"encoding/json"
	"reflect"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
)

// BatchProcessing groups messages.
type BatchProcessing struct {
	Enabled     bool `json:"enabled"`
	BatchSize   *int `json:"batch_size,omitempty" doc:"1 to 1000, default 50"`
	MaxWaitTime *int `json:"max_wait_time,omitempty" doc:"milliseconds, 1 to 60000, default 1000"`
}

// QualitySettings of a telemetry stream.
type QualitySettings struct {
	Precision         string `json:"precision,omitempty" enum:"standard,high" doc:"standard rounds coordinates (latitude, longitude, lat, lon, lng) to 5 decimals and every other number to 4 significant digits, never more coarsely than a whole number; high (the default) passes numbers as sent"`
	IncludeRawData    bool   `json:"include_raw_data,omitempty" doc:"true is refused: messages carry decoded readings only, there is no raw sensor data"`
	CalculatedMetrics bool   `json:"calculated_metrics,omitempty" doc:"adds calculated_metrics to each message: speed_kmh/speed_mph, fuel_liters/fuel_gallons, fuel_rate_lph/fuel_rate_gph when the message has only the other unit, estimated_range_miles, battery_power_w (docs/streaming.md)"`
}

// AlertIntegration of a telemetry stream.
type AlertIntegration struct {
	RealTimeAlerts      bool `json:"real_time_alerts,omitempty" doc:"each message reaching a threshold of filters (alert_thresholds, min_engine_temp, max_fuel_level) is followed on the stream by a telemetry_threshold_exceeded event; the thresholds still filter. Needs a threshold"`
	ThresholdMonitoring bool `json:"threshold_monitoring,omitempty" doc:"the thresholds of filters are watched instead of filtered on: every message of the stream's vehicles and data types is delivered, and one reaching a threshold is followed by a telemetry_threshold_exceeded event. Needs a threshold"`
	PredictiveWarnings  bool `json:"predictive_warnings,omitempty" doc:"true is refused: not implemented"`
}

// TelemetryStreamConfig is stream_config of a telemetry stream.
type TelemetryStreamConfig struct {
	Frequency        string            `json:"frequency,omitempty" enum:"low,medium,high,custom" doc:"low: at most one message per vehicle and data type every 60 s; medium: every 10 s; high: every message; custom: every custom_interval seconds"`
	CustomInterval   *float64          `json:"custom_interval,omitempty" doc:"seconds, more than 0 and at most 86400; required with frequency custom, refused without it"`
	Compression      bool              `json:"compression,omitempty" doc:"websocket messages permessage-deflate compressed when the client offers it; refused with webhook delivery"`
	Encryption       bool              `json:"encryption,omitempty" doc:"true: the hub encrypts each message end to end with XChaCha20-Poly1305 under a key made at start and shown once in the start answer (encryption.key); each message delivered and logged is {\"encrypted\": {key_id, nonce, ciphertext}}, the stream_id as additional data (docs/streaming.md#encryption). Fixed at start: configure cannot change it"`
	IncludeMetadata  *bool             `json:"include_metadata,omitempty" doc:"false leaves sequence and quality_indicators out of the delivered messages (and metadata out of alert events); default true"`
	BufferSize       *int              `json:"buffer_size,omitempty" doc:"messages a websocket subscriber may fall behind the stream's newest before it gets a lag notice, 1 to 100000 (default 1000); not for webhook delivery. Batching is batch_processing's"`
	BatchProcessing  *BatchProcessing  `json:"batch_processing,omitempty"`
	QualitySettings  *QualitySettings  `json:"quality_settings,omitempty"`
	AlertIntegration *AlertIntegration `json:"alert_integration,omitempty"`
}

// AlertThresholds of a telemetry stream.
type AlertThresholds struct {
	EngineRPM   *float64 `json:"engine_rpm,omitempty"`
	CoolantTemp *float64 `json:"coolant_temp,omitempty"`
}

// TelemetryFilters of a telemetry stream.
type TelemetryFilters struct {
	MinEngineTemp    *float64         `json:"min_engine_temp,omitempty"`
	MaxFuelLevel     *float64         `json:"max_fuel_level,omitempty"`
	AlertThresholds  *AlertThresholds `json:"alert_thresholds,omitempty"`
	CustomConditions []expr.Condition `json:"custom_conditions,omitempty"`
}

// TelemetryConfig is the start body of a telemetry stream.
type TelemetryConfig struct {
	Vehicles           []string               `json:"vehicles,omitempty" id:"true"`
	DataTypes          []string               `json:"data_types,omitempty" enum:"engine_diagnostics,fuel_system,vehicle_dynamics,electrical_system,environmental,maintenance_indicators,gps_enhanced,driver_behavior"`
	StreamConfig       *TelemetryStreamConfig `json:"stream_config,omitempty"`
	Filters            *TelemetryFilters      `json:"filters,omitempty"`
	DeliveryMethod     string                 `json:"delivery_method,omitempty" enum:"websocket,webhook"`
	WebhookURL         string                 `json:"webhook_url,omitempty" doc:"the receiver of webhook delivery: required with delivery_method webhook; sent without a delivery_method it turns webhook delivery on; refused beside delivery_method websocket, and sent as \"\" (null removes it at configure)"`
	Ephemeral          bool                   `json:"ephemeral,omitempty" doc:"the stream ends by itself (status stopped, stop_reason idle) once no client (websocket or Server-Sent Events) has been connected for idle_timeout_seconds, and its log is deleted with it. Refused with webhook delivery"`
	IdleTimeoutSeconds int                    `json:"idle_timeout_seconds,omitempty" doc:"with ephemeral: seconds without a connected client before the stream ends, 30 to 86400 (default 300)"`
}

// TimeFilters of an event stream.
type TimeFilters struct {
	BusinessHoursOnly bool   `json:"business_hours_only,omitempty"`
	ExcludeWeekends   bool   `json:"exclude_weekends,omitempty"`
	Timezone          string `json:"timezone,omitempty" doc:"IANA time zone name of business_hours_only and exclude_weekends; left out: UTC (\"\" is refused)"`
}

// EventFilters of an event stream.
type EventFilters struct {
	Categories       []string         `json:"categories,omitempty" enum:"trip_lifecycle,safety_events,maintenance_events,operational_events,driver_events,vehicle_events,geofence_events,emergency_events,system_events"`
	SeverityLevels   []string         `json:"severity_levels,omitempty" enum:"low,medium,high,critical"`
	PriorityLevels   []string         `json:"priority_levels,omitempty" enum:"normal,urgent,emergency"`
	VehicleIDs       []string         `json:"vehicle_ids,omitempty"`
	DriverIDs        []string         `json:"driver_ids,omitempty"`
	Geofences        []string         `json:"geofences,omitempty" id:"true"`
	TimeFilters      *TimeFilters     `json:"time_filters,omitempty"`
	CustomConditions []expr.Condition `json:"custom_conditions,omitempty"`
}

// EventStreamConfig is stream_config of an event stream.
type EventStreamConfig struct {
	DeliveryMethod  string `json:"delivery_method,omitempty" enum:"websocket,webhook"`
	Reliability     string `json:"reliability,omitempty" enum:"at_least_once,at_most_once" doc:"where a websocket connection without last_offset starts: at_least_once (default) after the key's last ack, at_most_once at the live head; at_most_once is refused with webhook delivery (always retried)"`
	BatchEvents     bool   `json:"batch_events,omitempty"`
	BatchSize       *int   `json:"batch_size,omitempty" doc:"with batch_events, 1 to 1000, default 50"`
	MaxWaitTime     *int   `json:"max_wait_time,omitempty" doc:"milliseconds, with batch_events, 1 to 60000, default 1000"`
	IncludeMetadata *bool  `json:"include_metadata,omitempty"`
	Encryption      bool   `json:"encryption,omitempty" doc:"true: the hub encrypts each message end to end with XChaCha20-Poly1305 under a key made at start and shown once in the start answer (encryption.key); each message delivered and logged is {\"encrypted\": {key_id, nonce, ciphertext}}, the stream_id as additional data (docs/streaming.md#encryption). Fixed at start: configure cannot change it"`
	Compression     bool   `json:"compression,omitempty" doc:"websocket messages permessage-deflate compressed when the client offers it; refused with webhook delivery"`
}

// ProcessingRules of an event stream.
type ProcessingRules struct {
	Deduplication      bool     `json:"deduplication,omitempty"`
	EventOrdering      bool     `json:"event_ordering,omitempty"`
	CorrelationEnabled bool     `json:"correlation_enabled,omitempty"`
	Enrichment         []string `json:"enrichment,omitempty" enum:"location_names,driver_info,vehicle_details" doc:"location_names is refused on a server without address data (serve --addresses): it would add nothing"`
}

// EventsConfig is the start body of an event stream.
type EventsConfig struct {
	FleetID            *string            `json:"fleet_id,omitempty" id:"own" doc:"only events of this fleet: source.fleet_id as the sender gave it, else the fleet of the event's vehicle (its profile, PUT /v1/vehicles/{vehicle_id}); events of no known fleet are left out. At most 200 characters, not blank"`
	EventFilters       *EventFilters      `json:"event_filters,omitempty"`
	StreamConfig       *EventStreamConfig `json:"stream_config,omitempty"`
	ProcessingRules    *ProcessingRules   `json:"processing_rules,omitempty"`
	WebhookURL         string             `json:"webhook_url,omitempty" doc:"the receiver of webhook delivery: required with stream_config.delivery_method webhook; sent without a delivery_method it turns webhook delivery on; refused beside delivery_method websocket, and sent as \"\" (null removes it at configure)"`
	Ephemeral          bool               `json:"ephemeral,omitempty" doc:"the stream ends by itself (status stopped, stop_reason idle) once no client (websocket or Server-Sent Events) has been connected for idle_timeout_seconds, and its log is deleted with it. Refused with webhook delivery"`
	IdleTimeoutSeconds int                `json:"idle_timeout_seconds,omitempty" doc:"with ephemeral: seconds without a connected client before the stream ends, 30 to 86400 (default 300)"`
}

// Config is a stream's stored configuration: one of the two bodies.
type Config struct {
	Telemetry *TelemetryConfig `json:"telemetry,omitempty"`
	Events    *EventsConfig    `json:"events,omitempty"`
	// StopReason is why the hub stopped the stream itself (StopIdle);
	// "" when a client stopped it.
	StopReason string `json:"stop_reason,omitempty"`
}

// StopIdle is the stop reason of an ephemeral stream that ended with no
// client connected for its idle timeout.
const StopIdle = "idle"

// Idle timeout bounds of an ephemeral stream.
const (
	DefaultIdleTimeout = 300 * time.Second
	MinIdleTimeout     = 30 * time.Second
	MaxIdleTimeout     = 24 * time.Hour
)

// Ephemeral reports whether a configuration is an ephemeral stream's, and
// its idle timeout.
func (c Config) Ephemeral() (bool, time.Duration) {
	var on bool
	var secs int
	switch {
	case c.Telemetry != nil:
		on, secs = c.Telemetry.Ephemeral, c.Telemetry.IdleTimeoutSeconds
	case c.Events != nil:
		on, secs = c.Events.Ephemeral, c.Events.IdleTimeoutSeconds
	}
	if !on {
		return false, 0
	}
	if secs <= 0 {
		return true, DefaultIdleTimeout
	}
	return true, time.Duration(secs) * time.Second
}

// mergeJSON merges patch into base (objects deeply; null removes a key;
// anything else replaces).
func mergeJSON(base, patch map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		if pm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = mergeJSON(bm, pm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// decodeStrict decodes JSON into v, refusing unknown fields; a fault is
// a *FieldError naming its field by its full path.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err, b, reflect.TypeOf(v))
	}
	return nil
}

// telemetryFrequency returns the minimum spacing of messages per vehicle
// and data type, 0 for every message.
func telemetryFrequency(c *Config) time.Duration {
	if c.Telemetry == nil || c.Telemetry.StreamConfig == nil {
		return 0
	}
	sc := c.Telemetry.StreamConfig
	switch sc.Frequency {
	case "low":
		return 60 * time.Second
	case "medium":
		return 10 * time.Second
	case "custom":
		if sc.CustomInterval == nil {
			return 0
		}
		return time.Duration(*sc.CustomInterval * float64(time.Second))
	}
	return 0
}
