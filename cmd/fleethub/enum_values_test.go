package main

import (
	"maps"
	"testing"
	"time"
)

// TestTripEnumValuesRefused: a trip body value outside its field's set
// (a stop's completion_status, the empty string included, a batch
// point's network_type, the empty string included) is 400
// invalid_request naming the field and listing the allowed values; beside
// another problem it is validation_failed naming both; the trip is left
// as it was. The single upload answers invalid_location, as for all its
// refusals.
func TestTripEnumValuesRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := n.startTrip(k, "veh-enum", time.Now().Add(-time.Minute))
	pt := track(time.Now().Add(-30*time.Second), 40, -83, []float64{30})[0]
	pt["network_type"] = "carrier_pigeon"
	blankNet := maps.Clone(pt)
	blankNet["network_type"] = ""
	for _, c := range []struct {
		name, path string
		body       map[string]any
		code       string
		fields     []string
		msg        string
	}{
		{"completion_status", "/v1/trips/" + id + "/stop", map[string]any{"completion_status": "done"}, "invalid_request",
			[]string{"completion_status"}, "completion_status: must be one of completed, cancelled, interrupted"},
		// an empty string is a value outside the set, not an absent field
		// taking the default: the trip is not stopped as completed
		{"an empty completion_status", "/v1/trips/" + id + "/stop", map[string]any{"completion_status": ""}, "invalid_request",
			[]string{"completion_status"}, "completion_status: must be one of completed, cancelled, interrupted"},
		{"completion_status and a fuel level out of range", "/v1/trips/" + id + "/stop", map[string]any{"completion_status": "done", "fuel_level_percent": 150},
			"validation_failed", []string{"completion_status", "fuel_level_percent"}, ""},
		{"a batch point's network_type", "/v1/locations/batch", map[string]any{"trip_id": id, "locations": []any{pt}}, "invalid_request",
			[]string{"locations[0].network_type"}, "locations[0].network_type: must be one of wifi, cellular, offline"},
		{"a single point's network_type", "/v1/locations/single", map[string]any{"trip_id": id, "latitude": 40.0, "longitude": -83.0,
			"timestamp": pt["timestamp"], "network_type": "carrier_pigeon"}, "invalid_location", []string{"network_type"}, ""},
		// an empty network_type is no network of the set, in a batch as in
		// a single upload: refused, never stored as "unknown"
		{"a batch point's empty network_type", "/v1/locations/batch", map[string]any{"trip_id": id, "locations": []any{blankNet}}, "invalid_request",
			[]string{"locations[0].network_type"}, "locations[0].network_type: must be one of wifi, cellular, offline"},
		{"a single point's empty network_type", "/v1/locations/single", map[string]any{"trip_id": id, "latitude": 40.0, "longitude": -83.0,
			"timestamp": pt["timestamp"], "network_type": ""}, "invalid_location", []string{"network_type"}, "network_type: must be one of wifi, cellular, offline"},
	} {
		r := n.do("POST", c.path, k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.name, r.Status, r.Body, c.code)
			continue
		}
		e := r.json(t)["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		for _, f := range c.fields {
			if d[f] == nil {
				t.Errorf("%s: details %v lack %s", c.name, d, f)
			}
		}
		if len(d) != len(c.fields) {
			t.Errorf("%s: details %v, want %v", c.name, d, c.fields)
		}
		if c.msg != "" && e["message"] != c.msg {
			t.Errorf("%s: message %q, want %q", c.name, e["message"], c.msg)
		}
	}
	if g := n.do("GET", "/v1/trips/"+id, k, nil).json(t); g["status"] != "active" {
		t.Errorf("after the refused stops: status %v", g["status"])
	}
}
