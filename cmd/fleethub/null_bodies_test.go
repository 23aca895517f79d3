package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// nonObjects are JSON bodies that are not objects: each must be refused
// where an object is expected, as api.DecodeJSON refuses them.
var nonObjects = []string{"null", " null ", "[]", `[{"vehicle_id":"veh-n"}]`, `"x"`, "1", "true", "false"}

// refusedAsNonObject checks the answer to a non-object body: 400
// invalid_request with the API's message.
func refusedAsNonObject(t *testing.T, what, body string, r resp) {
	t.Helper()
	if r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Errorf("%s %s: %d %s", what, body, r.Status, r.Body)
		return
	}
	if msg := r.json(t)["error"].(map[string]any)["message"]; msg != "request body must be a JSON object" {
		t.Errorf("%s %s: message %v", what, body, msg)
	}
}

// TestNullBodiesTrips: POST /v1/trips, POST /v1/locations/batch and
// PUT /v1/trips/{id}/metadata refuse non-object bodies and change nothing.
func TestNullBodiesTrips(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := n.startTrip(k, "veh-1", time.Now().Add(-time.Minute))
	if r := n.batch(k, id, []map[string]any{
		{"latitude": 40.0, "longitude": -83.0, "timestamp": stamp(-30 * time.Second), "speed_kmh": 30},
		{"latitude": 40.001, "longitude": -83.0, "timestamp": stamp(-20 * time.Second), "speed_kmh": 30},
	}); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	before := n.do("GET", "/v1/trips/"+id, k, nil).json(t)
	for _, b := range nonObjects {
		refusedAsNonObject(t, "POST /v1/trips", b, n.do("POST", "/v1/trips", k, b))
		refusedAsNonObject(t, "POST /v1/locations/batch", b, n.do("POST", "/v1/locations/batch", k, b))
		refusedAsNonObject(t, "PUT metadata", b, n.do("PUT", "/v1/trips/"+id+"/metadata", k, b))
	}
	list := n.do("GET", "/v1/trips", k, nil).json(t)
	if c := list["pagination"].(map[string]any)["total_count"].(float64); c != 1 {
		t.Errorf("%v trips after the refused starts, want 1", c)
	}
	after := n.do("GET", "/v1/trips/"+id, k, nil).json(t)
	if fmt.Sprint(after["metadata"]) != fmt.Sprint(before["metadata"]) {
		t.Errorf("metadata changed: %v, was %v", after["metadata"], before["metadata"])
	}
	if r := n.do("GET", "/v1/trips/"+id+"/route", k, nil); r.Status != 200 {
		t.Errorf("route: %d %s", r.Status, r.Body)
	} else if g, _ := r.json(t)["route_geometry"].(map[string]any); g == nil || g["total_points"] != 2.0 {
		t.Errorf("route after the refused batches: %s", r.Body)
	}
}

// TestNullBodiesIngest: POST /v1/telemetry (fast path and general path)
// and POST /v1/events refuse non-object bodies and publish nothing.
func TestNullBodiesIngest(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"telemetry:write", "events:write"}, 100000)
	tel := readTopic(t, n.app.bus, hub.TopicTelemetry)
	evs := readTopic(t, n.app.bus, hub.TopicEvents)
	for _, b := range nonObjects {
		refusedAsNonObject(t, "POST /v1/telemetry", b, n.do("POST", "/v1/telemetry", k, b))
		refusedAsNonObject(t, "POST /v1/events", b, n.do("POST", "/v1/events", k, b))
	}
	// good requests for the same vehicle come first on both topics: the
	// refused ones, sent before them, published nothing
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("veh-x", 0, 42, 0)}}); r.Status != 202 {
		t.Fatalf("good telemetry: %d %s", r.Status, r.Body)
	}
	ev := map[string]any{"event_id": "the-good-one", "event_type": "door_open", "category": "vehicle_events", "timestamp": stamp(-time.Second),
		"severity": "low", "source": map[string]any{"vehicle_id": "veh-x"}}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{ev}}); r.Status != 202 {
		t.Fatalf("good event: %d %s", r.Status, r.Body)
	}
	if tg := tel.wait(1); len(tg) != 1 || tg[0].env.Telemetry.Sequence != 42 {
		t.Fatalf("telemetry topic carries %d messages", len(tg))
	}
	if eg := evs.wait(1); len(eg) != 1 || eg[0].env.Event.EventID != "the-good-one" {
		t.Fatalf("events topic carries %d messages", len(eg))
	}
}

// TestNullBodiesDeviceSettings: PUT /v1/devices/{id}/settings refuses
// non-object bodies and keeps the applied settings.
func TestNullBodiesDeviceSettings(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	if r := n.do("PUT", "/v1/devices/dev-1/settings", k, map[string]any{"power_management": map[string]any{"sleep_mode_enabled": true, "sleep_delay_minutes": 5}}); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	before := n.do("GET", "/v1/devices/dev-1/settings", k, nil)
	for _, b := range nonObjects {
		refusedAsNonObject(t, "PUT settings", b, n.do("PUT", "/v1/devices/dev-1/settings", k, b))
		refusedAsNonObject(t, "PUT new device settings", b, n.do("PUT", "/v1/devices/dev-2/settings", k, b))
	}
	if after := n.do("GET", "/v1/devices/dev-1/settings", k, nil); string(after.Body) != string(before.Body) {
		t.Errorf("settings changed: %s, was %s", after.Body, before.Body)
	}
	if r := n.do("GET", "/v1/devices/dev-2/settings", k, nil); r.Status != 404 {
		t.Errorf("a refused PUT created settings: %d %s", r.Status, r.Body)
	}
}
