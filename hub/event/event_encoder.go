package event

import (
	"encoding/binary"
	"math"
	"time"
)

// More msgpack codes.
const (
	nilc    = 0xc0
	falsec  = 0xc2
	truec   = 0xc3
	array32 = 0xdd
	map32   = 0xdf
)

// maxAnyDepth bounds the nesting appendAny follows; deeper values go to
// the msgpack library.
const maxAnyDepth = 32

// appendEventEnvelope writes an event envelope in the wire format of the
// msgpack library's Marshal (struct fields as map entries in declaration
// order, omitempty fields left out when empty, integers as int64 and
// numbers as float64, times as the timestamp extension), without
// reflection. It reports false, with b unspecified, when a free-form
// value holds a type it does not write (anything but nil, bool, string,
// float64, int, int64, time.Time, []any, []string and map[string]any),
// for the library to encode instead.
func appendEventEnvelope(b []byte, e *Envelope) ([]byte, bool) {
	n := 4 // o, e, k, i
	if e.Event != nil {
		n++
	}
	b = appendMapLen(b, n)
	b = appendStr(appendStr(b, "o"), e.Org)
	b = appendStr(appendStr(b, "e"), e.Env)
	b = appendStr(appendStr(b, "k"), e.Kind)
	if e.Event != nil {
		var ok bool
		if b, ok = appendEvent(appendStr(b, "ev"), e.Event); !ok {
			return b, false
		}
	}
	return appendTime(appendStr(b, "i"), e.IngestedAt), true
}

// appendEvent writes an Event as a msgpack map.
func appendEvent(b []byte, ev *Event) ([]byte, bool) {
	free := [...]struct {
		key string
		m   map[string]any
	}{
		{"event_data", ev.EventData},
		{"risk_assessment", ev.RiskAssessment},
		{"automatic_actions", ev.AutomaticActions},
		{"emergency_response", ev.EmergencyResponse},
		{"escalation", ev.Escalation},
		{"predictive_indicators", ev.PredictiveIndicators},
		{"performance_metrics", ev.PerformanceMetrics},
		{"enrichment", ev.Enrichment},
	}
	n := 8 // event_id, event_type, category, timestamp, severity, priority, source, metadata
	if ev.Location != nil {
		n++
	}
	for _, f := range free {
		if len(f.m) > 0 {
			n++
		}
	}
	if !emptyAny(ev.Recommendations) {
		n++
	}
	b = appendMapLen(b, n)
	b = appendStr(appendStr(b, "event_id"), ev.EventID)
	b = appendStr(appendStr(b, "event_type"), ev.EventType)
	b = appendStr(appendStr(b, "category"), ev.Category)
	b = appendTime(appendStr(b, "timestamp"), ev.Timestamp)
	b = appendStr(appendStr(b, "severity"), ev.Severity)
	b = appendStr(appendStr(b, "priority"), ev.Priority)
	b = appendSource(appendStr(b, "source"), &ev.Source)
	if ev.Location != nil {
		b = appendLocation(appendStr(b, "location"), ev.Location)
	}
	var ok bool
	if len(ev.EventData) > 0 {
		if b, ok = appendAnyMap(appendStr(b, "event_data"), ev.EventData, 0); !ok {
			return b, false
		}
	}
	b = appendMetadata(appendStr(b, "metadata"), &ev.Metadata)
	// the declaration order: the category objects, recommendations
	// after escalation, enrichment last
	for _, f := range free[1:5] {
		if len(f.m) > 0 {
			if b, ok = appendAnyMap(appendStr(b, f.key), f.m, 0); !ok {
				return b, false
			}
		}
	}
	if !emptyAny(ev.Recommendations) {
		if b, ok = appendAny(appendStr(b, "recommendations"), ev.Recommendations, 0); !ok {
			return b, false
		}
	}
	for _, f := range free[5:] {
		if len(f.m) > 0 {
			if b, ok = appendAnyMap(appendStr(b, f.key), f.m, 0); !ok {
				return b, false
			}
		}
	}
	return b, true
}

func appendSource(b []byte, s *Source) []byte {
	fields := [...][2]string{{"vehicle_id", s.VehicleID}, {"driver_id", s.DriverID}, {"trip_id", s.TripID}, {"fleet_id", s.FleetID}}
	n := 0
	for _, f := range fields {
		if f[1] != "" {
			n++
		}
	}
	b = appendMapLen(b, n)
	for _, f := range fields {
		if f[1] != "" {
			b = appendStr(appendStr(b, f[0]), f[1])
		}
	}
	return b
}

