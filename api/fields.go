package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// maxUnknown bounds how many unknown fields one refusal names.
const maxUnknown = 20

// unknownFields names, by path (vehicles[0].break_windows), each field of
// a JSON body that the Go type t it decodes into does not declare, up to
// maxUnknown; nil when there is none. Fields are matched as
// encoding/json matches them (json tags, embedded structs promoted, case
// folded). A value whose type decodes itself (json.Unmarshaler) or is free
// form (any, map[string]any) is not looked into.
func unknownFields(body []byte, t reflect.Type) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil // the typed decode reports a malformed body
	}
	bad := map[string]string{}
	walkFields(v, t, "", bad)
	if len(bad) == 0 {
		return nil
	}
	return bad
}

func walkFields(v any, t reflect.Type, path string, bad map[string]string) {
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
				if len(bad) < maxUnknown {
					bad[join(path, k)] = "unknown field"
				}
				continue
			}
			walkFields(obj[k], ft, join(path, k), bad)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return
		}
		for i, e := range arr {
			walkFields(e, t.Elem(), path+"["+strconv.Itoa(i)+"]", bad)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok || t.Key().Kind() != reflect.String {
			return
		}
		for k, e := range obj {
			walkFields(e, t.Elem(), join(path, k), bad)
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
	eachJSONField(t, func(name, _ string, f reflect.StructField) { out[strings.ToLower(name)] = f.Type })
	return out
}

// eachJSONField calls fn with each field of struct type t as
// encoding/json names it (its json tag's name, else its Go name, and the
// tag's options), walking into embedded structs without a name; fields
// tagged "-" and unexported ones are skipped. The OpenAPI schemas and the
// unknown-field check read fields through it, so they agree.
func eachJSONField(t reflect.Type, fn func(name, opts string, f reflect.StructField)) {
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
				eachJSONField(ft, fn)
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
