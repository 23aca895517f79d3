package telemetry

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// SourceSystemExternal is the source_system of events sent without one.
const SourceSystemExternal = "external"

// validateEvent checks one external event and builds it, without its
// event_id default and processing_time (the caller sets them). Unknown
// fields are rejected, enrichment among them: the pipeline adds it.
func (s *Service) validateEvent(m map[string]any, a at, now time.Time, errs *fieldErrors) (e event.Event, ok bool) {
	before := errs.count()
	if m == nil {
		errs.add(a.path(""), "must be an object")
		return e, false
	}
	for k, v := range m {
		if msg := s.eventField(&e, k, v, a, now, errs); msg != "" {
			errs.add(a.path(key(k)), msg)
		}
	}
	for _, req := range [...]string{"event_type", "category", "timestamp", "severity", "source"} {
		if v, has := m[req]; !has || v == nil {
			errs.add(a.path(req), "is required")
		}
	}
	eventDefaults(&e)
	return e, errs.count() == before
}

// eventDefaults fills what an event left out.
func eventDefaults(e *event.Event) {
	if e.Priority == "" {
		e.Priority = "normal"
	}
	if e.Metadata.SourceSystem == "" {
		e.Metadata.SourceSystem = SourceSystemExternal
	}
}

// eventField checks one member k of an external event and sets it on e.
// It returns the message for the member itself; failures inside it
// (source.x, event_data.y) go to errs under their own paths.
func (s *Service) eventField(e *event.Event, k string, v any, a at, now time.Time, errs *fieldErrors) (msg string) {
	switch k {
	case "event_id":
		if e.EventID, msg = text(v, MaxTextLen); msg == "" && !eventID(e.EventID) {
			msg = "must be 1 to 100 letters, digits, _, -, . or :"
		}
	case "event_type":
		if e.EventType, msg = text(v, MaxTextLen); msg == "" && !snake(e.EventType) {
			msg = "must be a snake_case name such as harsh_braking"
		}
	case "category":
		e.Category, msg = oneOf(v, event.Categories)
	case "timestamp":
		e.Timestamp, msg = timestamp(v, true, now.Add(s.cfg.MaxFuture), s.cfg.MaxFuture)
	case "severity":
		e.Severity, msg = oneOf(v, event.Severities)
	case "priority":
		e.Priority, msg = oneOf(v, event.Priorities)
	case "source":
		e.Source, msg = source(v, a, errs)
	case "location":
		e.Location, msg = location(v, a, errs)
	case "metadata":
		e.Metadata, msg = metadata(v, a, errs)
	case "event_data":
		e.EventData = object(v, k, a, errs)
	case "risk_assessment":
		e.RiskAssessment = object(v, k, a, errs)
	case "automatic_actions":
		e.AutomaticActions = object(v, k, a, errs)
	case "emergency_response":
		e.EmergencyResponse = object(v, k, a, errs)
	case "escalation":
		e.Escalation = object(v, k, a, errs)
	case "predictive_indicators":
		e.PredictiveIndicators = object(v, k, a, errs)
	case "performance_metrics":
		e.PerformanceMetrics = object(v, k, a, errs)
	case "recommendations":
		switch v.(type) {
		case []any, map[string]any:
			n, sub, fmsg := freeForm(v, 1)
			if fmsg != "" {
				errs.add(a.path(joinPath(k, sub)), fmsg)
			}
			e.Recommendations = n
		default:
			msg = "must be an array or an object"
		}
	default:
		msg = jsonpath.UnknownRefusal
	}
	return msg
}

