package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestTrailingBracketRefused: a body followed by a stray } or ] is not
// one JSON value: 400 invalid_request on every decoder (the shared one,
// the fast ones of ingest, uploads and routing), nothing created; the
// same body without it goes through.
func TestTrailingBracketRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 1_000_000)
	now := time.Now().UTC().Format(time.RFC3339)
	trip := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-1"}).json(t)["trip_id"].(string)
	point := map[string]any{"latitude": 40.0, "longitude": -83.0, "timestamp": now}
	for _, c := range []struct {
		path string
		body any
		ok   int
	}{
		{"/v1/trips", map[string]any{"vehicle_id": "veh-2"}, 201},
		{"/v1/telemetry", map[string]any{"messages": []any{map[string]any{"timestamp": now, "vehicle_id": "veh-1", "data_type": "environmental", "data": map[string]any{"cabin": map[string]any{"temp": 21}}}}}, 0},
		{"/v1/events", map[string]any{"events": []any{map[string]any{"event_type": "harsh_braking", "category": "safety_events", "timestamp": now, "severity": "high", "source": map[string]any{"vehicle_id": "veh-1"}}}}, 0},
		{"/v1/locations/batch", map[string]any{"trip_id": trip, "locations": []any{point}}, 0},
		{"/api/v1/fleet/routing/match", map[string]any{"costing": "auto", "points": []any{point, point}}, 0},
	} {
		b, err := json.Marshal(c.body)
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range []string{"}", "]", "\n ]]"} {
			r := n.do("POST", c.path, k, string(b)+tail)
			if r.Status != 400 || r.errCode(t) != "invalid_request" {
				t.Errorf("%s with %q after the body: %d %.300s", c.path, tail, r.Status, r.Body)
			}
		}
		if c.ok != 0 {
			if r := n.do("POST", c.path, k, string(b)+" \n"); r.Status != c.ok {
				t.Errorf("%s: %d %.300s", c.path, r.Status, r.Body)
			}
		}
	}
	if l := n.do("GET", "/v1/trips", k, nil).json(t); len(l["trips"].([]any)) != 2 {
		t.Errorf("trips after the refusals: %v", l)
	}
}
