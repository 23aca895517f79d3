// Package jsonpath names the places of a JSON body that do not fit the Go
// type it decodes into, by their full path (vehicles[0].break_windows,
// locations[4].latitude): fields the type does not declare, date-times
// that do not parse, the value a type error met, and the JSON type a Go
// type takes. Fields are matched as encoding/json matches them.
package jsonpath

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

// MaxNamed bounds how many fields one refusal names.
const MaxNamed = 20

// Unknown names, by path (vehicles[0].break_windows), each field of
// a JSON body that the Go type t it decodes into does not declare, up to
// MaxNamed; nil when there is none. Fields are matched as
// encoding/json matches them (json tags, embedded structs promoted, case
// folded). A value whose type decodes itself (json.Unmarshaler) or is free
// form (any, map[string]any) is not looked into.
func Unknown(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // the typed decode reports a malformed body
	}
	bad := map[string]string{}
	walkFields(v, t, "", bad, nil)
	if len(bad) == 0 {
		return nil
	}
	return bad
}

// walkFields walks v, decoded JSON, against t: bad gets each field t
// does not declare, and times, when not nil, each time.Time whose value
// is not an RFC 3339 date-time; both by full path.
func walkFields(v any, t reflect.Type, path string, bad, times map[string]string) {
	if times != nil && v != nil {
		tt := t
		for tt.Kind() == reflect.Pointer {
			tt = tt.Elem()
		}
		if tt == timeType {
			s, ok := v.(string)
			if _, err := time.Parse(time.RFC3339, s); (!ok || err != nil) && len(times) < MaxNamed {
				times[path] = "must be an ISO 8601 date-time with a time zone (RFC 3339)"
			}
			return
		}
	}
	for t.Kind() == reflect.Pointer {
		if t.Implements(unmarshalerType) {
			return
		}
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[strings.ToLower(k)]
			if !ok {
				if len(bad) < MaxNamed {
					bad[join(path, k)] = "unknown field"
				}
				continue
			}
			walkFields(obj[k], ft, join(path, k), bad, times)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			walkFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", bad, times)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return
		}
		for k, e := range obj {
			walkFields(e, t.Elem(), join(path, k), bad, times)
		}
	}
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// jsonFields maps the folded JSON names of a struct's fields, embedded
// structs' promoted, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	EachField(t, func(name, _ string, f reflect.StructField) { out[strings.ToLower(name)] = f.Type })
	return out
}

// EachField calls fn with each field of struct type t as
// encoding/json names it (its json tag's name, else its Go name, and the
// tag's options), walking into embedded structs without a name; fields
// tagged "-" and unexported ones are skipped. The OpenAPI schemas and the
// unknown-field check read fields through it, so they agree.
func EachField(t reflect.Type, fn func(name, opts string, f reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				EachField(ft, fn)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fn(name, opts, f)
	}
}

// Field is the JSON path of field, a path as encoding/json's
// UnmarshalTypeError gives it in decoding type t: that path names each
// embedded struct on the way by its Go name (LocationIn.latitude), where
// the JSON object has its fields promoted (latitude), so those names are
// dropped. A path that leaves t's fields is kept from there as given.
func Field(t reflect.Type, field string) string {
	segs := strings.Split(field, ".")
	out := make([]string, 0, len(segs))
	for _, seg := range segs {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			t = nil
			out = append(out, seg)
			continue
		}
		if e, ok := embedded(t, seg); ok {
			t = e
			continue
		}
		next := jsonFields(t)[strings.ToLower(seg)]
		t = next
		out = append(out, seg)
	}
	return strings.Join(out, ".")
}

// embedded is the type of t's embedded struct field of Go name name whose
// fields encoding/json promotes (no json name of its own).
func embedded(t reflect.Type, name string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous || f.Name != name {
			continue
		}
		tag := f.Tag.Get("json")
		if n, _, _ := strings.Cut(tag, ","); n != "" || tag == "-" {
			return nil, false
		}
		return f.Type, true
	}
	return nil, false
}

// Indexed is the path of the value a type error met, with the index
// of every array on the way (locations[3].latitude where encoding/json
// says locations.latitude): the first value at field's path, in document
// order, whose JSON kind is found's ("string", "number 1.5", "object",
// "array", "bool", as UnmarshalTypeError.Value gives it), which is the
// one the decoder stopped at.
func Indexed(body []byte, field, found string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return "", false
	}
	kind, _, _ := strings.Cut(found, " ")
	return locate(v, strings.Split(field, "."), kind, "")
}

func locate(v any, segs []string, kind, path string) (string, bool) {
	if len(segs) == 0 && jsonKindOf(v) == kind {
		return path, true
	}
	if arr, ok := v.([]any); ok {
		for i, e := range arr {
			if p, ok := locate(e, segs, kind, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
		return "", false
	}
	obj, ok := v.(map[string]any)
	if !ok || len(segs) == 0 {
		return "", false
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if strings.EqualFold(k, segs[0]) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := locate(obj[k], segs[1:], kind, join(path, k)); ok {
			return p, true
		}
	}
	return "", false
}

// jsonKindOf names v's JSON kind as UnmarshalTypeError.Value does.
func jsonKindOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// BadTimes names each time.Time field of t whose value in body is not an
// RFC 3339 date-time (what time.Time decodes), with its full path.
func BadTimes(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	bad := map[string]string{}
	walkFields(v, t, "", map[string]string{}, bad)
	return bad
}

// Kind is the JSON type a value of Go type goType (as reflect names it)
// must be: "an array", "an object", "a string", "a boolean", "an
// integer" or "a number".
func Kind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map"), strings.HasPrefix(goType, "struct"), strings.Contains(goType, "."):
		return "an object"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	default:
		return "a number"
	}
}
