package event

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/internal/jsonw"
)

// AppendEventJSON appends ev as encoding/json.Marshal writes it, byte for
// byte (fields in declaration order, omitempty fields left out, map keys
// sorted, strings escaped for HTML, numbers as Marshal formats them),
// without reflection. It reports false, with b unspecified, when a value
// holds something it does not write itself (free-form values other than
// nil, bool, string, float64, int, int64, time.Time, []any, []string and
// map[string]any; a float that is not finite; a time outside the years
// 0–9999): the caller then uses encoding/json.
func AppendEventJSON(b []byte, ev *Event) ([]byte, bool) {
	var ok bool
	b = append(b, `{"event_id":`...)
	b = appendJSONString(b, ev.EventID)
	b = append(b, `,"event_type":`...)
	b = appendJSONString(b, ev.EventType)
	b = append(b, `,"category":`...)
	b = appendJSONString(b, ev.Category)
	b = append(b, `,"timestamp":`...)
	if b, ok = appendJSONTime(b, ev.Timestamp); !ok {
		return b, false
	}
	b = append(b, `,"severity":`...)
	b = appendJSONString(b, ev.Severity)
	b = append(b, `,"priority":`...)
	b = appendJSONString(b, ev.Priority)
	b = append(b, `,"source":{`...)
	first := true
	for _, f := range [...][2]string{{"vehicle_id", ev.Source.VehicleID}, {"driver_id", ev.Source.DriverID}, {"trip_id", ev.Source.TripID}, {"fleet_id", ev.Source.FleetID}} {
		if f[1] == "" {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(appendJSONString(b, f[0]), ':')
		b = appendJSONString(b, f[1])
	}
	b = append(b, '}')
	if l := ev.Location; l != nil {
		b = append(b, `,"location":{"latitude":`...)
		if b, ok = appendJSONFloat(b, l.Latitude); !ok {
			return b, false
		}
		b = append(b, `,"longitude":`...)
		if b, ok = appendJSONFloat(b, l.Longitude); !ok {
			return b, false
		}
		if l.Address != "" {
			b = appendJSONString(append(b, `,"address":`...), l.Address)
		}
		if l.Geofence != "" {
			b = appendJSONString(append(b, `,"geofence":`...), l.Geofence)
		}
		for _, f := range [...]struct {
			key string
			v   *float64
		}{{`,"accuracy":`, l.Accuracy}, {`,"speed_limit":`, l.SpeedLimit}} {
			if f.v != nil {
				if b, ok = appendJSONFloat(append(b, f.key...), *f.v); !ok {
					return b, false
				}
			}
		}
		if l.RoadType != "" {
			b = appendJSONString(append(b, `,"road_type":`...), l.RoadType)
		}
		if l.EmergencyServicesDistance != nil {
			if b, ok = appendJSONFloat(append(b, `,"emergency_services_distance":`...), *l.EmergencyServicesDistance); !ok {
				return b, false
			}
		}
		b = append(b, '}')
	}
	if len(ev.EventData) > 0 {
		if b, ok = appendJSONMap(append(b, `,"event_data":`...), ev.EventData, 0); !ok {
			return b, false
		}
	}
	b = append(b, `,"metadata":{`...)
	m := &ev.Metadata
	if m.CorrelationID != "" {
		b = append(appendJSONString(append(b, `"correlation_id":`...), m.CorrelationID), ',')
	}
	b = strconv.AppendInt(append(b, `"sequence_number":`...), m.SequenceNumber, 10)
	if m.ProcessingTime != "" {
		b = appendJSONString(append(b, `,"processing_time":`...), m.ProcessingTime)
	}
	if m.SourceSystem != "" {
		b = appendJSONString(append(b, `,"source_system":`...), m.SourceSystem)
	}
	if m.Late {
		b = append(b, `,"late":true`...)
	}
	b = append(b, '}')
	for _, f := range [...]struct {
		key string
		m   map[string]any
	}{
		{`,"risk_assessment":`, ev.RiskAssessment},
		{`,"automatic_actions":`, ev.AutomaticActions},
		{`,"emergency_response":`, ev.EmergencyResponse},
		{`,"escalation":`, ev.Escalation},
	} {
		if len(f.m) > 0 {
			if b, ok = appendJSONMap(append(b, f.key...), f.m, 0); !ok {
				return b, false
			}
		}
	}
	if ev.Recommendations != nil { // encoding/json leaves out only a nil interface
		if b, ok = appendJSONAny(append(b, `,"recommendations":`...), ev.Recommendations, 0); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		key string
		m   map[string]any
	}{
		{`,"predictive_indicators":`, ev.PredictiveIndicators},
		{`,"performance_metrics":`, ev.PerformanceMetrics},
		{`,"enrichment":`, ev.Enrichment},
	} {
		if len(f.m) > 0 {
			if b, ok = appendJSONMap(append(b, f.key...), f.m, 0); !ok {
				return b, false
			}
		}
	}
	return append(b, '}'), true
}

// appendJSONAny writes a free-form value as encoding/json does.
func appendJSONAny(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxAnyDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		return appendJSONString(b, x), true
	case float64:
		return appendJSONFloat(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case time.Time:
		return appendJSONTime(b, x)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		return appendJSONMap(b, x, depth)
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		var ok bool
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendJSONAny(b, e, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case []string:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, s := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendJSONMap writes a map with its keys sorted, as encoding/json does.
func appendJSONMap(b []byte, m map[string]any, depth int) ([]byte, bool) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	var ok bool
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, k), ':')
		if b, ok = appendJSONAny(b, m[k], depth+1); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendJSONFloat formats f as encoding/json's float64 encoder: the
// shortest representation, in exponent form below 1e-6 and from 1e21 on
// with a two-digit exponent cut to one ("1e-07" is "1e-7"); false for a
// NaN or an infinity, which it refuses.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendJSONTime writes t as time.Time's MarshalJSON does; false for
// what it refuses.
func appendJSONTime(b []byte, t time.Time) ([]byte, bool) { return jsonw.AppendTime(b, t) }

// appendJSONString writes s quoted and escaped as encoding/json.Marshal
// does (HTML characters escaped).
func appendJSONString(b []byte, s string) []byte { return jsonw.AppendString(b, s, true) }

// AppendTelemetryJSON appends t as encoding/json.Marshal writes it, byte
// for byte, as AppendEventJSON does an event; false when a value holds
// something it leaves to encoding/json.
func AppendTelemetryJSON(b []byte, t *Telemetry) ([]byte, bool) {
	var ok bool
	b = append(b, `{"timestamp":`...)
	if b, ok = appendJSONTime(b, t.Timestamp); !ok {
		return b, false
	}
	b = appendJSONString(append(b, `,"vehicle_id":`...), t.VehicleID)
	b = appendJSONString(append(b, `,"data_type":`...), t.DataType)
	b = strconv.AppendInt(append(b, `,"sequence":`...), t.Sequence, 10)
	b = append(b, `,"data":`...)
	if t.Data == nil {
		b = append(b, "null"...)
	} else if b, ok = appendJSONMap(b, t.Data, 0); !ok {
		return b, false
	}
	if q := t.QualityIndicators; q != nil {
		b = append(b, `,"quality_indicators":{`...)
		sep := ""
		for _, f := range [...]struct {
			key string
			v   *float64
		}{{`"signal_strength":`, q.SignalStrength}, {`"data_completeness":`, q.DataCompleteness}} {
			if f.v != nil {
				if b, ok = appendJSONFloat(append(append(b, sep...), f.key...), *f.v); !ok {
					return b, false
				}
				sep = ","
			}
		}
		if q.SensorHealth != "" {
			b = appendJSONString(append(append(b, sep...), `"sensor_health":`...), q.SensorHealth)
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}
