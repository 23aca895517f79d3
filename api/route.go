package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/valyala/fasthttp"
)

// AuthMode says how a route authenticates.
type AuthMode int

const (
	// AuthKey requires an API key; errors use the general form.
	AuthKey AuthMode = iota
	// AuthNone needs no key.
	AuthNone
	// AuthKeyPlain requires an API key; errors use the plain form
	// {success:false, error:"..."}.
	AuthKeyPlain
)

// Param documents a path or query parameter.
type Param struct {
	Name        string
	In          string // path or query
	Type        string // string, integer, number, boolean
	Required    bool
	Description string
	Enum        []string
	// Format refines a string Type: "date-time" is an ISO 8601 date-time
	// or a date alone (2024-05-01).
	Format string
	// Repeatable marks a query parameter the route takes more than once
	// (category=a&category=b, any of them). Any other given twice is
	// refused (UnknownQuery).
	Repeatable bool
	// MaxLength bounds a path parameter, in characters: a longer one is
	// refused with the path's other problems (decodePathParams).
	MaxLength int
}

// Route is one endpoint: what it does, who may call it and what it takes
// and returns. The OpenAPI document is built from the routes.
type Route struct {
	Method     string
	Path       string
	Tag        string
	Summary    string
	Permission string // "" when any valid key will do
	Auth       AuthMode
	// QueryKey lets the key come from the api_key query parameter or a
	// "fhk.<key>" Sec-WebSocket-Protocol entry too (websocket upgrades
	// from browsers).
	QueryKey bool
	// TokenScope is the scope a browser token needs to use this route in
	// place of a key (sent as Authorization: Bearer or ?token=); "" when
	// the route takes no token. Several scopes separated by spaces are
	// alternatives: a token holding any one of them opens the route.
	TokenScope string
	Params     []Param
	// Request and Response are zero values of the body types, for the
	// document; Status is the success status (default 200).
	Request  any
	Response any
	Status   int
	// Also lists the other statuses the route answers without an error:
	// 206 with part of the success content, 304 with none.
	Also []int
	// Errors lists the route's own error statuses (those of
	// authentication, parameters and the server are added to them).
	Errors []int
	// Raw marks a route whose success body is not JSON (tiles, metrics).
	Raw         string // content type when not JSON
	Handler     Handler
	NoRateLimit bool
	// OwnQuery marks a route whose handler checks its query parameters
	// itself (a set wider than Params: the websocket's feed parameters);
	// every other route refuses a parameter Params does not name
	// (UnknownQuery).
	OwnQuery bool
	// EndpointLimit is a per-key limit of this route on top of the key's
	// plan (the search endpoint: 1,000 per minute).
	EndpointLimit *ratelimit.Limit
	// MaxBodyBytes, when more than the server's (Config.MaxBodyBytes), is
	// the largest body this route accepts: a route whose own limits take
	// more (the optimizer's 1,000 destinations with their two matrices).
	// The path must have no parameters: the limit is chosen from the
	// request line, before the body is read.
	MaxBodyBytes int
	// NoHead marks a GET route that takes no HEAD (405, Allow naming GET): a
	// websocket upgrade or an event stream, which a HEAD cannot open.
	// Every other GET route answers HEAD as GET, without the body.
	NoHead bool

	metrics    *routeMetrics // set by Handle
	pathParams []string      // the names of Path's parameters, set by Handle
}

// Handler serves a route. Returning a non-nil error writes the error form.
type Handler func(c *Ctx) error

// Principal is who a request acts for (apikey.Principal).
type Principal = apikey.Principal

// Ctx is a request in flight. It must not be kept after the handler
// returns.
type Ctx struct {
	*fasthttp.RequestCtx
	Principal *Principal
	RequestID string
	Route     *Route
	srv       *Server
}

// Context returns a context for blocking calls made by the handler; it is
// cancelled when the server shuts down hard.
func (c *Ctx) Context() context.Context { return c.srv.baseCtx }

// Bind decodes the JSON body into v. The body must be sent with
// Content-Type application/json; an empty body decodes to nothing when
// optional is true.
func (c *Ctx) Bind(v any, optional bool) error {
	body := c.PostBody()
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return Errf("invalid_request", "request body is required")
	}
	if err := CheckJSON(c.Request.Header.ContentType()); err != nil {
		return err
	}
	return DecodeJSON(body, v)
}

