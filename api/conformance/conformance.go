// Package conformance checks JSON values against the schemas of the
// OpenAPI document, so tests can prove that every endpoint answers with a
// shape the document describes. It understands the subset of JSON Schema
// the document uses: type (string or list), properties, required,
// additionalProperties, items, enum, oneOf, allOf and $ref.
//
// Validate keeps no state and only reads its arguments: concurrent calls,
// on one document too, are safe as long as nothing modifies what they
// read.
package conformance

import (
	"fmt"
	"sort"
	"strings"
)

// Validate checks v (decoded with encoding/json into any) against schema,
// resolving $ref in doc.
func Validate(doc map[string]any, schema map[string]any, v any) error {
	var errs []string
	check(doc, schema, v, "$", &errs, 0)
	if len(errs) > 0 {
		sort.Strings(errs)
		if len(errs) > 10 {
			errs = append(errs[:10], fmt.Sprintf("... and %d more", len(errs)-10))
		}
		return fmt.Errorf("conformance: %s", strings.Join(errs, "; "))
	}
	return nil
}

func resolve(doc map[string]any, s map[string]any) map[string]any {
	for i := 0; i < 32; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		comps, _ := doc["components"].(map[string]any)
		schemas, _ := comps["schemas"].(map[string]any)
		next, _ := schemas[name].(map[string]any)
		if next == nil {
			return map[string]any{"not": map[string]any{}, "x-missing": ref}
		}
		s = next
	}
	return s
}

func check(doc, s map[string]any, v any, path string, errs *[]string, depth int) {
	if depth > 64 {
		return
	}
	s = resolve(doc, s)
	if m, ok := s["x-missing"]; ok {
		*errs = append(*errs, fmt.Sprintf("%s: schema %v missing", path, m))
		return
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			check(doc, asMap(sub), v, path, errs, depth+1)
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		matched := false
		for _, sub := range one {
			var e []string
			check(doc, asMap(sub), v, path, &e, depth+1)
			if len(e) == 0 {
				matched = true
				break
			}
		}
		if !matched {
			*errs = append(*errs, fmt.Sprintf("%s: matches no alternative", path))
		}
	}
	if en, ok := s["enum"]; ok {
		found := false
		for _, e := range toSlice(en) {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			*errs = append(*errs, fmt.Sprintf("%s: %v not in enum %v", path, v, en))
		}
	}
	if t, ok := s["type"]; ok {
		types := toSlice(t)
		okType := false
		for _, ty := range types {
			if isType(fmt.Sprint(ty), v) {
				okType = true
			}
		}
		if !okType {
			*errs = append(*errs, fmt.Sprintf("%s: %T is not %v", path, v, t))
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range toSlice(s["required"]) {
			if _, ok := x[fmt.Sprint(r)]; !ok {
				*errs = append(*errs, fmt.Sprintf("%s: missing required %v", path, r))
			}
		}
		for k, val := range x {
			if ps, ok := props[k]; ok {
				check(doc, asMap(ps), val, path+"."+k, errs, depth+1)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					*errs = append(*errs, fmt.Sprintf("%s: undocumented field %q", path, k))
				}
			case map[string]any:
				check(doc, ap, val, path+"."+k, errs, depth+1)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				check(doc, items, it, fmt.Sprintf("%s[%d]", path, i), errs, depth+1)
			}
		}
	}
}

func isType(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	}
	return false
}

func toSlice(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case nil:
		return nil
	default:
		return []any{x}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