// eventText is eventField for a member sent as a string that is one of
// event_id, event_type, category, timestamp, severity and priority: it
// sets the member from s and reports whether it passed eventField's
// check. An enum member takes the allowed value itself, so only the ids
// and the timestamp copy s.
func (s *Service) eventText(e *event.Event, k string, b []byte, now time.Time) bool {
	switch k {
	case "event_id":
		e.EventID = string(b)
		return textOK(b, MaxTextLen) && eventID(e.EventID)
	case "event_type":
		e.EventType = string(b)
		return textOK(b, MaxTextLen) && snake(e.EventType)
	case "category":
		e.Category = known(b, event.Categories)
		return e.Category != ""
	case "timestamp":
		var msg string
		e.Timestamp, msg = timestampText(string(b), now.Add(s.cfg.MaxFuture), s.cfg.MaxFuture)
		return msg == ""
	case "severity":
		e.Severity = known(b, event.Severities)
		return e.Severity != ""
	case "priority":
		e.Priority = known(b, event.Priorities)
		return e.Priority != ""
	}
	return false
}

// known returns the element of allowed that b spells, "" when none.
func known(b []byte, allowed []string) string {
	for _, a := range allowed {
		if string(b) == a {
			return a
		}
	}
	return ""
}

// eventID reports whether s is a usable event id.
func eventID(s string) bool {
	if s == "" || len(s) > MaxTextLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// source checks the source object: at least one of its ids.
func source(v any, a at, errs *fieldErrors) (event.Source, string) {
	var src event.Source
	m, ok := v.(map[string]any)
	if !ok {
		return src, "must be an object"
	}
	for k, e := range m {
		var dst *string
		switch k {
		case "vehicle_id":
			dst = &src.VehicleID
		case "driver_id":
			dst = &src.DriverID
		case "trip_id":
			dst = &src.TripID
		case "fleet_id":
			dst = &src.FleetID
		default:
			errs.add(a.path("source."+key(k)), jsonpath.UnknownRefusal+"; allowed: driver_id, fleet_id, trip_id or vehicle_id")
			continue
		}
		s, msg := idText(e)
		if msg != "" {
			errs.add(a.path("source."+k), msg)
			continue
		}
		*dst = s
	}
	if src.VehicleID == "" && src.DriverID == "" && src.TripID == "" {
		return src, "must carry at least one of vehicle_id, driver_id or trip_id"
	}
	return src, ""
}

// location checks an event location.
func location(v any, a at, errs *fieldErrors) (*event.Location, string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "must be an object"
	}
	l := &event.Location{}
	for _, req := range [...]string{"latitude", "longitude"} {
		if _, has := m[req]; !has {
			errs.add(a.path("location."+req), "is required")
		}
	}
	for k, e := range m {
		var msg string
		switch k {
		case "latitude":
			if f, ok := number(e); !ok || f < -90 || f > 90 {
				msg = "must be a number between -90 and 90"
			} else {
				l.Latitude = f
			}
		case "longitude":
			if f, ok := number(e); !ok || f < -180 || f > 180 {
				msg = "must be a number between -180 and 180"
			} else {
				l.Longitude = f
			}
		case "address":
			l.Address, msg = text(e, MaxAddressLen)
		case "geofence":
			l.Geofence, msg = idText(e)
		case "road_type":
			l.RoadType, msg = text(e, MaxTextLen)
		case "accuracy", "speed_limit", "emergency_services_distance":
			f, ok := number(e)
			if !ok || f < 0 {
				msg = "must be a number ≥ 0"
				break
			}
			switch k {
			case "accuracy":
				l.Accuracy = &f
			case "speed_limit":
				l.SpeedLimit = &f
			default:
				l.EmergencyServicesDistance = &f
			}
		default:
			msg = jsonpath.UnknownRefusal
		}
		if msg != "" {
			errs.add(a.path("location."+key(k)), msg)
		}
	}
	return l, ""
}

// msgServerOwned answers a client-sent metadata.late: the pipeline sets
// it on events it delivers out of sequence order, so a client value would
// be a lie about the delivery.
const msgServerOwned = "is set by the hub (on events delivered after their place in sequence order), not by clients; leave it out"

