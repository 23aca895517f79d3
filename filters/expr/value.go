package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
)

// kind is the JSON type of a value in a message.
type kind uint8

const (
	kMissing kind = iota // absent from the message's JSON form
	kNull
	kString
	kNumber
	kBool
	kTime  // a time.Time field; RFC3339 in JSON
	kOther // arrays, objects and anything else, in x
)

// value is a message value, returned by accessors without boxing so that
// matching does not allocate.
type value struct {
	k kind
	b bool
	s string
	n float64
	t time.Time
	x any
}

// fromAny converts a decoded value: JSON gives float64, msgpack gives the
// sized integers and time.Time.
func fromAny(v any) value {
	switch v := v.(type) {
	case nil:
		return value{k: kNull}
	case string:
		return value{k: kString, s: v}
	case bool:
		return value{k: kBool, b: v}
	case float64:
		return value{k: kNumber, n: v}
	case float32:
		return value{k: kNumber, n: float64(v)}
	case int:
		return value{k: kNumber, n: float64(v)}
	case int8:
		return value{k: kNumber, n: float64(v)}
	case int16:
		return value{k: kNumber, n: float64(v)}
	case int32:
		return value{k: kNumber, n: float64(v)}
	case int64:
		return value{k: kNumber, n: float64(v)}
	case uint:
		return value{k: kNumber, n: float64(v)}
	case uint8:
		return value{k: kNumber, n: float64(v)}
	case uint16:
		return value{k: kNumber, n: float64(v)}
	case uint32:
		return value{k: kNumber, n: float64(v)}
	case uint64:
		return value{k: kNumber, n: float64(v)}
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return value{k: kOther, x: v}
		}
		return value{k: kNumber, n: f}
	case time.Time:
		return value{k: kTime, t: v}
	default:
		return value{k: kOther, x: v}
	}
}

// constant is a condition's value, checked and converted by Compile.
type constant struct {
	k      kind // kNull, kString, kNumber or kBool
	s      string
	n      float64
	b      bool
	isTime bool // s is an RFC3339 time, t
	t      time.Time
}

// constOf converts a condition value; ok is false for anything but a
// finite scalar.
func constOf(v any) (constant, bool) {
	x := fromAny(v)
	switch x.k {
	case kNull:
		return constant{k: kNull}, true
	case kBool:
		return constant{k: kBool, b: x.b}, true
	case kNumber:
		if math.IsNaN(x.n) || math.IsInf(x.n, 0) {
			return constant{}, false
		}
		return constant{k: kNumber, n: x.n}, true
	case kString:
		c := constant{k: kString, s: x.s}
		if t, ok := parseTime(x.s); ok {
			c.isTime, c.t = true, t
		}
		return c, true
	}
	return constant{}, false
}

// parseTime parses an RFC3339 time (fractional seconds allowed). It does
// not allocate for UTC ("Z") times; other offsets cost one small Location.
func parseTime(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[10] != 'T' && s[10] != 't' {
		return time.Time{}, false // cheap rejection: failing Parse allocates its error
	}
	t, err := apitime.Parse(s)
	return t, err == nil
}

// equal reports whether v equals c. A null constant equals a missing or
// null value; nothing else equals a missing value.
func equal(v value, c *constant) bool {
	switch c.k {
	case kNull:
		return v.k == kMissing || v.k == kNull
	case kNumber:
		return v.k == kNumber && v.n == c.n
	case kBool:
		return v.k == kBool && v.b == c.b
	case kString:
		switch v.k {
		case kString:
			if v.s == c.s {
				return true
			}
			if c.isTime {
				t, ok := parseTime(v.s)
				return ok && t.Equal(c.t)
			}
		case kTime:
			return c.isTime && v.t.Equal(c.t)
		}
	}
	return false
}

// compare orders v against c: numbers with numbers, times (time fields or
// RFC3339 strings) with RFC3339 constants; ok is false otherwise.
func compare(v value, c *constant) (cmp int, ok bool) {
	switch {
	case c.k == kNumber && v.k == kNumber:
		switch {
		case v.n < c.n:
			return -1, true
		case v.n > c.n:
			return 1, true
		case v.n == c.n:
			return 0, true
		}
		return 0, false // NaN
	case c.isTime && v.k == kTime:
		return v.t.Compare(c.t), true
	case c.isTime && v.k == kString:
		t, ok := parseTime(v.s)
		if !ok {
			return 0, false
		}
		return t.Compare(c.t), true
	}
	return 0, false
}

// contains reports whether a string value contains c as a substring, an
// array holds an element equal to c, or an object has the key c.
func contains(v value, c *constant) bool {
	switch v.k {
	case kString:
		return c.k == kString && strings.Contains(v.s, c.s)
	case kOther:
		switch x := v.x.(type) {
		case []any:
			for _, e := range x {
				if equal(fromAny(e), c) {
					return true
				}
			}
		case map[string]any:
			if c.k == kString {
				_, ok := x[c.s]
				return ok
			}
		}
	}
	return false
}
