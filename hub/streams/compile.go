package streams

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/enum"
)

// FieldError is invalid input at a body path.
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// TypeError is the FieldError of a value of the wrong JSON type (a string
// where a boolean goes): the API answers it invalid_request, as a wrong
// type is on every route, where other field errors are validation_failed.
// errors.As finds its FieldError too.
type TypeError struct{ *FieldError }

func (e *TypeError) Unwrap() error { return e.FieldError }

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
		if strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > 200 {
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
		return &FieldError{"delivery_method", enum.Refusal("websocket", "webhook")}
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
	var spec expr.Spec
	var fe *FieldError
	switch kind {
	case hub.KindTelemetry:
		if c.Telemetry == nil {
			c.Telemetry = &TelemetryConfig{}
		}
		spec, fe = compileTelemetry(c.Telemetry, &info)
	case hub.KindEvents:
		if c.Events == nil {
			c.Events = &EventsConfig{}
		}
		spec, fe = compileEvents(c.Events, &info)
	default:
		return nil, info, &FieldError{"kind", "unknown stream kind"}
	}
	if fe != nil {
		return nil, info, fe
	}
	prog, err := expr.Compile(spec)
	if err != nil {
		return nil, info, asFieldError(err)
	}
	if kind == hub.KindTelemetry && monitoring(c.Telemetry) {
		// the thresholds are watched (alert events), not filtered on:
		// checked by the compilation above, left out of the filter
		spec.MinEngineTemp, spec.MaxFuelLevel, spec.AlertThresholds = nil, nil, nil
		if prog, err = expr.Compile(spec); err != nil {
			return nil, info, asFieldError(err)
		}
	}
	return prog, info, nil
}

// compileTelemetry checks a telemetry stream's configuration, fills info
// as it goes and returns the filter's spec.
func compileTelemetry(t *TelemetryConfig, info *hub.StreamInfo) (expr.Spec, *FieldError) {
	if fe := checkList("vehicles", t.Vehicles); fe != nil {
		return expr.Spec{}, fe
	}
	spec := expr.Spec{Kind: expr.KindTelemetry, VehicleIDs: t.Vehicles, DataTypes: t.DataTypes}
	// a telemetry stream has no reliability setting: it is at least once,
	// the default of event streams, so a key's acks are where it resumes
	info.AtLeastOnce = true
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
		if fe := checkTelemetryStream(sc, info); fe != nil {
			return spec, fe
		}
	}
	if fe := checkWebhook(t.DeliveryMethod, t.WebhookURL); fe != nil {
		return spec, fe
	}
	if t.DeliveryMethod == "webhook" {
		info.Delivery, info.WebhookURL = "webhook", t.WebhookURL
	}
	return spec, nil
}

// checkTelemetryStream checks stream_config of a telemetry stream and
// fills info's batching and compression.
func checkTelemetryStream(sc *TelemetryStreamConfig, info *hub.StreamInfo) *FieldError {
	switch sc.Frequency {
	case "", "low", "medium", "high":
	case "custom":
		if fe := checkCustomInterval(sc.CustomInterval); fe != nil {
			return fe
		}
	default:
		return &FieldError{"stream_config.frequency", enum.Refusal("low", "medium", "high", "custom")}
	}
	if b := deref(sc.BufferSize); b < 0 || b > 1_000_000 {
		return &FieldError{"stream_config.buffer_size", "must be between 0 and 1000000"}
	}
	info.LagNotice = int64(deref(sc.BufferSize))
	if q := sc.QualitySettings; q != nil && q.Precision != "" && q.Precision != "standard" && q.Precision != "high" {
		return &FieldError{"stream_config.quality_settings.precision", enum.Refusal("standard", "high")}
	}
	if b := sc.BatchProcessing; b != nil && b.Enabled {
		if fe := batching("stream_config.batch_processing.", deref(b.BatchSize), deref(b.MaxWaitTime), info); fe != nil {
			return fe
		}
	}
	info.Compression = sc.Compression
	return nil
}

// The rules of a batch's size and wait, the same whichever check finds
// a value out of them.
var (
	batchSizeRule = fmt.Sprintf("must be between 1 and %d", MaxBatchSize)
	maxWaitRule   = fmt.Sprintf("must be between 1 and %d milliseconds", MaxWaitMS)
)

