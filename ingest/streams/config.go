package streams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
)

// BatchProcessing groups messages.
type BatchProcessing struct {
	Enabled     bool `json:"enabled"`
	BatchSize   int  `json:"batch_size,omitempty"`
	MaxWaitTime int  `json:"max_wait_time,omitempty" doc:"milliseconds"`
}

// QualitySettings of a telemetry stream.
type QualitySettings struct {
	Precision         string `json:"precision,omitempty" enum:"standard,high"`
	IncludeRawData    bool   `json:"include_raw_data,omitempty"`
	CalculatedMetrics bool   `json:"calculated_metrics,omitempty"`
}

// AlertIntegration of a telemetry stream.
type AlertIntegration struct {
	RealTimeAlerts      bool `json:"real_time_alerts,omitempty"`
	ThresholdMonitoring bool `json:"threshold_monitoring,omitempty"`
	PredictiveWarnings  bool `json:"predictive_warnings,omitempty"`
}

// TelemetryStreamConfig is stream_config of a telemetry stream.
type TelemetryStreamConfig struct {
	Frequency        string            `json:"frequency,omitempty" enum:"low,medium,high,custom" doc:"low: at most one message per vehicle and data type every 60 s; medium: every 10 s; high: every message; custom: every custom_interval seconds"`
	CustomInterval   float64           `json:"custom_interval,omitempty" doc:"seconds, with frequency custom"`
	Compression      bool              `json:"compression,omitempty"`
	Encryption       bool              `json:"encryption,omitempty" doc:"transport encryption is TLS at the load balancer; recorded and echoed"`
	IncludeMetadata  *bool             `json:"include_metadata,omitempty"`
	BufferSize       int               `json:"buffer_size,omitempty"`
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
	Vehicles       []string               `json:"vehicles,omitempty"`
	DataTypes      []string               `json:"data_types,omitempty"`
	StreamConfig   *TelemetryStreamConfig `json:"stream_config,omitempty"`
	Filters        *TelemetryFilters      `json:"filters,omitempty"`
	DeliveryMethod string                 `json:"delivery_method,omitempty" enum:"websocket,webhook"`
	WebhookURL     string                 `json:"webhook_url,omitempty"`
}

// TimeFilters of an event stream.
type TimeFilters struct {
	BusinessHoursOnly bool   `json:"business_hours_only,omitempty"`
	ExcludeWeekends   bool   `json:"exclude_weekends,omitempty"`
	Timezone          string `json:"timezone,omitempty"`
}

// EventFilters of an event stream.
type EventFilters struct {
	Categories       []string         `json:"categories,omitempty"`
	SeverityLevels   []string         `json:"severity_levels,omitempty"`
	PriorityLevels   []string         `json:"priority_levels,omitempty"`
	VehicleIDs       []string         `json:"vehicle_ids,omitempty"`
	DriverIDs        []string         `json:"driver_ids,omitempty"`
	Geofences        []string         `json:"geofences,omitempty"`
	TimeFilters      *TimeFilters     `json:"time_filters,omitempty"`
	CustomConditions []expr.Condition `json:"custom_conditions,omitempty"`
}

// EventStreamConfig is stream_config of an event stream.
type EventStreamConfig struct {
	DeliveryMethod  string `json:"delivery_method,omitempty" enum:"websocket,webhook"`
	Reliability     string `json:"reliability,omitempty" enum:"at_least_once,at_most_once"`
	BatchEvents     bool   `json:"batch_events,omitempty"`
	BatchSize       int    `json:"batch_size,omitempty" doc:"with batch_events, default 50"`
	MaxWaitTime     int    `json:"max_wait_time,omitempty" doc:"milliseconds, with batch_events, default 1000"`
	IncludeMetadata *bool  `json:"include_metadata,omitempty"`
	Encryption      bool   `json:"encryption,omitempty"`
	Compression     bool   `json:"compression,omitempty"`
}

// ProcessingRules of an event stream.
type ProcessingRules struct {
	Deduplication      bool     `json:"deduplication,omitempty"`
	EventOrdering      bool     `json:"event_ordering,omitempty"`
	CorrelationEnabled bool     `json:"correlation_enabled,omitempty"`
	Enrichment         []string `json:"enrichment,omitempty"`
}

