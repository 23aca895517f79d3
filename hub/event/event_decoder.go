package event

// decodeEvent reads an event envelope without reflection: a reader of the
// feed decodes every event it hands out, and the reflected decoder cost
// more than the rest of a pull together. It takes only what Marshal
// writes for an event (the envelope keys o, e, k, ev and i, each once;
// the event's keys; free-form objects of maps, arrays, strings, booleans,
// nil and numbers; timestamps as the msgpack extension) and returns ok
// false for anything else, which Unmarshal then decodes by reflection.
// The result is what the reflected decoder gives for the same bytes.
//
// Strings are cut from one copy of the message, as decodeTelemetry does.
func decodeEvent(b []byte) (*Envelope, bool) {
	r := mpReader{b: b}
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	// the envelope and its event in one allocation
	both := new(struct {
		env Envelope
		ev  Event
	})
	e := &both.env
	var seen fieldSet
	for range n {
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		i := indexOf(envelopeKeys, k)
		if !seen.add(i) {
			return nil, false
		}
		switch i {
		case 0:
			e.Org, ok = r.str()
		case 1:
			e.Env, ok = r.str()
		case 2:
			e.Kind, ok = r.str()
		case 3:
			e.IngestedAt, ok = r.time()
		default:
			e.Event, ok = r.event(&both.ev)
		}
		if !ok {
			return nil, false
		}
	}
	if r.i != len(b) || e.Event == nil {
		return nil, false
	}
	return e, true
}

// The keys decodeEvent reads, per map, in the order of their cases.
var (
	envelopeKeys = []string{"o", "e", "k", "i", "ev"}
	eventKeys    = []string{"event_id", "event_type", "category", "timestamp", "severity", "priority", "source",
		"location", "metadata", "recommendations", "event_data", "risk_assessment", "automatic_actions",
		"emergency_response", "escalation", "predictive_indicators", "performance_metrics", "enrichment"}
	sourceKeys   = []string{"vehicle_id", "driver_id", "trip_id", "fleet_id"}
	locationKeys = []string{"latitude", "longitude", "address", "geofence", "road_type", "accuracy", "speed_limit",
		"emergency_services_distance"}
	metadataKeys = []string{"correlation_id", "sequence_number", "processing_time", "source_system", "late"}
)

// eventKey is the index of k in eventKeys, -1 for another key: a switch,
// which the compiler turns into a search by length and value, where a
// loop over the list would compare most of the event's keys with most of
// the list.
func eventKey(k []byte) int {
	switch string(k) {
	case "event_id":
		return 0
	case "event_type":
		return 1
	case "category":
		return 2
	case "timestamp":
		return 3
	case "severity":
		return 4
	case "priority":
		return 5
	case "source":
		return 6
	case "location":
		return 7
	case "metadata":
		return 8
	case "recommendations":
		return 9
	}
	if i := indexOf(eventKeys[10:], k); i >= 0 {
		return 10 + i
	}
	return -1
}

// indexOf is the index of k in keys, -1 for another key.
func indexOf(keys []string, k []byte) int {
	for i, name := range keys {
		if string(k) == name {
			return i
		}
	}
	return -1
}

func sourceKey(k []byte) int   { return indexOf(sourceKeys, k) }
func locationKey(k []byte) int { return indexOf(locationKeys, k) }
func metadataKey(k []byte) int { return indexOf(metadataKeys, k) }

// fieldSet remembers which keys of one map were read (by their index in
// the map's key list): a key given twice is left to the reflected
// decoder, which merges a repeated object into the first.
type fieldSet uint32

// add reports whether i is a key (not -1) not seen before.
func (s *fieldSet) add(i int) bool {
	if i < 0 || *s&(1<<i) != 0 {
		return false
	}
	*s |= 1 << i
	return true
}

// isNil consumes a msgpack nil if one is next.
func (r *mpReader) isNil() bool {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return true
	}
	return false
}