// checkCustomInterval checks custom_interval with frequency custom.
func checkCustomInterval(v *float64) *FieldError {
	switch {
	case v == nil:
		return &FieldError{"stream_config.custom_interval", "is required with frequency custom: seconds, more than 0 and at most 86400"}
	case !(*v > 0 && *v <= 86400):
		return &FieldError{"stream_config.custom_interval", "must be seconds, more than 0 and at most 86400"}
	}
	return nil
}

// batching checks a batch size and a wait in milliseconds (0: not sent,
// the default), the fields named after prefix, and turns batching on in
// info.
func batching(prefix string, size, waitMS int, info *hub.StreamInfo) *FieldError {
	if size < 0 || size > MaxBatchSize {
		return &FieldError{prefix + "batch_size", batchSizeRule}
	}
	if waitMS < 0 || waitMS > MaxWaitMS {
		return &FieldError{prefix + "max_wait_time", maxWaitRule}
	}
	info.BatchEvents, info.BatchSize, info.MaxWait = true, orInt(size, 50), time.Duration(orInt(waitMS, 1000))*time.Millisecond
	return nil
}

// compileEvents checks an event stream's configuration, fills info as it
// goes and returns the filter's spec.
func compileEvents(e *EventsConfig, info *hub.StreamInfo) (expr.Spec, *FieldError) {
	fleet := deref(e.FleetID)
	if len(fleet) > 200 {
		return expr.Spec{}, &FieldError{"fleet_id", fleetRule}
	}
	spec, fe := eventSpec(e.EventFilters)
	if fe != nil {
		return spec, fe
	}
	if fleet != "" {
		spec.FleetIDs = []string{fleet}
	}
	delivery := ""
	if sc := e.StreamConfig; sc != nil {
		delivery = sc.DeliveryMethod
		if fe := checkEventStream(sc, info); fe != nil {
			return spec, fe
		}
	} else {
		info.AtLeastOnce = true
	}
	if fe := checkWebhook(delivery, e.WebhookURL); fe != nil {
		if fe.Field == "delivery_method" {
			fe.Field = "stream_config.delivery_method"
		}
		return spec, fe
	}
	if delivery == "webhook" {
		info.Delivery, info.WebhookURL = "webhook", e.WebhookURL
	}
	if pr := e.ProcessingRules; pr != nil {
		for i, en := range pr.Enrichment {
			if !enrichments[en] {
				return spec, &FieldError{fmt.Sprintf("processing_rules.enrichment[%d]", i), enum.Refusal("location_names", "driver_info", "vehicle_details")}
			}
		}
	}
	return spec, nil
}

// eventSpec is the filter spec of event_filters (f may be nil).
func eventSpec(f *EventFilters) (expr.Spec, *FieldError) {
	spec := expr.Spec{Kind: expr.KindEvent}
	if f == nil {
		return spec, nil
	}
	for _, l := range []struct {
		name string
		v    []string
	}{{"event_filters.vehicle_ids", f.VehicleIDs}, {"event_filters.driver_ids", f.DriverIDs}, {"event_filters.geofences", f.Geofences}} {
		if fe := checkList(l.name, l.v); fe != nil {
			return spec, fe
		}
	}
	spec.Categories, spec.Severities, spec.Priorities = f.Categories, f.SeverityLevels, f.PriorityLevels
	spec.VehicleIDs, spec.DriverIDs, spec.Geofences, spec.Conditions = f.VehicleIDs, f.DriverIDs, f.Geofences, f.CustomConditions
	if tf := f.TimeFilters; tf != nil {
		spec.BusinessHoursOnly, spec.ExcludeWeekends, spec.Timezone = tf.BusinessHoursOnly, tf.ExcludeWeekends, tf.Timezone
	}
	return spec, nil
}

// checkEventStream checks stream_config of an event stream and fills
// info's reliability, batching and compression.
func checkEventStream(sc *EventStreamConfig, info *hub.StreamInfo) *FieldError {
	switch sc.Reliability {
	case "", "at_least_once", "at_most_once":
	default:
		return &FieldError{"stream_config.reliability", enum.Refusal("at_least_once", "at_most_once")}
	}
	info.AtLeastOnce = sc.Reliability != "at_most_once"
	if sc.BatchEvents {
		if fe := batching("stream_config.", deref(sc.BatchSize), deref(sc.MaxWaitTime), info); fe != nil {
			return fe
		}
	}
	info.Compression = sc.Compression
	return nil
}

// deref is *p, or the zero value when p is nil (not sent).
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