// BindValues is Bind for a route that names its body's values' problems
// beside those of decoding: the optional fields of a fixed set sent as ""
// (jsonpath.EmptyEnum), when they are the body's only problem at
// decoding, are returned by path rather than refused, for the route to
// name with the refusals of its own checks in one answer (Refused). The
// route refuses the request whenever any is returned: decoded, such a
// field reads as left out.
func (c *Ctx) BindValues(v any, optional bool) (map[string]string, error) {
	if err := c.Bind(v, optional); err != nil {
		var e *Error
		if errors.As(err, &e) && e.emptyEnums {
			if d, ok := e.Details.(map[string]string); ok {
				return d, nil
			}
		}
		return nil, err
	}
	return nil, nil
}

// Refused is the refusal of a body whose optional fields of a fixed set
// were sent as "" (empty, from BindValues) beside the problems more of
// the route's own checks: one answer naming them all, invalid_request
// when every one is a value outside its set, else validation_failed
// (FieldsCode).
func Refused(empty, more map[string]string) error {
	return Validation("validation_failed", addFields(maps.Clone(empty), more))
}

// IsJSON reports whether a Content-Type names JSON in UTF-8, the only
// encoding a body is read in: application/json or an application/…+json
// type, without a charset or with charset utf-8 (CheckJSON).
func IsJSON(ct []byte) bool {
	ok, _ := jsonType(ct)
	return ok
}

// CheckJSON refuses a Content-Type that is not JSON in UTF-8: 415
// unsupported_media_type, naming the charset when the type is JSON but
// the charset another one (charset=latin1 would have the body read as
// UTF-8, its other bytes refused or, worse, taken as other characters).
func CheckJSON(ct []byte) error {
	ok, charset := jsonType(ct)
	switch {
	case ok:
		return nil
	case charset != nil:
		return Errf("unsupported_media_type", "Content-Type charset %q is not supported: bodies are JSON in UTF-8 (charset=utf-8, or none)", *charset).
			WithDetails(map[string]string{"Content-Type": "charset must be utf-8"})
	}
	return Errf("unsupported_media_type", "Content-Type must be application/json")
}

// jsonType reports whether ct is a JSON type in UTF-8; charset is the
// charset parameter that is not utf-8 (case aside, quoted or not) of a
// JSON type, nil when there is none.
func jsonType(ct []byte) (ok bool, charset *string) {
	typ, params, _ := bytes.Cut(ct, []byte{';'})
	typ = bytes.TrimSpace(typ)
	if !bytes.EqualFold(typ, []byte("application/json")) && !(bytes.HasPrefix(typ, []byte("application/")) && bytes.HasSuffix(typ, []byte("+json"))) {
		return false, nil
	}
	for len(params) > 0 {
		var p []byte
		p, params, _ = bytes.Cut(params, []byte{';'})
		name, value, _ := bytes.Cut(p, []byte{'='})
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("charset")) {
			continue
		}
		value = bytes.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if !bytes.EqualFold(value, []byte("utf-8")) {
			s := string(value)
			return false, &s
		}
	}
	return true, nil
}

// DecodeJSON decodes one JSON value from body into v, turning syntax and
// type errors into invalid_request with the offending field. When v is a
// struct or a map the body must be a JSON object: encoding/json would take
// null as "leave v alone", that is as {}. A field v does not declare is
// refused: validation_failed naming each such field by its path (one
// policy for every endpoint; a misspelled or unsupported field is never
// taken as honoured), and so is an identifier sent blank, an empty
// string or only white space (jsonpath.IsID names the identifiers), and
// a member whose name an earlier member of its object has, in free-form
// objects too (jsonpath.Repeated): a decoder would read only the last.
// An optional field of a fixed set of values sent as "" is refused as a
// value outside its set (jsonpath.EmptyEnum), never read as left out.
func DecodeJSON(body []byte, v any) error {
	if wantsObject(v) {
		if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return Errf("invalid_request", "request body must be a JSON object").
				WithDetails(map[string]string{"body": "must be an object"})
		}
	}
	t := reflect.TypeOf(v)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		e, typed := decodeError(err, body, t)
		if typed == nil {
			return e // the body is not JSON: nothing more can be told
		}
		// a value of the wrong type: the body is JSON, so its other
		// problems, the other values of a wrong type included, are
		// named with it, in one answer
		more := addFields(bodyRefusals(body, t), jsonpath.WrongTypes(body, t))
		for k := range typed {
			delete(more, k)
		}
		if len(more) == 0 {
			return e
		}
		return Validation("validation_failed", addFields(typed, more))
	}
	if TrailingData(body, dec.InputOffset()) {
		return Errf("invalid_request", "malformed JSON: trailing data after the body")
	}
	if bad := bodyRefusals(body, t); bad != nil {
		e := Validation("validation_failed", bad)
		// only values outside their sets: BindValues hands them to the route
		e.emptyEnums = enum.All(bad)
		return e
	}
	return nil
}

