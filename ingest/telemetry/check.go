package telemetry

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// Named limits of validation.
const (
	// MaxBatch is the most messages or events one request may carry.
	MaxBatch = 1000
	// MaxErrors is the most field errors one answer lists.
	MaxErrors = 100
	// MaxIDLen bounds vehicle, driver, trip and correlation ids.
	MaxIDLen = 200
	// MaxTextLen bounds short strings (statuses, road types, sources).
	MaxTextLen = 100
	// MaxAddressLen bounds location addresses.
	MaxAddressLen = 500
	// MaxNameLen bounds free-form group and field names.
	MaxNameLen = 64
	// MaxGroups and MaxFields bound free-form data.
	MaxGroups = 32
	MaxFields = 64
	// MaxCodes and MaxCodeLen bound pending_codes.
	MaxCodes   = 100
	MaxCodeLen = 32
	// MaxDepth bounds the nesting of free-form event objects.
	MaxDepth = 16
)

// Codes of validation errors (api maps them to 400).
const (
	CodeValidation = "validation_failed"
	CodeBatchSize  = "batch_too_large"
)

// ErrUnavailable is returned when the bus did not take a request: nothing
// of it was accepted and the caller should retry.
var ErrUnavailable = errors.New("telemetry: bus unavailable")

// ValidationError is bad input. Fields maps a field path
// (messages[3].data.engine.rpm) to what is wrong with it; More counts the
// errors left out past MaxErrors.
type ValidationError struct {
	Code   string
	Fields map[string]string
	More   int
}

func (e *ValidationError) Error() string {
	keys := sortedKeys(e.Fields)
	if len(keys) == 0 {
		return "telemetry: invalid input"
	}
	msg := "telemetry: invalid input: " + keys[0] + ": " + e.Fields[keys[0]]
	if n := len(keys) - 1 + e.More; n > 0 {
		msg += " (and " + strconv.Itoa(n) + " more)"
	}
	return msg
}

// fieldErrors collects the failures of one request.
type fieldErrors struct {
	fields map[string]string
	more   int
}

func (e *fieldErrors) add(path, msg string) {
	if _, dup := e.fields[path]; dup {
		return
	}
	if len(e.fields) >= MaxErrors {
		e.more++
		return
	}
	if e.fields == nil {
		e.fields = make(map[string]string)
	}
	e.fields[path] = msg
}

func (e *fieldErrors) count() int { return len(e.fields) + e.more }

func (e *fieldErrors) err(code string) error {
	if e.count() == 0 {
		return nil
	}
	return &ValidationError{Code: code, Fields: e.fields, More: e.more}
}

// at names one element of a request list; paths are built only when a
// field fails, so valid input costs no allocation for them.
type at struct {
	list string // messages or events
	i    int
}

func (a at) path(rest string) string {
	p := a.list + "[" + strconv.Itoa(a.i) + "]"
	if rest == "" {
		return p
	}
	return p + "." + rest
}

// key renders a map key in a field path, shortened so that a hostile key
// cannot make the error body huge.
func key(k string) string {
	if len(k) <= MaxNameLen {
		return k
	}
	cut := MaxNameLen
	for cut > 0 && !utf8.RuneStart(k[cut]) {
		cut--
	}
	return k[:cut] + "…"
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// number reads a JSON number (json.Number from a decoder with UseNumber,
// float64 from one without, or a Go integer from Go callers).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, finite(x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil && finite(f)
	case float32:
		return float64(x), finite(float64(x))
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	}
	return 0, false
}

// integer reads a JSON number that must be an integer ≥ 0 (exact for
// json.Number up to the int64 range).
func integer(v any) (int64, string) {
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			if i < 0 {
				return 0, "must not be negative"
			}
			return i, ""
		}
	}
	if i, ok := v.(int64); ok {
		if i < 0 {
			return 0, "must not be negative"
		}
		return i, ""
	}
	f, ok := number(v)
	switch {
	case !ok:
		return 0, "must be an integer"
	case f != math.Trunc(f) || f >= 1<<63:
		return 0, "must be an integer"
	case f < 0:
		return 0, "must not be negative"
	}
	return int64(f), ""
}

