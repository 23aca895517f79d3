package telemetry

import (
	"bytes"
	"encoding/json"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// eventReader reads the JSON body of POST /v1/events straight into
// events, without decoding it into generic JSON first: decoding was the
// largest single cost of a small events request. Each member's value is
// read into the same Go value a decoder with UseNumber makes (strings,
// json.Number, bool, nil, map[string]any, []any) and checked by
// eventField, the general path's own check (eventText, its checks of a
// string, for the six top-level string members), so a body the reader
// takes is published exactly as the general path would publish it.
//
// Like bodyReader it declines (ok false) everything but valid, plainly
// written bodies: any validation error, no events or more than MaxBatch,
// a repeated member (in free-form objects such as event_data too: the
// API refuses it by name), an unknown member, a null member, strings with
// escapes or invalid UTF-8, top-level keys other than events, values
// nested deeper than the free-form limit. TestEventReaderMatchesGeneralPath
// and FuzzReadEvents hold it to the general path.
type eventReader struct {
	bodyReader
}

// read reads the whole body.
func (r *eventReader) read() ([]event.Event, bool) {
	if !r.open('{') {
		return nil, false
	}
	if k, ok := r.key(); !ok || string(k) != "events" || !r.open('[') {
		return nil, false
	}
	out := make([]event.Event, 0, min(MaxBatch, len(r.b)/320+1))
	for more := true; more; {
		if len(out) == MaxBatch {
			return nil, false
		}
		out = append(out, event.Event{})
		if !r.event(&out[len(out)-1], at{"events", len(out) - 1}) {
			return nil, false
		}
		var ok bool
		if more, ok = r.next(']'); !ok {
			return nil, false
		}
	}
	if more, ok := r.next('}'); more || !ok {
		return nil, false
	}
	r.ws()
	return out, r.i == len(r.b)
}

// Required members of an event, as bits.
const (
	eType = 1 << iota
	eCategory
	eTimestamp
	eSeverity
	eSource
	eRequired = eType | eCategory | eTimestamp | eSeverity | eSource
)

// event reads one event into e.
func (r *eventReader) event(e *event.Event, a at) bool {
	if !r.open('{') {
		return false
	}
	var errs fieldErrors
	var seen int
	r.names = r.names[:0]
	for more := true; more; {
		k, ok := r.key()
		if !ok || repeated(r.names, k) {
			return false
		}
		r.names = append(r.names, k)
		name, bit := eventMember(k)
		if name == "" {
			return false
		}
		switch name {
		case "source":
			ok = r.source(&e.Source)
		case "location":
			ok = r.location(e)
		case "metadata":
			ok = r.metadata(&e.Metadata)
		case "event_id", "event_type", "category", "timestamp", "severity", "priority":
			// read as text, not boxed in an any: eventField's checks of a
			// string, two allocations fewer per member
			var s []byte
			s, ok = r.str()
			ok = ok && r.s.eventText(e, name, s, r.now)
		default:
			var v any
			v, ok = r.value(1)
			ok = ok && v != nil && r.s.eventField(e, name, v, a, r.now, &errs) == "" && errs.count() == 0
		}
		if !ok {
			return false
		}
		seen |= bit
		if more, ok = r.next('}'); !ok {
			return false
		}
	}
	if seen&eRequired != eRequired {
		return false
	}
	eventDefaults(e)
	return true
}

// eventMember returns the name of a member eventField knows (a constant:
// no allocation) and its bit among the required ones; "" for any other.
func eventMember(k []byte) (string, int) {
	switch string(k) {
	case "event_id":
		return "event_id", 0
	case "event_type":
		return "event_type", eType
	case "category":
		return "category", eCategory
	case "timestamp":
		return "timestamp", eTimestamp
	case "severity":
		return "severity", eSeverity
	case "priority":
		return "priority", 0
	case "source":
		return "source", eSource
	case "location":
		return "location", 0
	case "metadata":
		return "metadata", 0
	case "event_data":
		return "event_data", 0
	case "risk_assessment":
		return "risk_assessment", 0
	case "automatic_actions":
		return "automatic_actions", 0
	case "emergency_response":
		return "emergency_response", 0
	case "escalation":
		return "escalation", 0
	case "predictive_indicators":
		return "predictive_indicators", 0
	case "performance_metrics":
		return "performance_metrics", 0
	case "recommendations":
		return "recommendations", 0
	}
	return "", 0
}

// members reads an object, handing each key to member, which reads its
// value and returns the key's bit (0 for a key it does not take) and
// whether the value read well; a key not taken, a value that failed or
// a repeated key declines. seen holds the bits of the keys read.
func (r *bodyReader) members(member func(k []byte) (bit int, ok bool)) (seen int, ok bool) {
	if !r.open('{') {
		return 0, false
	}
	if r.peek() == '}' {
		r.i++
		return 0, true
	}
	for more := true; more; {
		k, ok := r.key()
		if !ok {
			return 0, false
		}
		bit, ok := member(k)
		if !ok || bit == 0 || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		if more, ok = r.next('}'); !ok {
			return 0, false
		}
	}
	return seen, true
}

// each a string of at most MaxIDLen characters and not blank, one of vehicle_id,
// each a string of at most MaxIDLen characters, one of vehicle_id,
// driver_id or trip_id not empty.
func (r *eventReader) source(src *event.Source) bool {
	_, ok := r.members(func(k []byte) (int, bool) {
		var dst *string
		var bit int
		switch string(k) {
		case "vehicle_id":
			dst, bit = &src.VehicleID, 1
		case "driver_id":
			dst, bit = &src.DriverID, 2
		case "trip_id":
			dst, bit = &src.TripID, 4
		case "fleet_id":
			dst, bit = &src.FleetID, 8
		default:
			return 0, false
		}
		v, ok := r.id()
		*dst = v
		return bit, ok
	})
	return ok && (src.VehicleID != "" || src.DriverID != "" || src.TripID != "")
}

// location reads the location object as location() checks it.
func (r *eventReader) location(e *event.Event) bool {
	l := &event.Location{}
	seen, ok := r.members(func(k []byte) (bit int, ok bool) {
		switch string(k) {
		case "latitude":
			l.Latitude, ok = r.number()
			return 1, ok && l.Latitude >= -90 && l.Latitude <= 90
		case "longitude":
			l.Longitude, ok = r.number()
			return 2, ok && l.Longitude >= -180 && l.Longitude <= 180
		case "address":
			l.Address, ok = r.text(MaxAddressLen)
			return 4, ok
		case "geofence":
			l.Geofence, ok = r.id()
			return 8, ok
		case "road_type":
			l.RoadType, ok = r.text(MaxTextLen)
			return 16, ok
		case "accuracy":
			l.Accuracy, ok = r.nonNegative()
			return 32, ok
		case "speed_limit":
			l.SpeedLimit, ok = r.nonNegative()
			return 64, ok
		case "emergency_services_distance":
			l.EmergencyServicesDistance, ok = r.nonNegative()
			return 128, ok
		}
		return 0, false
	})
	if !ok || seen&3 != 3 {
		return false
	}
	e.Location = l
	return true
}

// metadata reads the metadata object as metadata() checks it; late, set
// by the hub only, is declined with every other member it refuses.
func (r *eventReader) metadata(md *event.Metadata) bool {
	_, ok := r.members(func(k []byte) (bit int, ok bool) {
		switch string(k) {
		case "correlation_id":
			md.CorrelationID, ok = r.id()
			return 1, ok
		case "sequence_number":
			md.SequenceNumber, ok = r.count()
			return 2, ok && md.SequenceNumber <= MaxSequenceNumber
		case "source_system":
			md.SourceSystem, ok = r.text(MaxTextLen)
			return 4, ok
		case "processing_time":
			_, ok = r.text(MaxTextLen) // replaced by the hub's
			return 8, ok
		}
		return 0, false
	})
	return ok
}

// text reads a plain string of at most max characters.
func (r *bodyReader) text(max int) (string, bool) {
	v, ok := r.str()
	if !ok || !textOK(v, max) {
		return "", false
	}
	return string(v), true
}

// id reads an identifier as idText checks it: a plain string of at most
// MaxIDLen characters, not blank, without a control character.
func (r *bodyReader) id() (string, bool) {
	v, ok := r.str()
	if !ok || jsonpath.IsBlank(v) || !textOK(v, MaxIDLen) || jsonpath.HasControl(v) {
		return "", false
	}
	return string(v), true
}

// nonNegative reads a number ≥ 0.
func (r *bodyReader) nonNegative() (*float64, bool) {
	f, ok := r.number()
	if !ok || f < 0 {
		return nil, false
	}
	return &f, true
}

// value reads any JSON value as a decoder with UseNumber decodes it into
// an interface: depth counts the objects and arrays it is in, and a
// value past the free-form limit is declined (freeForm words that).
func (r *bodyReader) value(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	switch r.peek() {
	case '"':
		s, ok := r.str()
		return string(s), ok
	case '{':
		r.i++
		m := map[string]any{}
		if r.peek() == '}' {
			r.i++
			return m, true
		}
		for more := true; more; {
			k, ok := r.key()
			if !ok {
				return nil, false
			}
			v, ok := r.value(depth + 1)
			if !ok {
				return nil, false
			}
			if _, dup := m[string(k)]; dup || len(k) == 0 {
				return nil, false // a repeated or an empty key: refused by name
			}
			m[string(k)] = v
			if more, ok = r.next('}'); !ok {
				return nil, false
			}
		}
		return m, true
	case '[':
		r.i++
		l := []any{}
		if r.peek() == ']' {
			r.i++
			return l, true
		}
		for more := true; more; {
			v, ok := r.value(depth + 1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
			if more, ok = r.next(']'); !ok {
				return nil, false
			}
		}
		return l, true
	case 't', 'f':
		return r.boolean()
	case 'n':
		if !bytes.HasPrefix(r.b[r.i:], []byte("null")) {
			return nil, false
		}
		r.i += 4
		return nil, true
	}
	lit, _, ok := r.literal()
	if !ok {
		return nil, false
	}
	return json.Number(lit), true
}
