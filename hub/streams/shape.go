package streams

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

// Shape is what a telemetry stream changes in the messages it takes,
// and the alert events it adds to them: stream_config.include_metadata
// false, quality_settings.precision standard, quality_settings.
// calculated_metrics and alert_integration. A stream that asks for none
// of these has no Shape (Entry.Shape is nil) and takes each message as it
// came, sharing one encoding with every such stream. A Shape is immutable.
type Shape struct {
	dropMeta   bool        // include_metadata false: no sequence, no quality_indicators
	round      bool        // precision standard
	calculated bool        // calculated_metrics
	alerts     []threshold // alert_integration: the thresholds that raise alert events
}

// threshold is one filter value watched for alert events.
type threshold struct {
	name               string // its filter's name: engine_rpm, coolant_temp, min_engine_temp, max_fuel_level
	dataType           string
	group, field       string // data.<group>.<field>
	limit              float64
	atMost             bool // reached at value <= limit (else >= limit)
	severity, priority string
}

// Alert events of telemetry streams.
const (
	AlertEventType    = "telemetry_threshold_exceeded"
	AlertSourceSystem = "fleethub.stream_alerts"
)

// Rounding of precision standard: coordinates to CoordinateDecimals
// decimals (about 1 m), every other number to SignificantDigits
// significant digits, never more coarsely than to a whole number.
const (
	CoordinateDecimals = 5
	SignificantDigits  = 4
)

// shapeOf is the Shape of a telemetry stream's configuration; nil when it
// asks for nothing that changes its messages.
func shapeOf(t *TelemetryConfig) *Shape {
	if t == nil || t.StreamConfig == nil {
		return nil
	}
	sc := t.StreamConfig
	var s Shape
	s.dropMeta = sc.IncludeMetadata != nil && !*sc.IncludeMetadata
	if q := sc.QualitySettings; q != nil {
		s.round = q.Precision == "standard"
		s.calculated = q.CalculatedMetrics
	}
	if alerting(sc) {
		s.alerts = thresholds(t.Filters)
	}
	if !s.dropMeta && !s.round && !s.calculated && len(s.alerts) == 0 {
		return nil
	}
	return &s
}

// alerting reports whether a stream asks for alert events.
func alerting(sc *TelemetryStreamConfig) bool {
	a := sc.AlertIntegration
	return a != nil && (a.RealTimeAlerts || a.ThresholdMonitoring)
}

// monitoring reports whether a stream's thresholds are watched rather
// than filtered on (alert_integration.threshold_monitoring).
func monitoring(t *TelemetryConfig) bool {
	return t.StreamConfig != nil && t.StreamConfig.AlertIntegration != nil && t.StreamConfig.AlertIntegration.ThresholdMonitoring
}

// thresholds lists the threshold values of a stream's filters.
func thresholds(f *TelemetryFilters) []threshold {
	if f == nil {
		return nil
	}
	var out []threshold
	if a := f.AlertThresholds; a != nil {
		if a.EngineRPM != nil {
			out = append(out, threshold{"engine_rpm", "engine_diagnostics", "engine", "rpm", *a.EngineRPM, false, "high", "urgent"})
		}
		if a.CoolantTemp != nil {
			out = append(out, threshold{"coolant_temp", "engine_diagnostics", "engine", "coolant_temp", *a.CoolantTemp, false, "high", "urgent"})
		}
	}
	if f.MinEngineTemp != nil {
		out = append(out, threshold{"min_engine_temp", "engine_diagnostics", "engine", "coolant_temp", *f.MinEngineTemp, false, "medium", "normal"})
	}
	if f.MaxFuelLevel != nil {
		out = append(out, threshold{"max_fuel_level", "fuel_system", "fuel_level", "percentage", *f.MaxFuelLevel, true, "medium", "normal"})
	}
	return out
}

// shapedTelemetry is a stream's copy of a telemetry message: the fields
// of event.Telemetry in its order, sequence and quality_indicators left
// out without metadata, calculated_metrics added on request.
type shapedTelemetry struct {
	Timestamp         time.Time                `json:"timestamp"`
	VehicleID         string                   `json:"vehicle_id"`
	DataType          string                   `json:"data_type"`
	Sequence          *int64                   `json:"sequence,omitempty"`
	Data              map[string]any           `json:"data"`
	QualityIndicators *event.QualityIndicators `json:"quality_indicators,omitempty"`
	CalculatedMetrics map[string]float64       `json:"calculated_metrics,omitempty"`
}

// Message is the stream's copy of t, to be encoded; nil when the shape
// leaves t as it is (alerts only), so that the shared encoding serves.
// t is not changed.
func (s *Shape) Message(t *event.Telemetry) any {
	if !s.dropMeta && !s.round && !s.calculated {
		return nil
	}
	out := shapedTelemetry{Timestamp: t.Timestamp, VehicleID: t.VehicleID, DataType: t.DataType, Data: t.Data}
	if !s.dropMeta {
		seq := t.Sequence
		out.Sequence, out.QualityIndicators = &seq, t.QualityIndicators
	}
	if s.calculated {
		out.CalculatedMetrics = calculated(t)
	}
	if s.round {
		out.Data = roundedMap(t.Data)
		if q := out.QualityIndicators; q != nil {
			r := *q
			r.SignalStrength, r.DataCompleteness = roundedPtr(q.SignalStrength), roundedPtr(q.DataCompleteness)
			out.QualityIndicators = &r
		}
		for k, v := range out.CalculatedMetrics {
			out.CalculatedMetrics[k] = roundNumber(k, v)
		}
	}
	return out
}