// fields reads a map of a struct: each key index knows at most once, any
// other key or a repeated one refused; read reads the value of the key of
// index i.
func (r *mpReader) fields(index func(k []byte) int, read func(i int) bool) bool {
	n, ok := r.mapLen()
	if !ok {
		return false
	}
	var seen fieldSet
	for range n {
		k, ok := r.key()
		if !ok {
			return false
		}
		i := index(k)
		if !seen.add(i) || !read(i) {
			return false
		}
	}
	return true
}

// event reads an event into ev; nil for a msgpack nil.
func (r *mpReader) event(ev *Event) (*Event, bool) {
	if r.isNil() {
		return nil, true
	}
	ok := r.fields(eventKey, func(i int) (ok bool) {
		switch i {
		case 0:
			ev.EventID, ok = r.str()
		case 1:
			ev.EventType, ok = r.str()
		case 2:
			ev.Category, ok = r.str()
		case 3:
			ev.Timestamp, ok = r.time()
		case 4:
			ev.Severity, ok = r.str()
		case 5:
			ev.Priority, ok = r.str()
		case 6:
			ok = r.source(&ev.Source)
		case 7:
			ev.Location, ok = r.location()
		case 8:
			ok = r.metadata(&ev.Metadata)
		case 9:
			ev.Recommendations, ok = r.value(0)
		default:
			*ev.object(i), ok = r.object()
		}
		return ok
	})
	return ev, ok
}

// object is the free-form object field of eventKeys[i], i from 10.
func (ev *Event) object(i int) *map[string]any {
	return [...]*map[string]any{&ev.EventData, &ev.RiskAssessment, &ev.AutomaticActions, &ev.EmergencyResponse,
		&ev.Escalation, &ev.PredictiveIndicators, &ev.PerformanceMetrics, &ev.Enrichment}[i-10]
}

// object reads a map[string]any field: nil or a map.
func (r *mpReader) object() (map[string]any, bool) {
	v, ok := r.value(0)
	if !ok {
		return nil, false
	}
	switch m := v.(type) {
	case nil:
		return nil, true
	case map[string]any:
		return m, true
	}
	return nil, false
}

func (r *mpReader) source(s *Source) bool {
	return r.fields(sourceKey, func(i int) (ok bool) {
		p := [...]*string{&s.VehicleID, &s.DriverID, &s.TripID, &s.FleetID}[i]
		*p, ok = r.str()
		return ok
	})
}

func (r *mpReader) location() (*Location, bool) {
	if r.isNil() {
		return nil, true
	}
	l := &Location{}
	ok := r.fields(locationKey, func(i int) (ok bool) {
		switch i {
		case 0:
			l.Latitude, ok = r.float()
		case 1:
			l.Longitude, ok = r.float()
		case 2:
			l.Address, ok = r.str()
		case 3:
			l.Geofence, ok = r.str()
		case 4:
			l.RoadType, ok = r.str()
		default:
			p := [...]**float64{&l.Accuracy, &l.SpeedLimit, &l.EmergencyServicesDistance}[i-5]
			*p, ok = r.floatPtr()
		}
		return ok
	})
	return l, ok
}

func (r *mpReader) floatPtr() (*float64, bool) {
	if r.isNil() {
		return nil, true
	}
	f, ok := r.float()
	if !ok {
		return nil, false
	}
	return &f, true
}

func (r *mpReader) metadata(m *Metadata) bool {
	return r.fields(metadataKey, func(i int) (ok bool) {
		switch i {
		case 0:
			m.CorrelationID, ok = r.str()
		case 1:
			m.SequenceNumber, ok = r.int()
		case 2:
			m.ProcessingTime, ok = r.str()
		case 3:
			m.SourceSystem, ok = r.str()
		default:
			m.Late, ok = r.bool()
		}
		return ok
	})
}

func (r *mpReader) bool() (bool, bool) {
	c, ok := r.code()
	switch {
	case !ok:
		return false, false
	case c == 0xc2:
		return false, true
	case c == 0xc3:
		return true, true
	}
	return false, false
}
