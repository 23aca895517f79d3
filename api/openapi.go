package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

// Schema is a JSON Schema (OpenAPI 3.1 dialect) as a plain map.
type Schema = map[string]any

// SourceKey is the schema extension that says where a response field's
// value comes from, read from the field's source:"..." tag; a field
// without it is an identifier, a timestamp, a state, a label or a value
// as a request or a device gave it (docs/api.md).
const SourceKey = "x-fleethub-source"

// The values of SourceKey.
const (
	// SourceComputed: derived by the service from the data it was given
	// (analytics, scores, estimates, assessments); it follows its inputs.
	SourceComputed = "computed"
	// SourceMeasured: a reading of the service's own running state at
	// answer time (latencies, connections, counters); it may rest at one
	// value while nothing happens.
	SourceMeasured = "measured"
	// SourceConstant: fixed by the service's design and documented (a
	// scale's maximum, a weight); never a measurement.
	SourceConstant = "constant"
	// SourceUnknown: the service cannot know it: always null or
	// "unknown", and the description says why.
	SourceUnknown = "unknown"
)

// IsSource reports whether v is one of the values of SourceKey.
func IsSource(v string) bool {
	switch v {
	case SourceComputed, SourceMeasured, SourceConstant, SourceUnknown:
		return true
	}
	return false
}

// OpenAPI builds the OpenAPI 3.1 document of every registered route. Body
// schemas are reflected from the Go types handlers encode, so the document
// and the responses cannot drift apart: struct fields follow their json
// tags; tags required:"true", enum:"a,b", doc:"..." and source:"..."
// (SourceKey) refine them. A pointer field is nullable: its schema, and
// its enum, admit null.
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{defs: map[string]Schema{}, names: map[reflect.Type]string{}}
	paths := map[string]map[string]any{}
	errRef := g.ref(reflect.TypeOf(ErrorBody{}))
	plainRef := g.ref(reflect.TypeOf(PlainError{}))
	for _, r := range s.routes {
		op := map[string]any{
			"summary":     r.Summary,
			"operationId": opID(r),
			"tags":        []string{r.Tag},
		}
		if params := opParams(r); len(params) > 0 {
			op["parameters"] = params
		}
		if r.Request != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": g.ref(reflect.TypeOf(r.Request))}}}
		}
		eref := errRef
		if r.Auth == AuthKeyPlain {
			eref = plainRef
		}
		op["responses"] = opResponses(g, r, eref)
		op["security"] = opSecurity(r)
		if r.Auth != AuthNone && r.Permission != "" {
			op["x-permission"] = r.Permission
		}
		p := paths[r.Path]
		if p == nil {
			p = map[string]any{}
			paths[r.Path] = p
		}
		p[strings.ToLower(r.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Fleethub API", "version": s.cfg.Version,
			"description": "Fleet telematics hub: trips and location ingest, analytics, emergency, devices, streaming, routing, optimization, geocoding and tiles."},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas": g.defs,
			"headers": responseHeaders,
			"securitySchemes": map[string]any{
				"ApiKeyHeader": map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key"},
				"BearerAuth":   map[string]any{"type": "http", "scheme": "bearer"},
				"ApiKeyQuery":  map[string]any{"type": "apiKey", "in": "query", "name": "api_key"},
			},
		},
	}
}

// plainNumberNote is what a query parameter's description adds about the
// writing of its number (DecimalInt, Decimal), unless it says it already.
func plainNumberNote(p Param) string {
	if p.In != "query" || strings.Contains(p.Description, "decimal") {
		return ""
	}
	note := ""
	switch p.Type {
	case "integer":
		note = "plain decimal digits: no sign, leading zero, fraction or exponent"
	case "number":
		note = "a plain decimal number (-40.5): no plus sign, exponent or hexadecimal"
	default:
		return ""
	}
	if p.Description == "" {
		return note
	}
	return "; " + note
}

// opParams are the parameters of r's operation.
func opParams(r *Route) []any {
	var params []any
	for _, p := range r.Params {
		ps := Schema{"type": p.Type}
		if len(p.Enum) > 0 {
			ps["enum"] = p.Enum
		}
		if p.MaxLength > 0 {
			ps["minLength"], ps["maxLength"] = 1, p.MaxLength
		}
		if p.Format == "date-time" {
			ps["anyOf"] = []Schema{{"format": "date-time"}, {"format": "date"}}
		}
		if p.Repeatable {
			ps = Schema{"type": "array", "items": ps}
		}
		pp := map[string]any{"name": p.Name, "in": p.In, "required": p.Required || p.In == "path", "schema": ps}
		if p.Repeatable {
			pp["style"], pp["explode"] = "form", true
		}
		if d := p.Description + plainNumberNote(p); d != "" {
			pp["description"] = d
		}
		params = append(params, pp)
	}
	return params
}