func appendLocation(b []byte, l *Location) []byte {
	n := 2
	for _, present := range [...]bool{l.Address != "", l.Geofence != "", l.Accuracy != nil, l.SpeedLimit != nil, l.RoadType != "", l.EmergencyServicesDistance != nil} {
		if present {
			n++
		}
	}
	b = appendMapLen(b, n)
	b = appendFloat(appendStr(b, "latitude"), l.Latitude)
	b = appendFloat(appendStr(b, "longitude"), l.Longitude)
	if l.Address != "" {
		b = appendStr(appendStr(b, "address"), l.Address)
	}
	if l.Geofence != "" {
		b = appendStr(appendStr(b, "geofence"), l.Geofence)
	}
	if l.Accuracy != nil {
		b = appendFloat(appendStr(b, "accuracy"), *l.Accuracy)
	}
	if l.SpeedLimit != nil {
		b = appendFloat(appendStr(b, "speed_limit"), *l.SpeedLimit)
	}
	if l.RoadType != "" {
		b = appendStr(appendStr(b, "road_type"), l.RoadType)
	}
	if l.EmergencyServicesDistance != nil {
		b = appendFloat(appendStr(b, "emergency_services_distance"), *l.EmergencyServicesDistance)
	}
	return b
}

func appendMetadata(b []byte, m *Metadata) []byte {
	n := 1 // sequence_number
	for _, present := range [...]bool{m.CorrelationID != "", m.ProcessingTime != "", m.SourceSystem != "", m.Late} {
		if present {
			n++
		}
	}
	b = appendMapLen(b, n)
	if m.CorrelationID != "" {
		b = appendStr(appendStr(b, "correlation_id"), m.CorrelationID)
	}
	b = appendInt64(appendStr(b, "sequence_number"), m.SequenceNumber)
	if m.ProcessingTime != "" {
		b = appendStr(appendStr(b, "processing_time"), m.ProcessingTime)
	}
	if m.SourceSystem != "" {
		b = appendStr(appendStr(b, "source_system"), m.SourceSystem)
	}
	if m.Late {
		b = append(appendStr(b, "late"), truec)
	}
	return b
}

// emptyAny reports whether an omitempty interface field holding v is
// left out, as the library decides it: nil, or a zero value of what it
// holds (an empty string, map or slice, false, 0, a zero time).
func emptyAny(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case int:
		return x == 0
	case int64:
		return x == 0
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case []string:
		return len(x) == 0
	case time.Time:
		return x.IsZero()
	}
	return false // a type appendAny leaves to the library anyway
}

// appendAny writes a free-form value as the library's interface encoder
// does, or reports false for a type it leaves to the library.
func appendAny(b []byte, v any, depth int) ([]byte, bool) {
	if depth > maxAnyDepth {
		return b, false
	}
	switch x := v.(type) {
	case nil:
		return append(b, nilc), true
	case bool:
		if x {
			return append(b, truec), true
		}
		return append(b, falsec), true
	case string:
		return appendStr(b, x), true
	case float64:
		return appendFloat(b, x), true
	case int64:
		return appendInt64(b, x), true
	case int:
		return appendCompactInt(b, int64(x)), true
	case map[string]any:
		if x == nil {
			return append(b, nilc), true
		}
		return appendAnyMap(b, x, depth)
	case []any:
		if x == nil {
			return append(b, nilc), true
		}
		b = appendArrayLen(b, len(x))
		var ok bool
		for _, e := range x {
			if b, ok = appendAny(b, e, depth+1); !ok {
				return b, false
			}
		}
		return b, true
	case []string:
		if x == nil {
			return append(b, nilc), true
		}
		b = appendArrayLen(b, len(x))
		for _, s := range x {
			b = appendStr(b, s)
		}
		return b, true
	case time.Time:
		return appendTime(b, x), true
	}
	return b, false
}

func appendAnyMap(b []byte, m map[string]any, depth int) ([]byte, bool) {
	b = appendMapLen(b, len(m))
	var ok bool
	for k, v := range m {
		if b, ok = appendAny(appendStr(b, k), v, depth+1); !ok {
			return b, false
		}
	}
	return b, true
}

// appendCompactInt writes n in the fewest bytes, as the library writes
// an int held in an interface.
func appendCompactInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= math.MaxInt8, n < 0 && n >= -32:
		return append(b, byte(n))
	case n > 0 && n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n > 0 && n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n > 0 && n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n > 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return appendInt64(b, n)
}

func appendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, fixMap|byte(n))
	case n < 1<<16:
		return append(b, map16, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint32(append(b, map32), uint32(n))
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, fixArray|byte(n))
	case n < 1<<16:
		return append(b, array16, byte(n>>8), byte(n))
	}
	return binary.BigEndian.AppendUint32(append(b, array32), uint32(n))
}
