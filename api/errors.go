package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/store"
)

// Error is an API error: the one type handlers return to choose a status
// and code. Anything else a handler returns becomes internal_error.
type Error struct {
	Status  int
	Code    string
	Message string
	Details any
	Cause   error
	// RetryAfter, when set, is sent as Retry-After (seconds).
	RetryAfter int
	// emptyEnums: Details names only optional fields of a fixed set sent
	// as "" (DecodeJSON), which Ctx.BindValues hands to the route.
	emptyEnums bool
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// codeStatus is the one mapping from error codes to HTTP statuses, so a
// code answers with the same status on every route (the table in
// docs/api.md lists it for clients).
var codeStatus = map[string]int{
	"validation_failed":               http.StatusBadRequest,
	"invalid_location":                http.StatusBadRequest,
	"batch_too_large":                 http.StatusBadRequest,
	"invalid_date_range":              http.StatusBadRequest,
	"invalid_request":                 http.StatusBadRequest,
	"invalid_api_key":                 http.StatusUnauthorized,
	"api_key_not_found":               http.StatusUnauthorized,
	"api_key_revoked":                 http.StatusUnauthorized,
	"invalid_token":                   http.StatusUnauthorized,
	"token_expired":                   http.StatusUnauthorized,
	"token_revoked":                   http.StatusUnauthorized,
	"token_not_found":                 http.StatusNotFound,
	"insufficient_permissions":        http.StatusForbidden,
	"trip_not_found":                  http.StatusNotFound,
	"incident_not_found":              http.StatusNotFound,
	"alert_not_found":                 http.StatusNotFound,
	"stream_not_found":                http.StatusNotFound,
	"optimization_not_found":          http.StatusNotFound,
	"key_not_found":                   http.StatusNotFound,
	"geofence_not_found":              http.StatusNotFound,
	"vehicle_not_found":               http.StatusNotFound,
	"not_found":                       http.StatusNotFound,
	"share_link_not_found":            http.StatusNotFound,
	"share_link_expired":              http.StatusGone,
	"cursor_expired":                  http.StatusGone,
	"method_not_allowed":              http.StatusMethodNotAllowed,
	"invalid_state_transition":        http.StatusConflict,
	"trip_already_active":             http.StatusConflict,
	"precondition_failed":             http.StatusPreconditionFailed,
	"payload_too_large":               http.StatusRequestEntityTooLarge,
	"unsupported_media_type":          http.StatusUnsupportedMediaType,
	"range_not_satisfiable":           http.StatusRequestedRangeNotSatisfiable,
	"request_header_fields_too_large": http.StatusRequestHeaderFieldsTooLarge,
	"rate_limit_exceeded":             http.StatusTooManyRequests,
	"internal_error":                  http.StatusInternalServerError,
	"not_implemented":                 http.StatusNotImplemented,
	"service_unavailable":             http.StatusServiceUnavailable,
}

// Errf returns an Error with the status of code.
func Errf(code, format string, args ...any) *Error {
	st, ok := codeStatus[code]
	if !ok {
		st = http.StatusInternalServerError
	}
	return &Error{Status: st, Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithDetails sets details and returns e.
func (e *Error) WithDetails(d any) *Error { e.Details = d; return e }

// DateRange returns invalid_date_range for a range whose start, the
// parameter fromName, is not before its end, toName: the details name both
// with their values in UTC.
func DateRange(fromName string, from time.Time, toName string, to time.Time) *Error {
	return Errf("invalid_date_range", "%s must be before %s", fromName, toName).
		WithDetails(map[string]string{fromName: from.UTC().Format(time.RFC3339Nano), toName: to.UTC().Format(time.RFC3339Nano)})
}

// DateRefusal is the details message of a date query parameter that is
// neither an ISO 8601 date-time with a time zone nor a date alone.
const DateRefusal = "must be an ISO 8601 date or date-time"

// ParseDate reads a date query parameter (the parameters of Format
// "date-time"): an RFC 3339 date-time, or a date alone for its midnight
// UTC. The time is in UTC.
func ParseDate(v string) (time.Time, error) {
	if t, err := apitime.Parse(v); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a date or date-time: %w", err)
	}
	return t.UTC(), nil
}

// DateQuery reads the optional date query parameter name (ParseDate).
// A value that does not parse is added to bad, named, with DateRefusal;
// ok is false then and when the parameter is absent.
func DateQuery(c *Ctx, name string, bad map[string]string) (t time.Time, ok bool) {
	v := string(c.QueryArgs().Peek(name))
	if v == "" {
		return time.Time{}, false
	}
	t, err := ParseDate(v)
	if err != nil {
		bad[name] = DateRefusal
		return time.Time{}, false
	}
	return t, true
}

// DateQueryEnd reads the optional date query parameter name that ends a
// range (the trip list's end_date, the incident listing's date_to) as
// DateQuery does, except that a date alone stands for the whole of that
// day: its last millisecond, 23:59:59.999 UTC. The ranges take both ends
// in, so end_date=2026-01-01 lists what started on the 1st too.
func DateQueryEnd(c *Ctx, name string, bad map[string]string) (t time.Time, ok bool) {
	t, ok = DateQuery(c, name, bad)
	if ok && len(c.QueryArgs().Peek(name)) == len("2006-01-02") {
		t = t.AddDate(0, 0, 1).Add(-time.Millisecond)
	}
	return t, ok
}

// Validation returns validation_failed (or another 400 code) with a map of
// field path to message. validation_failed whose every problem is a value
// outside the field's fixed set of values (enum.Refusal) is
// invalid_request, as a value of the wrong type is (FieldsCode).
func Validation(code string, fields map[string]string) *Error {
	code = FieldsCode(code, fields, 0)
	msg := "request validation failed"
	if len(fields) == 1 {
		for k, v := range fields {
			msg = k + ": " + v
		}
	}
	return Errf(code, "%s", msg).WithDetails(fields)
}

// CursorRefusal is the details message of a cursor a listing did not make
// (or made for other parameters): every keyset listing refuses it alike.
const CursorRefusal = "is not a cursor of this listing"

// BadCursor refuses the cursor query parameter of a listing: 400
// invalid_request with details.cursor saying what is wrong with it.
func BadCursor() *Error {
	return Validation("invalid_request", map[string]string{"cursor": CursorRefusal})
}

// FieldsCode is the code of a refusal of fields with code: validation_failed
// becomes invalid_request when every problem of the request is an unknown
// enum value (more counts the problems left out of fields, which may be of
// another kind). A request with an unknown enum value and another problem
// stays validation_failed, listing them all.
func FieldsCode(code string, fields map[string]string, more int) string {
	if code == "validation_failed" && more == 0 && enum.All(fields) {
		return "invalid_request"
	}
	return code
}

// unavailableRetryAfter is the Retry-After of an answer made while an
// outside part is down: a breaker probes every 250 ms, so a second is
// enough to find it back when the outage was short.
const unavailableRetryAfter = 1

// Unavailable reports whether err means an outside part (the store, the
// bus) did not answer or its breaker is open, and returns the
// service_unavailable error to answer with.
func Unavailable(err error) (*Error, bool) {
	if !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, breaker.ErrOpen) {
		return nil, false
	}
	return &Error{Status: http.StatusServiceUnavailable, Code: "service_unavailable",
		Message: "a backing service is unavailable; nothing was changed, retry later", Cause: err, RetryAfter: unavailableRetryAfter}, true
}

// Internal wraps an unexpected error. An outside part that did not answer
// is service_unavailable instead (Unavailable).
func Internal(err error) *Error {
	if e, ok := Unavailable(err); ok {
		return e
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal_error", Message: "internal server error", Cause: err}
}

// NotImplemented answers an endpoint that is routed but not built.
func NotImplemented(what string) *Error {
	return Errf("not_implemented", "%s is not implemented in this release", what)
}

// Errors of authentication, allocated once.
var (
	errKeyNotFound = &Error{Status: 401, Code: "api_key_not_found", Message: "API key not found"}
	errKeyRevoked  = &Error{Status: 401, Code: "api_key_revoked", Message: "this API key has been revoked"}
)

// AsError converts any error to *Error.
func AsError(err error) *Error {
	switch {
	case errors.Is(err, apikey.ErrNotFound):
		return errKeyNotFound
	case errors.Is(err, apikey.ErrRevoked):
		return errKeyRevoked
	}
	var e *Error
	if errors.As(err, &e) && (e.Status != http.StatusInternalServerError || e.Cause == nil) {
		return e
	}
	if u, ok := Unavailable(err); ok {
		return u
	}
	if e != nil {
		return e
	}
	return Internal(err)
}

// ErrorBody is the general error form.
type ErrorBody struct {
	Error     ErrorObject `json:"error"`
	RequestID string      `json:"request_id"`
}

// ErrorObject is the inner error object.
type ErrorObject struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details" schema:"oneOf:string,object" doc:"what the error concerns: for a refused request a map of field path (or query parameter) to its problem; an empty object when the error has nothing to add"`
}

// PlainError is the plain error form of history, geocoding and tiles.
type PlainError struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
}
