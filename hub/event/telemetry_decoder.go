package event

import (
	"encoding/binary"
	"math"
	"time"
)

// decodeTelemetry reads a telemetry envelope without reflection: the
// pipeline decodes every message on the bus, and for telemetry the
// reflected decoder cost as much as the intake's whole encoding. It
// takes only what TelemetryEncoder and Marshal write for telemetry (the
// envelope keys o, e, k, t and i; the telemetry keys; data values that
// are maps, arrays, strings, booleans, nil and numbers; timestamps as
// the msgpack extension) and returns ok false for anything else, which
// Unmarshal then decodes by reflection. The result is what the
// reflected decoder gives for the same bytes.
//
// Strings (keys and values) are cut from one copy of the message, one
// allocation instead of one per string; a string kept after the
// envelope keeps that copy alive.
func decodeTelemetry(b []byte) (*Envelope, bool) {
	r := mpReader{b: b}
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	e := &Envelope{}
	// the tenant and kind are cut only once the envelope is known to be
	// telemetry: an event envelope costs no copy before it is left to
	// the reflected decoder
	var org, env, kind [2]int
	for range n {
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		switch {
		case string(k) == "o":
			org[0], org[1], ok = r.strRange()
		case string(k) == "e":
			env[0], env[1], ok = r.strRange()
		case string(k) == "k":
			kind[0], kind[1], ok = r.strRange()
		case string(k) == "i":
			e.IngestedAt, ok = r.time()
		case string(k) == "t":
			e.Telemetry, ok = r.telemetry()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	if r.i != len(b) || e.Telemetry == nil {
		return nil, false
	}
	e.Org, e.Env, e.Kind = r.cut(org[0], org[1]), r.cut(env[0], env[1]), r.cut(kind[0], kind[1])
	return e, true
}

// mpReader reads msgpack from b; s is the same bytes as a string, made
// at the first string cut.
type mpReader struct {
	b []byte
	s string
	i int
}

func (r *mpReader) cut(i, j int) string {
	if i == j {
		return ""
	}
	if r.s == "" {
		r.s = string(r.b)
	}
	return r.s[i:j]
}

// key reads a map key of a struct, to compare (string(k) == "…" does
// not copy).
func (r *mpReader) key() ([]byte, bool) {
	i, j, ok := r.strRange()
	if !ok {
		return nil, false
	}
	return r.b[i:j], true
}

func (r *mpReader) code() (byte, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	c := r.b[r.i]
	r.i++
	return c, true
}

// n reads a big-endian unsigned integer of size bytes.
func (r *mpReader) n(size int) (uint64, bool) {
	if len(r.b)-r.i < size {
		return 0, false
	}
	var v uint64
	for _, c := range r.b[r.i : r.i+size] {
		v = v<<8 | uint64(c)
	}
	r.i += size
	return v, true
}

func (r *mpReader) mapLen() (int, bool) {
	c, ok := r.code()
	switch {
	case !ok:
		return 0, false
	case c&0xf0 == fixMap:
		return int(c & 0x0f), true
	case c == map16:
		n, ok := r.n(2)
		return int(n), ok
	case c == 0xdf:
		n, ok := r.n(4)
		return int(n), ok
	}
	return 0, false
}

func (r *mpReader) strLen(c byte) (int, bool) {
	switch {
	case c&0xe0 == fixStr:
		return int(c & 0x1f), true
	case c == str8:
		n, ok := r.n(1)
		return int(n), ok
	case c == str16:
		n, ok := r.n(2)
		return int(n), ok
	case c == str32:
		n, ok := r.n(4)
		return int(n), ok
	}
	return 0, false
}

func (r *mpReader) str() (string, bool) {
	i, j, ok := r.strRange()
	if !ok {
		return "", false
	}
	return r.cut(i, j), true
}

func (r *mpReader) strRange() (int, int, bool) {
	c, ok := r.code()
	if !ok {
		return 0, 0, false
	}
	return r.strBody(c)
}

func (r *mpReader) strBody(c byte) (int, int, bool) {
	n, ok := r.strLen(c)
	if !ok || len(r.b)-r.i < n {
		return 0, 0, false
	}
	r.i += n
	return r.i - n, r.i, true
}

func (r *mpReader) strValue(c byte) (any, bool) {
	i, j, ok := r.strBody(c)
	if !ok {
		return nil, false
	}
	return r.cut(i, j), true
}

// time reads the timestamp extension as the msgpack library does: the
// zero time in UTC, any other in the local zone.
func (r *mpReader) time() (time.Time, bool) {
	c, ok := r.code()
	if !ok {
		return time.Time{}, false
	}
	size := 0
	switch c {
	case fixExt4:
		size = 4
	case fixExt8:
		size = 8
	case ext8:
		n, ok := r.n(1)
		if !ok || n != 12 {
			return time.Time{}, false
		}
		size = 12
	default:
		return time.Time{}, false
	}
	if typ, ok := r.code(); !ok || typ != timeExt || len(r.b)-r.i < size {
		return time.Time{}, false
	}
	p := r.b[r.i : r.i+size]
	r.i += size
	var t time.Time
	switch size {
	case 4:
		t = time.Unix(int64(binary.BigEndian.Uint32(p)), 0)
	case 8:
		v := binary.BigEndian.Uint64(p)
		t = time.Unix(int64(v&0x00000003ffffffff), int64(v>>34))
	default:
		t = time.Unix(int64(binary.BigEndian.Uint64(p[4:])), int64(binary.BigEndian.Uint32(p)))
	}
	if t.IsZero() {
		t = t.UTC()
	}
	return t, true
}

func (r *mpReader) float() (float64, bool) {
	if c, ok := r.code(); !ok || c != float64c {
		return 0, false
	}
	v, ok := r.n(8)
	return math.Float64frombits(v), ok
}

// int reads an integer into an int64 as the reflected decoder does.
func (r *mpReader) int() (int64, bool) {
	c, ok := r.code()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	}
	switch c {
	case 0xcc, 0xcd, 0xce, 0xcf:
		v, ok := r.n(1 << (c - 0xcc))
		return int64(v), ok
	case 0xd0:
		v, ok := r.n(1)
		return int64(int8(v)), ok
	case 0xd1:
		v, ok := r.n(2)
		return int64(int16(v)), ok
	case 0xd2:
		v, ok := r.n(4)
		return int64(int32(v)), ok
	case int64c:
		v, ok := r.n(8)
		return int64(v), ok
	}
	return 0, false
}

func (r *mpReader) telemetry() (*Telemetry, bool) {
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	t := &Telemetry{}
	for range n {
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		switch {
		case string(k) == "timestamp":
			t.Timestamp, ok = r.time()
		case string(k) == "vehicle_id":
			t.VehicleID, ok = r.str()
		case string(k) == "data_type":
			t.DataType, ok = r.str()
		case string(k) == "sequence":
			t.Sequence, ok = r.int()
		case string(k) == "data":
			var v any
			if v, ok = r.value(0); ok {
				// the reflected decoder takes nil or a map here
				switch m := v.(type) {
				case nil:
					t.Data = nil
				case map[string]any:
					t.Data = m
				default:
					ok = false
				}
			}
		case string(k) == "quality_indicators":
			t.QualityIndicators, ok = r.quality()
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
	}
	return t, true
}

func (r *mpReader) quality() (*QualityIndicators, bool) {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return nil, true
	}
	n, ok := r.mapLen()
	if !ok {
		return nil, false
	}
	q := &QualityIndicators{}
	for range n {
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		switch signal := string(k) == "signal_strength"; {
		case signal || string(k) == "data_completeness":
			f, ok := r.float()
			if !ok {
				return nil, false
			}
			if signal {
				q.SignalStrength = &f
			} else {
				q.DataCompleteness = &f
			}
		case string(k) == "sensor_health":
			if q.SensorHealth, ok = r.str(); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return q, true
}

// maxDepth bounds the nesting value reads before it leaves a message to
// the reflected decoder.
const maxDepth = 32

// value reads any value as the reflected decoder reads into an interface:
// maps as map[string]any, arrays as []any, integers as the sized Go type
// of their msgpack code.
func (r *mpReader) value(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	c, ok := r.code()
	if !ok {
		return nil, false
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return int8(c), true
	case c&0xe0 == fixStr:
		return r.strValue(c)
	case c&0xf0 == fixMap:
		return r.mapBody(int(c&0x0f), depth)
	case c&0xf0 == fixArray:
		return r.arrayBody(int(c&0x0f), depth)
	}
	switch c {
	case 0xc0:
		return nil, true
	case 0xc2:
		return false, true
	case 0xc3:
		return true, true
	case float64c:
		v, ok := r.n(8)
		return math.Float64frombits(v), ok
	case 0xca:
		v, ok := r.n(4)
		return math.Float32frombits(uint32(v)), ok
	case str8, str16, str32:
		return r.strValue(c)
	case 0xcc:
		v, ok := r.n(1)
		return uint8(v), ok
	case 0xcd:
		v, ok := r.n(2)
		return uint16(v), ok
	case 0xce:
		v, ok := r.n(4)
		return uint32(v), ok
	case 0xcf:
		v, ok := r.n(8)
		return v, ok
	case 0xd0:
		v, ok := r.n(1)
		return int8(v), ok
	case 0xd1:
		v, ok := r.n(2)
		return int16(v), ok
	case 0xd2:
		v, ok := r.n(4)
		return int32(v), ok
	case int64c:
		v, ok := r.n(8)
		return int64(v), ok
	case array16, 0xdd:
		n, ok := r.n(2 << (c - array16))
		if !ok {
			return nil, false
		}
		return r.arrayBody(int(n), depth)
	case map16, 0xdf:
		n, ok := r.n(2 << (c - map16))
		if !ok {
			return nil, false
		}
		return r.mapBody(int(n), depth)
	}
	return nil, false
}

func (r *mpReader) mapBody(n, depth int) (any, bool) {
	if n > len(r.b)-r.i {
		return nil, false
	}
	m := make(map[string]any, n)
	for range n {
		k, ok := r.str()
		if !ok {
			return nil, false
		}
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		m[k] = v
	}
	return m, true
}

func (r *mpReader) arrayBody(n, depth int) (any, bool) {
	if n > len(r.b)-r.i {
		return nil, false
	}
	a := make([]any, n)
	for i := range a {
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		a[i] = v
	}
	return a, true
}
