package expr

import (
	"strconv"
	"strings"

	"github.com/fleethub/fleethub/hub/event"
)

// fieldType is the static type of a message field, for checking a
// condition's constant at compile time.
type fieldType uint8

const (
	ftString fieldType = iota
	ftNumber
	ftTime
	ftDynamic // a free-form object or value: anything below it resolves at match time
	ftObject  // a struct: only its fields can be compared
)

// field is one named field of a message. A field is present exactly when
// it is present in the message's JSON form (omitempty fields that are
// empty are missing).
type field struct {
	typ  fieldType
	enum []string                              // allowed string values, if any
	get  func(env *event.Envelope) value       // ftString, ftNumber, ftTime
	root func(env *event.Envelope) (any, bool) // ftDynamic
}

func str(s string) value { return value{k: kString, s: s} }

func strOmit(s string) value {
	if s == "" {
		return value{}
	}
	return value{k: kString, s: s}
}

func num(f float64) value { return value{k: kNumber, n: f} }

func numPtr(f *float64) value {
	if f == nil {
		return value{}
	}
	return value{k: kNumber, n: *f}
}

func mapOmit(m map[string]any) (any, bool) { return m, len(m) > 0 }

func evMap(f func(ev *event.Event) map[string]any) func(env *event.Envelope) (any, bool) {
	return func(env *event.Envelope) (any, bool) { return mapOmit(f(env.Event)) }
}

func locStr(f func(l *event.Location) string) func(env *event.Envelope) value {
	return func(env *event.Envelope) value {
		if l := env.Event.Location; l != nil {
			return strOmit(f(l))
		}
		return value{}
	}
}

func locNum(f func(l *event.Location) *float64) func(env *event.Envelope) value {
	return func(env *event.Envelope) value {
		if l := env.Event.Location; l != nil {
			return numPtr(f(l))
		}
		return value{}
	}
}

// eventFields are the fields of Event by JSON path. Accessors are only
// called with env.Event != nil.
var eventFields = map[string]field{
	"event_id":   {typ: ftString, get: func(env *event.Envelope) value { return str(env.Event.EventID) }},
	"event_type": {typ: ftString, get: func(env *event.Envelope) value { return str(env.Event.EventType) }},
	"category":   {typ: ftString, enum: event.Categories, get: func(env *event.Envelope) value { return str(env.Event.Category) }},
	"timestamp":  {typ: ftTime, get: func(env *event.Envelope) value { return value{k: kTime, t: env.Event.Timestamp} }},
	"severity":   {typ: ftString, enum: event.Severities, get: func(env *event.Envelope) value { return str(env.Event.Severity) }},
	"priority":   {typ: ftString, enum: event.Priorities, get: func(env *event.Envelope) value { return str(env.Event.Priority) }},

	"source":            {typ: ftObject},
	"source.vehicle_id": {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Source.VehicleID) }},
	"source.driver_id":  {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Source.DriverID) }},
	"source.trip_id":    {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Source.TripID) }},
	"source.fleet_id":   {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Source.FleetID) }},

	"location": {typ: ftObject},
	"location.latitude": {typ: ftNumber, get: func(env *event.Envelope) value {
		if l := env.Event.Location; l != nil {
			return num(l.Latitude)
		}
		return value{}
	}},
	"location.longitude": {typ: ftNumber, get: func(env *event.Envelope) value {
		if l := env.Event.Location; l != nil {
			return num(l.Longitude)
		}
		return value{}
	}},
	"location.address":                     {typ: ftString, get: locStr(func(l *event.Location) string { return l.Address })},
	"location.geofence":                    {typ: ftString, get: locStr(func(l *event.Location) string { return l.Geofence })},
	"location.road_type":                   {typ: ftString, get: locStr(func(l *event.Location) string { return l.RoadType })},
	"location.accuracy":                    {typ: ftNumber, get: locNum(func(l *event.Location) *float64 { return l.Accuracy })},
	"location.speed_limit":                 {typ: ftNumber, get: locNum(func(l *event.Location) *float64 { return l.SpeedLimit })},
	"location.emergency_services_distance": {typ: ftNumber, get: locNum(func(l *event.Location) *float64 { return l.EmergencyServicesDistance })},

	"metadata":                 {typ: ftObject},
	"metadata.correlation_id":  {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Metadata.CorrelationID) }},
	"metadata.sequence_number": {typ: ftNumber, get: func(env *event.Envelope) value { return num(float64(env.Event.Metadata.SequenceNumber)) }},
	"metadata.processing_time": {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Metadata.ProcessingTime) }},
	"metadata.source_system":   {typ: ftString, get: func(env *event.Envelope) value { return strOmit(env.Event.Metadata.SourceSystem) }},

	"event_data":            {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.EventData })},
	"risk_assessment":       {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.RiskAssessment })},
	"automatic_actions":     {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.AutomaticActions })},
	"emergency_response":    {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.EmergencyResponse })},
	"escalation":            {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.Escalation })},
	"predictive_indicators": {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.PredictiveIndicators })},
	"performance_metrics":   {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.PerformanceMetrics })},
	"enrichment":            {typ: ftDynamic, root: evMap(func(ev *event.Event) map[string]any { return ev.Enrichment })},
	"recommendations": {typ: ftDynamic, root: func(env *event.Envelope) (any, bool) {
		r := env.Event.Recommendations
		return r, r != nil
	}},
}