// alertEvent is an alert event as the stream delivers it: the fields of
// event.Event that it has, metadata left out without include_metadata.
type alertEvent struct {
	EventID   string          `json:"event_id"`
	EventType string          `json:"event_type"`
	Category  string          `json:"category"`
	Timestamp time.Time       `json:"timestamp"`
	Severity  string          `json:"severity"`
	Priority  string          `json:"priority"`
	Source    event.Source    `json:"source"`
	EventData map[string]any  `json:"event_data"`
	Metadata  *event.Metadata `json:"metadata,omitempty"`
}

// Alerts returns the alert events t raises on stream id, one per
// threshold it reaches, to be encoded; none for a stream without
// alert_integration. An alert's id is derived from the stream, the
// message and the threshold, so a message handled again raises the same
// ids.
func (s *Shape) Alerts(id string, t *event.Telemetry) []any {
	var out []any
	for i := range s.alerts {
		th := &s.alerts[i]
		if t.DataType != th.dataType {
			continue
		}
		v, ok := number(t.Data, th.group, th.field)
		if !ok || (th.atMost && v > th.limit) || (!th.atMost && v < th.limit) {
			continue
		}
		cmp := ">="
		if th.atMost {
			cmp = "<="
		}
		if s.round {
			v = roundNumber(th.field, v)
		}
		a := alertEvent{EventID: alertID(id, t, th.name), EventType: AlertEventType, Category: event.CategoryMaintenance,
			Timestamp: t.Timestamp, Severity: th.severity, Priority: th.priority, Source: event.Source{VehicleID: t.VehicleID},
			EventData: map[string]any{"threshold": th.name, "field": "data." + th.group + "." + th.field, "value": v,
				"limit": th.limit, "comparison": cmp, "data_type": t.DataType}}
		if !s.dropMeta {
			a.Metadata = &event.Metadata{SourceSystem: AlertSourceSystem}
		}
		out = append(out, a)
	}
	return out
}

// alertID names the alert of threshold name raised by t on stream id.
func alertID(id string, t *event.Telemetry, name string) string {
	h := sha256.New()
	for _, part := range []string{id, t.VehicleID, t.DataType, t.Timestamp.UTC().Format(time.RFC3339Nano), strconv.FormatInt(t.Sequence, 10), name} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "alr_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// number reads data.group.field as a number.
func number(data map[string]any, group, field string) (float64, bool) {
	g, ok := data[group].(map[string]any)
	if !ok {
		return 0, false
	}
	return toFloat(g[field])
}

// toFloat reads a number of a decoded message (the bus carries data's
// numbers as float64; the others are read too).
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int16:
		return float64(n), true
	case int8:
		return float64(n), true
	case int:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint8:
		return float64(n), true
	}
	return 0, false
}

// Conversion factors of calculated metrics.
const (
	kmPerMile       = 1.609344
	litersPerGallon = 3.785411784 // US gallon
)

// calculated derives the calculated metrics of t (nil when there are
// none): a unit's counterpart of a reading the message lacks, the range
// its fuel and average consumption give, the battery's power.
func calculated(t *event.Telemetry) map[string]float64 {
	out := map[string]float64{}
	pair := func(group, have, lack, name string, factor float64) {
		if _, given := number(t.Data, group, lack); given {
			return
		}
		if v, ok := number(t.Data, group, have); ok {
			out[name] = v * factor
		}
	}
	switch t.DataType {
	case "vehicle_dynamics":
		pair("motion", "speed_mph", "speed_kmh", "speed_kmh", kmPerMile)
		pair("motion", "speed_kmh", "speed_mph", "speed_mph", 1/kmPerMile)
	case "fuel_system":
		pair("fuel_level", "gallons", "liters", "fuel_liters", litersPerGallon)
		pair("fuel_level", "liters", "gallons", "fuel_gallons", 1/litersPerGallon)
		pair("consumption", "fuel_rate_gph", "fuel_rate_lph", "fuel_rate_lph", litersPerGallon)
		pair("consumption", "fuel_rate_lph", "fuel_rate_gph", "fuel_rate_gph", 1/litersPerGallon)
		gallons, ok := number(t.Data, "fuel_level", "gallons")
		if !ok {
			if l, okL := number(t.Data, "fuel_level", "liters"); okL {
				gallons, ok = l/litersPerGallon, true
			}
		}
		if mpg, okM := number(t.Data, "consumption", "average_mpg"); ok && okM && mpg > 0 {
			out["estimated_range_miles"] = gallons * mpg
		}
	case "electrical_system":
		v, okV := number(t.Data, "battery", "voltage")
		a, okA := number(t.Data, "battery", "current")
		if okV && okA {
			out["battery_power_w"] = v * a
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// coordinates are the field names whose numbers precision standard
// rounds to CoordinateDecimals decimals.
var coordinates = map[string]bool{"latitude": true, "longitude": true, "lat": true, "lon": true, "lng": true}

// roundNumber rounds v, the value of field name, as precision standard
// says.
func roundNumber(name string, v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	if coordinates[name] {
		p := math.Pow10(CoordinateDecimals)
		return math.Round(v*p) / p
	}
	decimals := SignificantDigits - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	switch {
	case decimals <= 0:
		return math.Round(v)
	case decimals > 15: // below 1e-12: left as it is
		return v
	}
	p := math.Pow10(decimals)
	return math.Round(v*p) / p
}

func roundedPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := roundNumber("", *v)
	return &r
}

// roundedMap is a copy of m with its numbers rounded, at any depth.
func roundedMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = rounded(k, v)
	}
	return out
}

func rounded(name string, v any) any {
	switch x := v.(type) {
	case float64:
		return roundNumber(name, x)
	case float32:
		return roundNumber(name, float64(x))
	case map[string]any:
		return roundedMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rounded(name, e)
		}
		return out
	}
	return v
}