// responseHeaders are the headers the responses name (components.headers).
var responseHeaders = map[string]any{
	"X-Request-Id": map[string]any{"description": "the request's id, also the error body's request_id; on every response", "required": true,
		"schema": Schema{"type": "string"}},
	"X-RateLimit-Limit": map[string]any{"description": "the key's rate, requests per minute; on every response of a request charged to a key",
		"schema": Schema{"type": "integer"}},
	"X-RateLimit-Remaining": map[string]any{"description": "whole requests the key has left now (its burst when the bucket is full)",
		"schema": Schema{"type": "integer"}},
	"X-RateLimit-Reset": map[string]any{"description": "epoch seconds when the key's bucket is full again",
		"schema": Schema{"type": "integer"}},
	"X-RateLimit-Window": map[string]any{"description": "the window of X-RateLimit-Limit in seconds: 60",
		"schema": Schema{"type": "integer"}},
	"Retry-After": map[string]any{"description": "seconds to wait before trying again",
		"schema": Schema{"type": "integer"}},
}

// opHeaders are the headers of r's responses with status code: the
// request id on every one; the rate-limit headers on those of a request
// charged to the key (every answer of an authenticated route but a 401,
// whose key did not verify; a 413 has them when the handler refused the
// body, not when the server did before reading the key); Retry-After on
// a 429 and on an authenticated route's 503.
func opHeaders(r *Route, code int) map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/headers/" + name} }
	h := map[string]any{"X-Request-Id": ref("X-Request-Id")}
	if r.Auth != AuthNone && code != 401 {
		for _, n := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Window"} {
			h[n] = ref(n)
		}
	}
	if code == 429 || code == 503 && r.Auth != AuthNone { // a part down under a request; /readyz's 503 is a state
		h["Retry-After"] = ref("Retry-After")
	}
	return h
}

// opResponses are the responses of r's operation: its success, and each
// error it can answer with, as eref, each with its headers.
func opResponses(g *schemaGen, r *Route, eref Schema) map[string]any {
	resp := map[string]any{}
	put := func(code int, v map[string]any) {
		v["headers"] = opHeaders(r, code)
		resp[fmt.Sprint(code)] = v
	}
	success := map[string]any{"description": "success"}
	switch {
	case r.Raw != "":
		success["content"] = map[string]any{r.Raw: map[string]any{"schema": Schema{"type": "string"}}}
	case r.Response != nil:
		success["content"] = map[string]any{"application/json": map[string]any{"schema": g.ref(reflect.TypeOf(r.Response))}}
	}
	put(r.Status, success)
	for _, c := range r.Also {
		also := map[string]any{"description": httpText(c)}
		if content, ok := success["content"]; ok && c != 304 {
			also["content"] = content
		}
		put(c, also)
	}
	errContent := map[string]any{"application/json": map[string]any{"schema": eref}}
	for _, c := range errorCodes(r) {
		put(c, map[string]any{"description": httpText(c), "content": errContent})
	}
	return resp
}

// errorCodes are the error statuses r can answer with: its own, then
// those of authentication, the request body, path parameters, query
// parameters (those it takes, and any other unless it is OwnQuery) and
// the server.
func errorCodes(r *Route) []int {
	codes := append([]int{}, r.Errors...)
	if r.Auth != AuthNone {
		// 503: a shared part the key's check or its limit needs is down
		// (its breaker open), or the server is shutting down
		codes = append(codes, 401, 429, 503)
		if r.Permission != "" {
			codes = append(codes, 403)
		}
	}
	if r.Request != nil {
		codes = append(codes, 400, 413, 415)
	}
	if strings.Contains(r.Path, "{") {
		codes = append(codes, 404, 400) // 400: a path parameter that does not decode
	}
	for _, p := range r.Params {
		if p.In == "query" {
			codes = append(codes, 400)
			break
		}
	}
	if !r.OwnQuery { // UnknownQuery refuses a query parameter the route does not take
		codes = append(codes, 400)
	}
	return append(codes, 500)
}

// opSecurity is the security requirement of r's operation: none without
// authentication.
func opSecurity(r *Route) []any {
	if r.Auth == AuthNone {
		return []any{}
	}
	sec := []any{map[string]any{"ApiKeyHeader": []string{}}, map[string]any{"BearerAuth": []string{}}}
	if r.QueryKey {
		sec = append(sec, map[string]any{"ApiKeyQuery": []string{}})
	}
	return sec
}

func opID(r *Route) string {
	p := strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_", "-", "_").Replace(strings.Trim(r.Path, "/"))
	return strings.ToLower(r.Method) + "_" + p
}