// text checks an optional string of at most max characters.
func text(v any, max int) (string, string) {
	s, ok := v.(string)
	if !ok {
		return "", "must be a string"
	}
	if len(s) > max && utf8.RuneCountInString(s) > max {
		return "", "must be at most " + strconv.Itoa(max) + " characters"
	}
	return s, ""
}

// id checks a required identifier.
func id(v any, present bool) (string, string) {
	if !present || v == nil {
		return "", "is required"
	}
	return idText(v)
}

// idText checks an identifier that is sent: a string of at most
// MaxIDLen characters, not empty nor only white space, without a
// control character (docs/api.md).
func idText(v any) (string, string) {
	s, msg := text(v, MaxIDLen)
	switch {
	case msg != "":
		return "", msg
	case jsonpath.IsBlank(s):
		return "", jsonpath.BlankRefusal
	case jsonpath.HasControl(s):
		return "", jsonpath.ControlRefusal
	}
	return s, ""
}

// timestamp checks a required ISO 8601 date-time (RFC 3339, with an
// offset), not after limit.
func timestamp(v any, present bool, limit time.Time, ahead time.Duration) (time.Time, string) {
	if !present || v == nil {
		return time.Time{}, "is required"
	}
	s, ok := v.(string)
	if !ok {
		return time.Time{}, "must be an ISO 8601 date-time string such as 2026-11-23T10:00:00Z"
	}
	return timestampText(s, limit, ahead)
}

// timestampText is timestamp for a value sent as a string.
func timestampText(s string, limit time.Time, ahead time.Duration) (time.Time, string) {
	t, err := apitime.Parse(s)
	if err != nil || t.Year() < 1970 {
		return time.Time{}, "must be an ISO 8601 date-time such as 2026-11-23T10:00:00Z"
	}
	if t.After(limit) {
		return time.Time{}, "must not be more than " + ahead.String() + " in the future"
	}
	return t.UTC(), ""
}

// oneOf checks a string enum.
func oneOf(v any, allowed []string) (string, string) {
	s, ok := v.(string)
	if ok {
		for _, a := range allowed {
			if s == a {
				return s, ""
			}
		}
	}
	return "", "must be one of " + list(allowed)
}

func list(ss []string) string {
	out := ""
	for i, s := range ss {
		switch {
		case i == 0:
		case i == len(ss)-1:
			out += " or "
		default:
			out += ", "
		}
		out += s
	}
	return out
}

// name reports whether s is a free-form group or field name.
func name[T string | []byte](s T) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// snake reports whether s is a snake_case identifier.
func snake(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// freeForm checks a free-form JSON value (event_data and the
// category-specific objects) and normalizes its numbers to float64 in
// place. It returns the normalized value and the path suffix and message
// of the first problem.
func freeForm(v any, depth int) (any, string, string) {
	if depth > MaxDepth {
		return nil, "", "nests deeper than " + strconv.Itoa(MaxDepth) + " levels"
	}
	switch x := v.(type) {
	case nil, string, bool, float64:
		if f, ok := x.(float64); ok && !finite(f) {
			return nil, "", "must be a finite number"
		}
		return v, "", ""
	case json.Number, float32, int, int64, int32:
		f, ok := number(x)
		if !ok {
			return nil, "", "must be a finite number"
		}
		return f, "", ""
	case map[string]any:
		for k, e := range x {
			if k == "" {
				return nil, `[""]`, jsonpath.EmptyKeyRefusal
			}
			n, sub, msg := freeForm(e, depth+1)
			if msg != "" {
				return nil, joinPath(key(k), sub), msg
			}
			x[k] = n
		}
		return x, "", ""
	case []any:
		for i, e := range x {
			n, sub, msg := freeForm(e, depth+1)
			if msg != "" {
				return nil, joinIndex(i, sub), msg
			}
			x[i] = n
		}
		return x, "", ""
	}
	return nil, "", "is not a JSON value"
}

func joinPath(k, sub string) string {
	if sub == "" {
		return k
	}
	if sub[0] == '[' {
		return k + sub
	}
	return k + "." + sub
}

func joinIndex(i int, sub string) string {
	p := "[" + strconv.Itoa(i) + "]"
	if sub == "" {
		return p
	}
	if sub[0] == '[' {
		return p + sub
	}
	return p + "." + sub
}
