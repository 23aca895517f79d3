package telemetry

import (
	"bytes"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// bodyReader reads the JSON body of POST /v1/telemetry straight into bus
// messages: it validates each message as it scans it and writes its
// envelope with an event.TelemetryEncoder, without building the decoded
// JSON or the event.Telemetry first.
//
// It takes only bodies that are valid and plainly written, and declines
// (ok false) everything else: any validation error, more than MaxBatch
// or no messages, a repeated key, strings with escapes or invalid UTF-8,
// null, top-level keys other than messages, integers written with a sign,
// a fraction or an exponent. Declined bodies go through the general path
// (decode, then validateTelemetry), which gives the answer the API has
// always given, errors and all. So for any body it takes, the reader must
// publish exactly what the general path would publish; it checks the
// same rules in the same terms (number, integer, text, name,
// timestamp), and TestReaderMatchesGeneralPath and FuzzReadTelemetry
// hold it to that.
type bodyReader struct {
	b     []byte
	i     int
	s     *Service
	enc   *event.TelemetryEncoder
	org   string
	env   string
	now   time.Time // ingestion time
	limit time.Time // latest timestamp accepted

	names [][]byte // keys of the map being read, for repeats (room for 16 made once per request)
}

// read reads the whole body: the messages and what the rules need of
// them.
func (r *bodyReader) read() (msgs []hub.Message, rs []reading, ok bool) {
	if !r.open('{') {
		return nil, nil, false
	}
	if k, ok := r.key(); !ok || string(k) != "messages" || !r.open('[') {
		return nil, nil, false
	}
	n := min(MaxBatch, len(r.b)/64+1)
	msgs, rs = make([]hub.Message, 0, n), make([]reading, 0, n)
	for more := true; more; {
		if len(rs) == MaxBatch {
			return nil, nil, false
		}
		var m hub.Message
		var rd reading
		if m, rd, ok = r.message(); !ok {
			return nil, nil, false
		}
		msgs, rs = append(msgs, m), append(rs, rd)
		if more, ok = r.next(']'); !ok {
			return nil, nil, false
		}
	}
	if more, ok := r.next('}'); more || !ok {
		return nil, nil, false
	}
	r.ws()
	return msgs, rs, r.i == len(r.b)
}

// Fields of a telemetry message, as bits.
const (
	fTimestamp = 1 << iota
	fVehicleID
	fDataType
	fSequence
	fData
	fQuality
)

func (r *bodyReader) message() (m hub.Message, rd reading, ok bool) {
	if !r.open('{') {
		return m, rd, false
	}
	r.enc.Begin(r.org, r.env)
	var seen int
	var id []byte
	dataType, dataAt := "", -1
	for more := true; more; {
		k, ok := r.key()
		if !ok {
			return m, rd, false
		}
		var f int
		switch string(k) {
		case "timestamp":
			f = fTimestamp
			s, ok := r.str()
			if !ok {
				return m, rd, false
			}
			if rd.timestamp, ok = r.timestamp(s); !ok {
				return m, rd, false
			}
			r.enc.Timestamp(rd.timestamp)
		case "vehicle_id":
			f = fVehicleID
			if id, ok = r.str(); !ok || jsonpath.IsBlank(id) || !textOK(id, MaxIDLen) || jsonpath.HasControl(id) {
				return m, rd, false
			}
			rd.vehicleID = string(id)
			r.enc.VehicleID(id)
		case "data_type":
			f = fDataType
			s, ok := r.str()
			if !ok {
				return m, rd, false
			}
			for _, dt := range event.DataTypes {
				if string(s) == dt {
					dataType = dt
				}
			}
			if dataType == "" {
				return m, rd, false
			}
			rd.diag = dataType == EngineDiagnostics
			r.enc.DataType(dataType)
		case "sequence":
			f = fSequence
			if rd.sequence, ok = r.count(); !ok {
				return m, rd, false
			}
			r.enc.Sequence(rd.sequence)
		case "data":
			f = fData
			if dataType == "" {
				// read once the data type is known
				dataAt = r.i
				ok = r.skip(0)
			} else {
				ok = r.data(dataType, &rd)
			}
		case "quality_indicators":
			f = fQuality
			ok = r.quality()
		}
		if !ok || f == 0 || seen&f != 0 {
			return m, rd, false
		}
		seen |= f
		if more, ok = r.next('}'); !ok {
			return m, rd, false
		}
	}
	if seen&(fTimestamp|fVehicleID|fDataType|fData) != fTimestamp|fVehicleID|fDataType|fData {
		return m, rd, false
	}
	if dataAt >= 0 {
		end := r.i
		r.i = dataAt
		if !r.data(dataType, &rd) {
			return m, rd, false
		}
		r.i = end
	}
	value := r.enc.End(r.now)
	return hub.Message{Topic: r.s.cfg.TelemetryTopic, Key: r.enc.Append(id), Value: value, Time: r.now}, rd, true
}

// quality reads quality_indicators (validateQuality).
func (r *bodyReader) quality() bool {
	if !r.open('{') {
		return false
	}
	var signal, completeness float64
	var health []byte
	seen := 0
	if r.peek() == '}' {
		r.i++
	} else {
		for more := true; more; {
			k, ok := r.key()
			if !ok {
				return false
			}
			var f int
			switch string(k) {
			case "signal_strength":
				f = 1
				signal, ok = r.number()
				ok = ok && signal >= 0 && signal <= 100
			case "data_completeness":
				f = 2
				completeness, ok = r.number()
				ok = ok && completeness >= 0 && completeness <= 100
			case "sensor_health":
				f = 4
				health, ok = r.str()
				ok = ok && textOK(health, MaxTextLen)
			}
			if !ok || f == 0 || seen&f != 0 {
				return false
			}
			seen |= f
			if more, ok = r.next('}'); !ok {
				return false
			}
		}
	}
	var sp, cp *float64
	if seen&1 != 0 {
		sp = &signal
	}
	if seen&2 != 0 {
		cp = &completeness
	}
	r.enc.Quality(sp, cp, health)
	return true
}

// repeated reports whether k is among names.
func repeated(names [][]byte, k []byte) bool {
	for _, n := range names {
		if bytes.Equal(n, k) {
			return true
		}
	}
	return false
}

// textOK is text's length rule: at most max characters.
func textOK(s []byte, max int) bool { return len(s) <= max || utf8.RuneCount(s) <= max }
