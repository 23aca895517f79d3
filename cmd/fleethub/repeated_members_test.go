package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

// TestEveryBodyRefusesRepeatedMembers sends every request body the
// OpenAPI document describes with one of its fields given twice, and
// expects 400 validation_failed naming that field: a repeated member is
// never read as the last (nor the first) of its values, on any endpoint.
func TestEveryBodyRefusesRepeatedMembers(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1_000_000)
	r := n.do("GET", "/v1/openapi.json", "", nil)
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	// a route that finds its resource before reading the body addresses one that exists
	geofence := n.do("POST", "/v1/geofences", key, map[string]any{"name": "depot", "type": "circle",
		"center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_m": 200}).json(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	checked := 0
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			rb, _ := op.(map[string]any)["requestBody"].(map[string]any)
			if rb == nil {
				continue
			}
			content, _ := rb["content"].(map[string]any)
			media, ok := content["application/json"].(map[string]any)
			if !ok {
				continue
			}
			schema, _ := media["schema"].(map[string]any)
			if ref, ok := schema["$ref"].(string); ok {
				schema, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			}
			props, _ := schema["properties"].(map[string]any)
			if len(props) == 0 {
				continue
			}
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			field := names[0]
			url := strings.Replace(p, "{geofence_id}", str(t, geofence, "geofence_id"), 1)
			res := n.do(strings.ToUpper(method), fillPath(url), key, `{"`+field+`":null,"`+field+`":null}`)
			if res.Status == 501 {
				continue // not available in this configuration (routing without --osm)
			}
			checked++
			var e struct {
				Error struct {
					Code    string            `json:"code"`
					Details map[string]string `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(res.Body, &e); res.Status != 400 || err != nil ||
				e.Error.Code != "validation_failed" || e.Error.Details[field] != jsonpath.RepeatedRefusal {
				t.Errorf("%s %s with %s repeated: %d %s", method, p, field, res.Status, res.Body)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d bodies in the document", checked)
	}
}
