package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// sourceKey is the schema extension naming where a field's value comes
// from (api.SourceKey; not imported: this package reads documents only).
const sourceKey = "x-fleethub-source"

// Tally gathers, across many responses, the values seen at each response
// field the document marks as computed (x-fleethub-source: computed). A
// field is named by its schema and property, "trips.Analytics.safety_score",
// so every endpoint that answers with that schema adds to the same field.
//
// A Tally is not safe for concurrent use.
type Tally struct {
	doc    map[string]any
	fields map[string]*seen
}

type seen struct {
	count  int
	first  string // the first value, as JSON
	varied bool
}

// Constant is a computed field that never changed.
type Constant struct {
	Field string // schema.property
	Value string // the one value seen, as JSON
	Count int    // how many times it was seen
}

// NewTally returns a Tally over doc, an OpenAPI document decoded with
// encoding/json.
func NewTally(doc map[string]any) *Tally {
	return &Tally{doc: doc, fields: map[string]*seen{}}
}

// Computed names every computed field of doc's schemas, sorted.
func Computed(doc map[string]any) []string {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	var out []string
	for name, s := range schemas {
		props, _ := asMap(s)["properties"].(map[string]any)
		for p, ps := range props {
			if asMap(ps)[sourceKey] == "computed" {
				out = append(out, name+"."+p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Sources lists each x-fleethub-source value of doc's schemas with the
// fields that carry it, "schema.property".
func Sources(doc map[string]any) map[string][]string {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	out := map[string][]string{}
	for name, s := range schemas {
		props, _ := asMap(s)["properties"].(map[string]any)
		for p, ps := range props {
			if v, ok := asMap(ps)[sourceKey]; ok {
				k := fmt.Sprint(v)
				out[k] = append(out[k], name+"."+p)
			}
		}
	}
	for _, fs := range out {
		sort.Strings(fs)
	}
	return out
}

// Observe walks v, a response decoded with encoding/json, along schema
// and records the value of every computed field it holds. A oneOf is
// followed into the alternative v matches.
func (t *Tally) Observe(schema map[string]any, v any) {
	t.walk(schema, "", v, 0)
}

// Count is how many times field was seen.
func (t *Tally) Count(field string) int {
	if s := t.fields[field]; s != nil {
		return s.count
	}
	return 0
}

// Constants are the computed fields seen at least min times that always
// had the same value, sorted by field.
func (t *Tally) Constants(min int) []Constant {
	var out []Constant
	for f, s := range t.fields {
		if s.count >= min && !s.varied {
			out = append(out, Constant{Field: f, Value: s.first, Count: s.count})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func (t *Tally) record(field string, v any) {
	b, err := json.Marshal(v) // maps encode with sorted keys: equal values, equal text
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", v))
	}
	s := t.fields[field]
	if s == nil {
		t.fields[field] = &seen{count: 1, first: string(b)}
		return
	}
	s.count++
	if !s.varied && s.first != string(b) {
		s.varied = true
	}
}

// walk follows schema s (named name when it is a component) over v.
func (t *Tally) walk(s map[string]any, name string, v any, depth int) {
	if depth > 64 || v == nil {
		return
	}
	for i := 0; i < 32; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			break
		}
		name = strings.TrimPrefix(ref, "#/components/schemas/")
		s = resolve(t.doc, s)
	}
	for _, sub := range toSlice(s["allOf"]) {
		t.walk(asMap(sub), name, v, depth+1)
	}
	for _, sub := range toSlice(s["oneOf"]) {
		var errs []string
		check(t.doc, asMap(sub), v, "$", &errs, 0)
		if len(errs) == 0 {
			t.walk(asMap(sub), name, v, depth+1)
			break
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		ap, _ := s["additionalProperties"].(map[string]any)
		for k, val := range x {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap != nil {
					t.walk(ap, "", val, depth+1)
				}
				continue
			}
			if ps[sourceKey] == "computed" && name != "" {
				t.record(name+"."+k, val)
			}
			t.walk(ps, "", val, depth+1)
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for _, it := range x {
				t.walk(items, "", it, depth+1)
			}
		}
	}
}