// EventsConfig is the start body of an event stream.
type EventsConfig struct {
	FleetID         string             `json:"fleet_id,omitempty"`
	EventFilters    *EventFilters      `json:"event_filters,omitempty"`
	StreamConfig    *EventStreamConfig `json:"stream_config,omitempty"`
	ProcessingRules *ProcessingRules   `json:"processing_rules,omitempty"`
	WebhookURL      string             `json:"webhook_url,omitempty"`
}

// Config is a stream's stored configuration: one of the two bodies.
type Config struct {
	Telemetry *TelemetryConfig `json:"telemetry,omitempty"`
	Events    *EventsConfig    `json:"events,omitempty"`
}

// FieldError is invalid input at a body path.
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Limits of stream configurations.
const (
	MaxListLen   = 10_000
	MaxBatchSize = 1000
	MaxWaitMS    = 60_000
)

var enrichments = map[string]bool{"location_names": true, "driver_info": true, "vehicle_details": true}

func checkList(field string, l []string) *FieldError {
	if len(l) > MaxListLen {
		return &FieldError{field, fmt.Sprintf("at most %d items", MaxListLen)}
	}
	for i, v := range l {
		if strings.TrimSpace(v) == "" || len(v) > 200 {
			return &FieldError{fmt.Sprintf("%s[%d]", field, i), "must be a non-empty string of at most 200 characters"}
		}
	}
	return nil
}

func checkWebhook(delivery, u string) *FieldError {
	switch delivery {
	case "", "websocket":
		if u != "" && delivery == "websocket" {
			return &FieldError{"webhook_url", "is only used with delivery_method webhook"}
		}
	case "webhook":
		if u == "" {
			return &FieldError{"webhook_url", "is required with delivery_method webhook"}
		}
	default:
		return &FieldError{"delivery_method", "must be websocket or webhook"}
	}
	if u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || len(u) > 2048 {
			return &FieldError{"webhook_url", "must be an http or https URL"}
		}
	}
	return nil
}

func asFieldError(err error) error {
	if fe, ok := err.(*expr.FieldError); ok {
		return &FieldError{fe.Field, fe.Message}
	}
	return err
}

