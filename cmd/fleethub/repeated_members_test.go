package main

import (
	"encoding/json"
	"reflect"
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

// TestTypeErrorNamedWithUnknownFields: a body with a value of the wrong
// type and an unknown field answers one 400 validation_failed naming
// both, on a route that binds its body, on the location uploads and map
// matching (a faster decoder first), on the ingest endpoints and on a
// stream's start and configure (decoded by the stream service); two
// values of a wrong type are named both.
func TestTypeErrorNamedWithUnknownFields(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1_000_000)
	s := n.do("POST", "/api/v1/streaming/events/start", key, map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}}).json(t)
	stream := str(t, s, "stream_id")
	for _, c := range []struct {
		path, body string
		want       map[string]string
	}{
		{"/v1/trips", `{"vehicle_id":"v1","metadata":5,"zz":1}`, map[string]string{"metadata": "must be an object", "zz": jsonpath.UnknownRefusal}},
		{"/v1/locations/batch", `{"trip_id":"t1","locations":[{"latitude":"40","longitude":-83,"timestamp":"2026-11-23T10:00:00Z","zz":1}]}`,
			map[string]string{"locations[0].latitude": "must be a number", "locations[0].zz": jsonpath.UnknownRefusal}},
		{"/v1/events", `{"events":5,"zz":1}`, map[string]string{"events": "must be an array", "zz": jsonpath.UnknownRefusal}},
		{"/api/v1/streaming/events/start", `{"stream_config":{"delivery_method":"websocket","batch_events":"yes"},"zz":1,"yy":2}`,
			map[string]string{"stream_config.batch_events": "must be a boolean", "zz": jsonpath.UnknownRefusal, "yy": jsonpath.UnknownRefusal}},
		{"/api/v1/streaming/events/configure/" + stream, `{"stream_config":{"batch_events":"yes"},"zz":1}`,
			map[string]string{"stream_config.batch_events": "must be a boolean", "zz": jsonpath.UnknownRefusal}},
		// two values of a wrong type: both named, not only the first
		{"/v1/trips", `{"vehicle_id":5,"metadata":5}`, map[string]string{"vehicle_id": "must be a string", "metadata": "must be an object"}},
		{"/v1/locations/batch", `{"trip_id":"t1","locations":[{"latitude":"40","longitude":-83,"timestamp":"2026-11-23T10:00:00Z"},{"latitude":40,"longitude":-83,"timestamp":7}]}`,
			map[string]string{"locations[0].latitude": "must be a number", "locations[1].timestamp": "must be a string"}},
		{"/api/v1/streaming/events/start", `{"stream_config":{"delivery_method":"websocket","batch_events":"yes","batch_size":"9"}}`,
			map[string]string{"stream_config.batch_events": "must be a boolean", "stream_config.batch_size": "must be an integer"}},
	} {
		method := "POST"
		if strings.Contains(c.path, "/configure/") {
			method = "PUT"
		}
		res := n.do(method, c.path, key, c.body)
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(res.Body, &e); res.Status != 400 || err != nil || e.Error.Code != "validation_failed" || !reflect.DeepEqual(e.Error.Details, c.want) {
			t.Errorf("%s %s: %d %s, want validation_failed naming %v", c.path, c.body, res.Status, res.Body, c.want)
		}
	}
}