// metadata checks the metadata object; processing_time is accepted and
// replaced by the hub's, late (server-owned) is refused.
func metadata(v any, a at, errs *fieldErrors) (event.Metadata, string) {
	var md event.Metadata
	m, ok := v.(map[string]any)
	if !ok {
		return md, "must be an object"
	}
	for k, e := range m {
		var msg string
		switch k {
		case "correlation_id":
			md.CorrelationID, msg = idText(e)
		case "sequence_number":
			md.SequenceNumber, msg = sequenceNumber(e)
		case "source_system":
			md.SourceSystem, msg = text(e, MaxTextLen)
		case "processing_time":
			_, msg = text(e, MaxTextLen)
		case "late":
			msg = msgServerOwned
		default:
			msg = jsonpath.UnknownRefusal + "; allowed: correlation_id, processing_time, sequence_number or source_system"
		}
		if msg != "" {
			errs.add(a.path("metadata."+key(k)), msg)
		}
	}
	return md, ""
}

// object checks a free-form object field.
func object(v any, field string, a at, errs *fieldErrors) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		errs.add(a.path(field), "must be an object")
		return nil
	}
	if _, sub, msg := freeForm(m, 1); msg != "" {
		errs.add(a.path(joinPath(field, sub)), msg)
	}
	return m
}

// MaxSequenceNumber is the largest metadata.sequence_number: 2^53-1, the
// largest integer every JSON reader (JavaScript among them) holds exactly.
const MaxSequenceNumber = 1<<53 - 1

// Answers of sequenceNumber.
const (
	msgSeqRange    = "must be an integer from 0 to 9007199254740991"
	msgSeqNegative = "must not be negative (an integer from 0 to 9007199254740991)"
	msgSeqTooLarge = "must be at most 9007199254740991 (2^53-1)"
	msgSeqPlain    = "must be written as a plain integer, without a fraction or exponent (1000, not 1e3 or 1000.0)"
)

// sequenceNumber checks metadata.sequence_number: an integer from 0 to
// MaxSequenceNumber (0 means unsequenced). From JSON (json.Number) it must
// be written as a plain integer: 1.0 and 1e3 are refused although their
// value is an integer, so that a number the client computed in floating
// point is never silently taken for a sequence position. Go callers may
// pass integral float64s and Go integers.
func sequenceNumber(v any) (int64, string) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		i, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err == nil && i < 0:
			return 0, msgSeqNegative
		case err == nil && i > MaxSequenceNumber:
			return 0, msgSeqTooLarge
		case err == nil:
			return i, ""
		case errors.Is(err, strconv.ErrRange):
			if s[0] == '-' {
				return 0, msgSeqNegative
			}
			return 0, msgSeqTooLarge
		}
		f, ferr := strconv.ParseFloat(s, 64)
		switch {
		case ferr != nil && !errors.Is(ferr, strconv.ErrRange), math.IsNaN(f):
			return 0, msgSeqRange
		case f < 0 && f == math.Trunc(f):
			return 0, msgSeqNegative
		case f != math.Trunc(f) || math.IsInf(f, 0):
			// 1.5, 1e-3, 1e999
			if math.IsInf(f, 1) {
				return 0, msgSeqTooLarge
			}
			return 0, msgSeqRange
		case f > MaxSequenceNumber:
			return 0, msgSeqTooLarge
		}
		return 0, msgSeqPlain
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x):
			return 0, msgSeqRange
		case x < 0:
			return 0, msgSeqNegative
		case x > MaxSequenceNumber:
			return 0, msgSeqTooLarge
		}
		return int64(x), ""
	case int:
		return seqInt(int64(x))
	case int64:
		return seqInt(x)
	case int32:
		return seqInt(int64(x))
	}
	return 0, msgSeqRange
}

func seqInt(i int64) (int64, string) {
	switch {
	case i < 0:
		return 0, msgSeqNegative
	case i > MaxSequenceNumber:
		return 0, msgSeqTooLarge
	}
	return i, ""
}