// Compile validates a configuration and returns its filter program and
// what sinks need to know. kind is hub.KindTelemetry or hub.KindEvents.
func Compile(kind string, c *Config) (*expr.Program, hub.StreamInfo, error) {
	info := hub.StreamInfo{Kind: kind, Delivery: "websocket", BatchSize: 1}
	switch kind {
	case hub.KindTelemetry:
		t := c.Telemetry
		if t == nil {
			t = &TelemetryConfig{}
			c.Telemetry = t
		}
		if fe := checkList("vehicles", t.Vehicles); fe != nil {
			return nil, info, fe
		}
		spec := expr.Spec{Kind: expr.KindTelemetry, VehicleIDs: t.Vehicles, DataTypes: t.DataTypes}
		if f := t.Filters; f != nil {
			spec.MinEngineTemp, spec.MaxFuelLevel, spec.Conditions = f.MinEngineTemp, f.MaxFuelLevel, f.CustomConditions
			if a := f.AlertThresholds; a != nil {
				spec.AlertThresholds = map[string]float64{}
				if a.EngineRPM != nil {
					spec.AlertThresholds[expr.ThresholdEngineRPM] = *a.EngineRPM
				}
				if a.CoolantTemp != nil {
					spec.AlertThresholds[expr.ThresholdCoolantTemp] = *a.CoolantTemp
				}
			}
		}
		if sc := t.StreamConfig; sc != nil {
			switch sc.Frequency {
			case "", "low", "medium", "high":
			case "custom":
				if !(sc.CustomInterval > 0 && sc.CustomInterval <= 86400) {
					return nil, info, &FieldError{"stream_config.custom_interval", "must be between 0 and 86400 seconds with frequency custom"}
				}
			default:
				return nil, info, &FieldError{"stream_config.frequency", "must be low, medium, high or custom"}
			}
			if sc.BufferSize < 0 || sc.BufferSize > 1_000_000 {
				return nil, info, &FieldError{"stream_config.buffer_size", "must be between 0 and 1000000"}
			}
			if q := sc.QualitySettings; q != nil && q.Precision != "" && q.Precision != "standard" && q.Precision != "high" {
				return nil, info, &FieldError{"stream_config.quality_settings.precision", "must be standard or high"}
			}
			if b := sc.BatchProcessing; b != nil && b.Enabled {
				if b.BatchSize < 0 || b.BatchSize > MaxBatchSize {
					return nil, info, &FieldError{"stream_config.batch_processing.batch_size", fmt.Sprintf("must be between 1 and %d", MaxBatchSize)}
				}
				if b.MaxWaitTime < 0 || b.MaxWaitTime > MaxWaitMS {
					return nil, info, &FieldError{"stream_config.batch_processing.max_wait_time", fmt.Sprintf("must be between 0 and %d milliseconds", MaxWaitMS)}
				}
				info.BatchEvents, info.BatchSize, info.MaxWait = true, orInt(b.BatchSize, 50), time.Duration(orInt(b.MaxWaitTime, 1000))*time.Millisecond
			}
			info.Compression = sc.Compression
		}
		if fe := checkWebhook(t.DeliveryMethod, t.WebhookURL); fe != nil {
			return nil, info, fe
		}
		if t.DeliveryMethod == "webhook" {
			info.Delivery, info.WebhookURL = "webhook", t.WebhookURL
		}
		prog, err := expr.Compile(spec)
		if err != nil {
			return nil, info, asFieldError(err)
		}
		return prog, info, nil
	case hub.KindEvents:
		e := c.Events
		if e == nil {
			e = &EventsConfig{}
			c.Events = e
		}
		if len(e.FleetID) > 200 {
			return nil, info, &FieldError{"fleet_id", "must be at most 200 characters"}
		}
		spec := expr.Spec{Kind: expr.KindEvent}
		if f := e.EventFilters; f != nil {
			for _, l := range []struct {
				name string
				v    []string
			}{{"event_filters.vehicle_ids", f.VehicleIDs}, {"event_filters.driver_ids", f.DriverIDs}, {"event_filters.geofences", f.Geofences}} {
				if fe := checkList(l.name, l.v); fe != nil {
					return nil, info, fe
				}
			}
			spec.Categories, spec.Severities, spec.Priorities = f.Categories, f.SeverityLevels, f.PriorityLevels
			spec.VehicleIDs, spec.DriverIDs, spec.Geofences, spec.Conditions = f.VehicleIDs, f.DriverIDs, f.Geofences, f.CustomConditions
			if tf := f.TimeFilters; tf != nil {
				spec.BusinessHoursOnly, spec.ExcludeWeekends, spec.Timezone = tf.BusinessHoursOnly, tf.ExcludeWeekends, tf.Timezone
			}
		}
		delivery := ""
		if sc := e.StreamConfig; sc != nil {
			delivery = sc.DeliveryMethod
			switch sc.Reliability {
			case "", "at_least_once", "at_most_once":
			default:
				return nil, info, &FieldError{"stream_config.reliability", "must be at_least_once or at_most_once"}
			}
			info.AtLeastOnce = sc.Reliability != "at_most_once"
			if sc.BatchEvents {
				if sc.BatchSize < 0 || sc.BatchSize > MaxBatchSize {
					return nil, info, &FieldError{"stream_config.batch_size", fmt.Sprintf("must be between 1 and %d", MaxBatchSize)}
				}
				if sc.MaxWaitTime < 0 || sc.MaxWaitTime > MaxWaitMS {
					return nil, info, &FieldError{"stream_config.max_wait_time", fmt.Sprintf("must be between 0 and %d milliseconds", MaxWaitMS)}
				}
				info.BatchEvents, info.BatchSize, info.MaxWait = true, orInt(sc.BatchSize, 50), time.Duration(orInt(sc.MaxWaitTime, 1000))*time.Millisecond
			}
			info.Compression = sc.Compression
		} else {
			info.AtLeastOnce = true
		}
		if fe := checkWebhook(delivery, e.WebhookURL); fe != nil {
			if fe.Field == "delivery_method" {
				fe.Field = "stream_config.delivery_method"
			}
			return nil, info, fe
		}
		if delivery == "webhook" {
			info.Delivery, info.WebhookURL = "webhook", e.WebhookURL
		}
		if pr := e.ProcessingRules; pr != nil {
			for i, en := range pr.Enrichment {
				if !enrichments[en] {
					return nil, info, &FieldError{fmt.Sprintf("processing_rules.enrichment[%d]", i), "must be location_names, driver_info or vehicle_details"}
				}
			}
		}
		prog, err := expr.Compile(spec)
		if err != nil {
			return nil, info, asFieldError(err)
		}
		return prog, info, nil
	}
	return nil, info, &FieldError{"kind", "unknown stream kind"}
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
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

// decodeStrict decodes JSON into v, refusing unknown fields.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
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
		return time.Duration(sc.CustomInterval * float64(time.Second))
	}
	return 0
}