func httpText(c int) string {
	switch c {
	case 400:
		return "invalid request"
	case 401:
		return "missing, malformed, unknown or revoked API key"
	case 403:
		return "permission missing"
	case 206:
		return "partial content: the byte range asked for, with Content-Range"
	case 304:
		return "not modified"
	case 404:
		return "not found"
	case 409:
		return "conflict with the current state"
	case 413:
		return "body too large"
	case 412:
		return "precondition failed"
	case 415:
		return "Content-Type is not application/json (or a +json type), or names a charset other than utf-8"
	case 416:
		return "range not satisfiable, with Content-Range bytes */size"
	case 429:
		return "rate limit exceeded"
	case 501:
		return "not implemented: the server was started without what this endpoint needs (such as its data files); answered to a valid request, one that cannot be read answers 400 first"
	case 503:
		return "unavailable"
	default:
		return "server error"
	}
}

type schemaGen struct {
	defs  map[string]Schema
	names map[reflect.Type]string
}

var timeType = reflect.TypeOf(time.Time{})
var rawType = reflect.TypeOf(json.RawMessage{})

func (g *schemaGen) ref(t reflect.Type) Schema {
	if t.Kind() == reflect.Pointer {
		return g.schema(t)
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return g.schema(t)
	}
	name, ok := g.names[t]
	if !ok {
		name = t.Name()
		if pkg := t.PkgPath(); pkg != "" {
			name = pkg[strings.LastIndex(pkg, "/")+1:] + "." + name
		}
		for _, taken := range g.names {
			if taken == name {
				name += fmt.Sprint(len(g.names))
			}
		}
		g.names[t] = name
		g.defs[name] = Schema{} // reserved first: a recursive type refers to its own name
		g.defs[name] = g.schema(t)
	}
	return Schema{"$ref": "#/components/schemas/" + name}
}

func (g *schemaGen) schema(t reflect.Type) Schema {
	if t == rawType {
		return Schema{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner := g.ref(t.Elem())
		return Schema{"oneOf": []any{inner, Schema{"type": "null"}}}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Slice, reflect.Array:
		return Schema{"type": []any{"array", "null"}, "items": g.ref(t.Elem())}
	case reflect.Map:
		return Schema{"type": "object", "additionalProperties": g.ref(t.Elem())}
	case reflect.Interface:
		return Schema{}
	case reflect.Struct:
		if t == timeType {
			return Schema{"type": "string", "format": "date-time"}
		}
		props := Schema{}
		var required []string
		g.fields(t, props, &required)
		s := Schema{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			sort.Strings(required)
			s["required"] = required
		}
		return s
	}
	return Schema{}
}

func (g *schemaGen) fields(t reflect.Type, props Schema, required *[]string) {
	jsonpath.EachField(t, func(name, opts string, f reflect.StructField) {
		var fs Schema
		if sch := f.Tag.Get("schema"); strings.HasPrefix(sch, "oneOf:") {
			var alts []any
			for _, ty := range strings.Split(strings.TrimPrefix(sch, "oneOf:"), ",") {
				alts = append(alts, Schema{"type": ty})
			}
			fs = Schema{"oneOf": alts}
		} else {
			fs = g.ref(f.Type)
		}
		if en := f.Tag.Get("enum"); en != "" {
			if ft := f.Type; ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Slice {
				// a list of values of a fixed set: the set is the items'
				items := g.ref(elemType(ft))
				fs = Schema{"type": []any{"array", "null"}, "items": Schema{"allOf": []any{items}, "enum": toAny(strings.Split(en, ","))}}
			} else {
				values := toAny(strings.Split(en, ","))
				if f.Type.Kind() == reflect.Pointer {
					// a pointer field is nullable (its schema says so):
					// the set admits null too, or the enum would refuse it
					values = append(values, nil)
				}
				fs = Schema{"allOf": []any{fs}, "enum": values}
			}
		}
		if _, isRef := fs["$ref"]; isRef && (f.Tag.Get("doc") != "" || f.Tag.Get("source") != "") {
			fs = Schema{"allOf": []any{fs}}
		}
		if d := f.Tag.Get("doc"); d != "" {
			fs["description"] = d
		}
		if src := f.Tag.Get("source"); src != "" {
			fs[SourceKey] = src
		}
		props[name] = fs
		if f.Tag.Get("required") == "true" || (!strings.Contains(opts, "omitempty") && f.Tag.Get("required") != "false" && f.Type.Kind() != reflect.Pointer) {
			*required = append(*required, name)
		}
	})
}

// elemType is the element type of a slice or of a pointer to one.
func elemType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Elem()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
