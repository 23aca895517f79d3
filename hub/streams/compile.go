package streams

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
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

// FieldErrors is every problem of a body found, each field named once,
// in the order the checks found them: a start or configure body is
// refused naming all of them, as every other route's body is. errors.As
// finds the first as a *FieldError.
type FieldErrors []*FieldError

func (e FieldErrors) Error() string {
	msgs := make([]string, len(e))
	for i, fe := range e {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e FieldErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, fe := range e {
		out[i] = fe
	}
	return out
}

// problems gathers the refusals of one body: the first for each field,
// up to jsonpath.MaxNamed.
type problems struct{ list FieldErrors }

// add notes fe (nil: nothing) unless its field is named already.
func (p *problems) add(fe *FieldError) {
	if fe == nil || len(p.list) >= jsonpath.MaxNamed {
		return
	}
	for _, x := range p.list {
		if x.Field == fe.Field {
			return
		}
	}
	p.list = append(p.list, fe)
}

// addErr notes the field errors of err (a *FieldError or FieldErrors)
// and returns nil, or returns err when it is of another kind (a failure,
// not a refusal).
func (p *problems) addErr(err error) error {
	var many FieldErrors
	var one *FieldError
	switch {
	case err == nil:
	case errors.As(err, &many):
		for _, fe := range many {
			p.add(fe)
		}
	case errors.As(err, &one):
		p.add(one)
	default:
		return err
	}
	return nil
}

// err is nil without a problem, the *FieldError of one, FieldErrors of
// several.
func (p *problems) err() error {
	switch len(p.list) {
	case 0:
		return nil
	case 1:
		return p.list[0]
	}
	return p.list
}

// Limits of stream configurations.
const (
	MaxListLen   = 10_000
	MaxBatchSize = 1000
	MaxWaitMS    = 60_000
)

var enrichments = map[string]bool{"location_names": true, "driver_info": true, "vehicle_details": true}

func checkList(p *problems, field string, l []string) {
	if len(l) > MaxListLen {
		p.add(&FieldError{field, fmt.Sprintf("at most %d items", MaxListLen)})
		return
	}
	for i, v := range l {
		if strings.TrimSpace(v) == "" || utf8.RuneCountInString(v) > 200 {
			p.add(&FieldError{fmt.Sprintf("%s[%d]", field, i), "must be a non-empty string of at most 200 characters"})
		}
	}
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
//
// Every problem found is named (FieldErrors when there are several): the
// filter is compiled even when a setting beside it is refused.
func Compile(kind string, c *Config) (*expr.Program, hub.StreamInfo, error) {
	info := hub.StreamInfo{Kind: kind, Delivery: "websocket", BatchSize: 1}
	var spec expr.Spec
	var p problems
	switch kind {
	case hub.KindTelemetry:
		if c.Telemetry == nil {
			c.Telemetry = &TelemetryConfig{}
		}
		spec = compileTelemetry(&p, c.Telemetry, &info)
	case hub.KindEvents:
		if c.Events == nil {
			c.Events = &EventsConfig{}
		}
		spec = compileEvents(&p, c.Events, &info)
	default:
		return nil, info, &FieldError{"kind", "unknown stream kind"}
	}
	prog, err := expr.Compile(spec)
	if err != nil {
		if err := p.addErr(asFieldError(err)); err != nil {
			return nil, info, err
		}
	}
	if err := p.err(); err != nil {
		return nil, info, err
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
func compileTelemetry(p *problems, t *TelemetryConfig, info *hub.StreamInfo) expr.Spec {
	checkList(p, "vehicles", t.Vehicles)
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
		checkTelemetryStream(p, sc, info)
	}
	p.add(checkWebhook(t.DeliveryMethod, t.WebhookURL))
	if t.DeliveryMethod == "webhook" {
		info.Delivery, info.WebhookURL = "webhook", t.WebhookURL
	}
	return spec
}

// checkTelemetryStream checks stream_config of a telemetry stream and
// fills info's batching and compression.
func checkTelemetryStream(p *problems, sc *TelemetryStreamConfig, info *hub.StreamInfo) {
	switch sc.Frequency {
	case "", "low", "medium", "high":
	case "custom":
		p.add(checkCustomInterval(sc.CustomInterval))
	default:
		p.add(&FieldError{"stream_config.frequency", enum.Refusal("low", "medium", "high", "custom")})
	}
	if b := deref(sc.BufferSize); b < 0 || b > 1_000_000 {
		p.add(&FieldError{"stream_config.buffer_size", "must be between 0 and 1000000"})
	}
	info.LagNotice = int64(deref(sc.BufferSize))
	if q := sc.QualitySettings; q != nil && q.Precision != "" && q.Precision != "standard" && q.Precision != "high" {
		p.add(&FieldError{"stream_config.quality_settings.precision", enum.Refusal("standard", "high")})
	}
	if b := sc.BatchProcessing; b != nil && b.Enabled {
		batching(p, "stream_config.batch_processing.", deref(b.BatchSize), deref(b.MaxWaitTime), info)
	}
	info.Compression = sc.Compression
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
func batching(p *problems, prefix string, size, waitMS int, info *hub.StreamInfo) {
	if size < 0 || size > MaxBatchSize {
		p.add(&FieldError{prefix + "batch_size", batchSizeRule})
	}
	if waitMS < 0 || waitMS > MaxWaitMS {
		p.add(&FieldError{prefix + "max_wait_time", maxWaitRule})
	}
	info.BatchEvents, info.BatchSize, info.MaxWait = true, orInt(size, 50), time.Duration(orInt(waitMS, 1000))*time.Millisecond
}

// compileEvents checks an event stream's configuration, fills info as it
// goes and returns the filter's spec.
func compileEvents(p *problems, e *EventsConfig, info *hub.StreamInfo) expr.Spec {
	fleet := deref(e.FleetID)
	if len(fleet) > 200 {
		p.add(&FieldError{"fleet_id", fleetRule})
	}
	spec := eventSpec(p, e.EventFilters)
	if fleet != "" {
		spec.FleetIDs = []string{fleet}
	}
	delivery := ""
	if sc := e.StreamConfig; sc != nil {
		delivery = sc.DeliveryMethod
		checkEventStream(p, sc, info)
	} else {
		info.AtLeastOnce = true
	}
	if fe := checkWebhook(delivery, e.WebhookURL); fe != nil {
		if fe.Field == "delivery_method" {
			fe.Field = "stream_config.delivery_method"
		}
		p.add(fe)
	}
	if delivery == "webhook" {
		info.Delivery, info.WebhookURL = "webhook", e.WebhookURL
	}
	if pr := e.ProcessingRules; pr != nil {
		for i, en := range pr.Enrichment {
			if !enrichments[en] {
				p.add(&FieldError{fmt.Sprintf("processing_rules.enrichment[%d]", i), enum.Refusal("location_names", "driver_info", "vehicle_details")})
			}
		}
	}
	return spec
}

// eventSpec is the filter spec of event_filters (f may be nil).
func eventSpec(p *problems, f *EventFilters) expr.Spec {
	spec := expr.Spec{Kind: expr.KindEvent}
	if f == nil {
		return spec
	}
	for _, l := range []struct {
		name string
		v    []string
	}{{"event_filters.vehicle_ids", f.VehicleIDs}, {"event_filters.driver_ids", f.DriverIDs}, {"event_filters.geofences", f.Geofences}} {
		checkList(p, l.name, l.v)
	}
	spec.Categories, spec.Severities, spec.Priorities = f.Categories, f.SeverityLevels, f.PriorityLevels
	spec.VehicleIDs, spec.DriverIDs, spec.Geofences, spec.Conditions = f.VehicleIDs, f.DriverIDs, f.Geofences, f.CustomConditions
	if tf := f.TimeFilters; tf != nil {
		spec.BusinessHoursOnly, spec.ExcludeWeekends, spec.Timezone = tf.BusinessHoursOnly, tf.ExcludeWeekends, tf.Timezone
	}
	return spec
}

// checkEventStream checks stream_config of an event stream and fills
// info's reliability, batching and compression.
func checkEventStream(p *problems, sc *EventStreamConfig, info *hub.StreamInfo) {
	switch sc.Reliability {
	case "", "at_least_once", "at_most_once":
	default:
		p.add(&FieldError{"stream_config.reliability", enum.Refusal("at_least_once", "at_most_once")})
	}
	info.AtLeastOnce = sc.Reliability != "at_most_once"
	if sc.BatchEvents {
		batching(p, "stream_config.", deref(sc.BatchSize), deref(sc.MaxWaitTime), info)
	}
	info.Compression = sc.Compression
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
