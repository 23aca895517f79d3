package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

// TestEveryBodyRefusesUnknownFields sends every request body the OpenAPI
// document describes with one field no endpoint knows, at the top level,
// and expects 400 validation_failed naming that field: a misspelled or
// unsupported field is never answered as if honoured, and nothing is
// created by such a request.
func TestEveryBodyRefusesUnknownFields(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1_000_000)
	r := n.do("GET", "/v1/openapi.json", "", nil)
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	// the routes with an id in their path address resources that exist
	geofence := n.do("POST", "/v1/geofences", key, map[string]any{"name": "depot", "type": "circle",
		"center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_m": 200}).json(t)
	ids := map[string]string{"{geofence_id}": str(t, geofence, "geofence_id")}
	for kind, body := range map[string]map[string]any{
		"telemetry": {"data_types": []string{"gps_enhanced"}, "delivery_method": "websocket"},
		"events":    {"stream_config": map[string]any{"delivery_method": "websocket"}},
	} {
		s := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body).json(t)
		ids["/"+kind+"/configure/{stream_id}"] = "/" + kind + "/configure/" + str(t, s, "stream_id")
	}
	const field = "zz_not_a_field"
	checked := 0
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			rb, _ := op.(map[string]any)["requestBody"].(map[string]any)
			if rb == nil {
				continue
			}
			content, _ := rb["content"].(map[string]any)
			if _, ok := content["application/json"]; !ok {
				continue
			}
			url := p
			for from, to := range ids {
				url = strings.Replace(url, from, to, 1)
			}
			res := n.do(strings.ToUpper(method), fillPath(url), key, map[string]any{field: 1})
			if res.Status == 501 {
				continue // not available in this configuration (routing without --osm)
			}
			checked++
			if res.Status != 400 {
				t.Errorf("%s %s with an unknown field: %d %s", method, p, res.Status, res.Body)
				continue
			}
			var e struct {
				Error struct {
					Code    string         `json:"code"`
					Details map[string]any `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(res.Body, &e); err != nil {
				t.Errorf("%s %s: %v: %s", method, p, err, res.Body)
				continue
			}
			if e.Error.Code != "validation_failed" || !hasKeyEnding(e.Error.Details, field) {
				t.Errorf("%s %s with an unknown field: %s, want validation_failed naming %s", method, p, res.Body, field)
			}
			// one wording on every endpoint (an endpoint may add what it allows)
			for k, msg := range e.Error.Details {
				if s, _ := msg.(string); strings.HasSuffix(k, field) && s != jsonpath.UnknownRefusal && !strings.HasPrefix(s, jsonpath.UnknownRefusal+"; allowed: ") {
					t.Errorf("%s %s refuses an unknown field with %q, want %q", method, p, s, jsonpath.UnknownRefusal)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d bodies in the document", checked)
	}
}

// str is the string at path in a decoded JSON object.
func str(t *testing.T, m map[string]any, path ...string) string {
	t.Helper()
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %v in %v", path, m)
		}
		v = o[k]
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("no string at %v in %v", path, m)
	}
	return s
}

func hasKeyEnding(details map[string]any, field string) bool {
	for k := range details {
		if strings.HasSuffix(k, field) {
			return true
		}
	}
	return false
}

// TestNestedFieldsNamedByPath: a stream start's unknown or mistyped field
// inside an object or an array is named by its full path, as on every
// other route.
func TestNestedFieldsNamedByPath(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1_000_000)
	for _, c := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/api/v1/streaming/events/start", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket", "zz": 1}}, "stream_config.zz"},
		{"/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"zz": 1}}, "event_filters.zz"},
		{"/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"categories": []any{"safety_events", 5}}}, "event_filters.categories[1]"},
		{"/api/v1/streaming/telemetry/start", map[string]any{"data_types": []string{"gps_enhanced"}, "filters": map[string]any{"zz": 1}}, "filters.zz"},
	} {
		r := n.do("POST", c.path, key, c.body)
		if r.Status != 400 {
			t.Errorf("%s %v: %d %s", c.path, c.body, r.Status, r.Body)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%s %v: %s, want %s named", c.path, c.body, r.Body, c.field)
		}
	}
}