// bodyRefusals names the problems of body, one JSON value, beyond its
// values' types: the fields type t does not declare, the identifiers
// sent blank, the malformed times (jsonpath.Check) and the repeated
// members (jsonpath.Repeated); nil when there is none.
func bodyRefusals(body []byte, t reflect.Type) map[string]string {
	var bad map[string]string
	if t != nil {
		bad = jsonpath.Check(body, t)
	}
	return addFields(bad, jsonpath.Repeated(body))
}

// addFields adds the refusals of more to bad, as long as it names fewer
// than jsonpath.MaxNamed, and returns it (nil when both are empty).
func addFields(bad, more map[string]string) map[string]string {
	for k, m := range more {
		if bad == nil {
			bad = make(map[string]string, len(more))
		}
		if _, ok := bad[k]; !ok && len(bad) < jsonpath.MaxNamed {
			bad[k] = m
		}
	}
	return bad
}

// TrailingData reports whether body holds anything but JSON white space
// past offset, where a decoder that read one value from it stopped
// (Decoder.InputOffset): a body is one JSON value. Decoder.More does not
// tell, as it answers false before a stray ] or }.
func TrailingData(body []byte, offset int64) bool {
	if offset < 0 || offset > int64(len(body)) {
		return true
	}
	return len(bytes.TrimLeft(body[offset:], " \t\r\n")) > 0
}

// CheckIDs refuses the identifiers of body, decoded into a value of v's
// type, that are sent blank (an empty string or only white space), and
// its optional fields of a fixed set sent as "": each named by its path
// (jsonpath.Blank), validation_failed, or invalid_request when every one
// is such a field (FieldsCode). DecodeJSON
// does this itself; a route that decodes its body another way calls it.
func CheckIDs(body []byte, v any) error {
	if bad := jsonpath.Blank(body, reflect.TypeOf(v)); bad != nil {
		return Validation("validation_failed", bad)
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// wantsObject reports whether v decodes from a JSON object only: a struct
// or a map (behind any pointers) without its own UnmarshalJSON.
func wantsObject(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return false
		}
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return false
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// decodeError is the answer to err, the error of decoding body into a
// value of type target; typed holds its details when the body is one
// JSON value whose only fault so far is a value of the wrong type or a
// time that does not parse (nil when the body is not JSON).
func decodeError(err error, body []byte, target reflect.Type) (e *Error, typed map[string]string) {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case asErr(err, &te):
		field := te.Field
		if target != nil && field != "" {
			field = jsonpath.Field(target, field) // LocationIn.latitude is latitude
		}
		if field == "" {
			field = "body"
		} else if p, ok := jsonpath.Indexed(body, field, te.Value); ok {
			field = p
		}
		typed = map[string]string{field: "must be " + jsonpath.KindOf(te.Type)}
		return Errf("invalid_request", "field %s must be %s, got %s", field, jsonpath.KindOf(te.Type), te.Value).WithDetails(typed), typed
	case asErr(err, &se):
		return Errf("invalid_request", "malformed JSON at offset %d: %v", se.Offset, se), nil
	case target != nil:
		// a time that does not parse (time.Time's own decoding names no
		// field): found by walking the body against the target
		if bad := jsonpath.BadTimes(body, target); len(bad) > 0 {
			fields := make([]string, 0, len(bad))
			for f := range bad {
				fields = append(fields, f)
			}
			sort.Strings(fields)
			return Errf("invalid_request", "field %s must be an ISO 8601 date-time with a time zone (RFC 3339)", strings.Join(fields, ", ")).WithDetails(bad), bad
		}
		return Errf("invalid_request", "malformed JSON: %v", err), nil
	default:
		return Errf("invalid_request", "malformed JSON: %v", err), nil
	}
}

// JSON writes v with status.
func (c *Ctx) JSON(status int, v any) error {
	c.SetStatusCode(status)
	c.SetContentType("application/json")
	enc := json.NewEncoder(c.Response.BodyWriter())
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		c.Response.ResetBody()
		return Internal(err)
	}
	return nil
}