func qiNum(f func(q *event.QualityIndicators) *float64) func(env *event.Envelope) value {
	return func(env *event.Envelope) value {
		if q := env.Telemetry.QualityIndicators; q != nil {
			return numPtr(f(q))
		}
		return value{}
	}
}

// telemetryFields are the fields of Telemetry by JSON path. Accessors are
// only called with env.Telemetry != nil.
var telemetryFields = map[string]field{
	"timestamp":  {typ: ftTime, get: func(env *event.Envelope) value { return value{k: kTime, t: env.Telemetry.Timestamp} }},
	"vehicle_id": {typ: ftString, get: func(env *event.Envelope) value { return str(env.Telemetry.VehicleID) }},
	"data_type":  {typ: ftString, enum: event.DataTypes, get: func(env *event.Envelope) value { return str(env.Telemetry.DataType) }},
	"sequence":   {typ: ftNumber, get: func(env *event.Envelope) value { return num(float64(env.Telemetry.Sequence)) }},
	// data is not omitempty: a nil map is JSON null.
	"data": {typ: ftDynamic, root: func(env *event.Envelope) (any, bool) {
		if d := env.Telemetry.Data; d != nil {
			return d, true
		}
		return nil, true
	}},
	"quality_indicators":                   {typ: ftObject},
	"quality_indicators.signal_strength":   {typ: ftNumber, get: qiNum(func(q *event.QualityIndicators) *float64 { return q.SignalStrength })},
	"quality_indicators.data_completeness": {typ: ftNumber, get: qiNum(func(q *event.QualityIndicators) *float64 { return q.DataCompleteness })},
	"quality_indicators.sensor_health": {typ: ftString, get: func(env *event.Envelope) value {
		if q := env.Telemetry.QualityIndicators; q != nil {
			return strOmit(q.SensorHealth)
		}
		return value{}
	}},
}

// accessor reads one field path of a message.
type accessor struct {
	f    field
	rest []string // path below a ftDynamic root
	idx  []int    // rest[i] as an array index, or -1
}

// resolve compiles a dotted path against the fields of one kind of
// message; the error message is for the condition's field.
func resolve(fields map[string]field, kindName, path string) (accessor, string) {
	if path == "" {
		return accessor{}, "must not be empty"
	}
	if len(path) > MaxFieldLen {
		return accessor{}, "is longer than " + strconv.Itoa(MaxFieldLen) + " bytes"
	}
	segs := strings.Split(path, ".")
	if len(segs) > MaxFieldDepth {
		return accessor{}, "has more than " + strconv.Itoa(MaxFieldDepth) + " segments"
	}
	for _, s := range segs {
		if s == "" {
			return accessor{}, strconv.Quote(path) + " has an empty segment"
		}
	}
	f, ok := fields[segs[0]]
	if !ok {
		return accessor{}, "unknown field " + strconv.Quote(segs[0]) + " of " + kindName + " messages"
	}
	n := 1
	if f.typ == ftObject {
		if len(segs) == 1 {
			return accessor{}, strconv.Quote(path) + " is an object; name one of its fields"
		}
		name := segs[0] + "." + segs[1]
		if f, ok = fields[name]; !ok {
			return accessor{}, "unknown field " + strconv.Quote(name) + " of " + kindName + " messages"
		}
		n = 2
	}
	if f.typ != ftDynamic {
		if len(segs) > n {
			return accessor{}, strconv.Quote(strings.Join(segs[:n], ".")) + " is not an object"
		}
		return accessor{f: f}, ""
	}
	a := accessor{f: f, rest: segs[n:], idx: make([]int, len(segs)-n)}
	for i, s := range a.rest {
		a.idx[i] = -1
		a.idx[i] = arrayIndex(s)
	}
	return a, ""
}

// get reads the field from env; it does not allocate.
func (a *accessor) get(env *event.Envelope) value {
	if a.f.get != nil {
		return a.f.get(env)
	}
	v, ok := a.f.root(env)
	if !ok {
		return value{}
	}
	for i, seg := range a.rest {
		switch x := v.(type) {
		case map[string]any:
			if v, ok = x[seg]; !ok {
				return value{}
			}
		case []any:
			j := a.idx[i]
			if j < 0 || j >= len(x) {
				return value{}
			}
			v = x[j]
		default:
			return value{}
		}
	}
	return fromAny(v)
}

// arrayIndex returns the array index a segment of decimal digits names,
// or -1.
func arrayIndex(s string) int {
	if len(s) > 9 {
		return -1
	}
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		j = j*10 + int(c-'0')
	}
	return j
}