// Secure reports whether the client reached the service over TLS: this
// server's, or a proxy's that says so (X-Forwarded-Proto: https).
func (c *Ctx) Secure() bool {
	return c.IsTLS() || string(c.Request.Header.Peek("X-Forwarded-Proto")) == "https"
}

// AbsoluteURL is path as an absolute http or https address on the host
// the client reached, for an address the answer hands out (a tile
// archive, a share link).
func (c *Ctx) AbsoluteURL(path string) string {
	scheme := "http"
	if c.Secure() {
		scheme = "https"
	}
	return scheme + "://" + string(c.Host()) + path
}

// Scope returns the caller's organization and environment.
func (c *Ctx) Scope() (org, env string) { return c.Principal.Org, c.Principal.Env }

// PathParam returns a path parameter, percent-decoded once (the server
// decodes every parameter of the route before its handler runs).
func (c *Ctx) PathParam(name string) string {
	v, _ := c.UserValue(name).(string)
	return v
}

// pathParamNames are the names of the parameters of a route's path:
// "{name}", and the router's "{name?}", "{name:regexp}" and "{name:*}".
func pathParamNames(path string) []string {
	var names []string
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return names
		}
		name := path[i+1 : i+j]
		if k := strings.IndexByte(name, ':'); k >= 0 {
			name = name[:k]
		}
		names = append(names, strings.TrimSuffix(name, "?"))
		path = path[i+j+1:]
	}
}

// decodePathParams percent-decodes each path parameter of r once, in
// place: the router matches the raw path, so that an encoded "/" (%2F)
// stays inside its segment, and hands over the raw segments. A parameter
// whose escapes do not decode, or that decodes to bytes that are not
// UTF-8 text (invalid UTF-8, control characters), that is only white
// space (an id is never blank: docs/api.md) or that is longer than its
// Param's MaxLength, is 400 invalid_request naming the parameter.
func decodePathParams(rc *fasthttp.RequestCtx, r *Route) error {
	var bad map[string]string
	for _, name := range r.pathParams {
		raw, ok := rc.UserValue(name).(string)
		if !ok {
			continue
		}
		v := raw
		if strings.IndexByte(raw, '%') >= 0 {
			var err error
			if v, err = url.PathUnescape(raw); err != nil {
				if bad == nil {
					bad = map[string]string{}
				}
				bad[name] = "must be percent-encoded: % followed by two hexadecimal digits, %25 for a literal %"
				continue
			}
		}
		if !text(v) {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[name] = "must be UTF-8 text without control characters"
			continue
		}
		if jsonpath.IsBlank(v) {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[name] = jsonpath.BlankRefusal
			continue
		}
		if max := r.maxLength(name); max > 0 && utf8.RuneCountInString(v) > max {
			if bad == nil {
				bad = map[string]string{}
			}
			bad[name] = fmt.Sprintf("must be 1 to %d characters", max)
			continue
		}
		if v != raw {
			rc.SetUserValue(name, v)
		}
	}
	if bad != nil {
		names := make([]string, 0, len(bad))
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		return Errf("invalid_request", "path parameter %s: %s", strings.Join(names, ", "), bad[names[0]]).WithDetails(bad)
	}
	return nil
}

// maxLength is the MaxLength of r's path parameter name, 0 for none.
func (r *Route) maxLength(name string) int {
	for _, p := range r.Params {
		if p.In == "path" && p.Name == name {
			return p.MaxLength
		}
	}
	return 0
}

// text reports whether s is valid UTF-8 without control characters.
func text(s string) bool { return utf8.ValidString(s) && !jsonpath.HasControl(s) }
