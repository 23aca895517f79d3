package main

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// TestRouteAcrossAPause: a trip paused at one place and resumed 8.5 km
// east drove no distance between them, in its route data as in its
// analytics: the end waypoint lies at the trip's distance from the
// start, the step across the pause is no highway driving and makes no
// turn.
func TestRouteAcrossAPause(t *testing.T) {
	clk := &clock{}
	cfg := testConfig(t)
	cfg.Now = clk.now
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-6 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-ferry", t0)
	// 5 minutes north at 36 km/h: 3 km
	if r := n.batch(k, id, track(t0, 40, -83, constant(36, 300))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/pause", k, map[string]any{"reason": "ferry"}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	clk.advance(20 * time.Millisecond) // the pause lasts 20 ms on the trip service's clock
	if r := n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{"location": map[string]any{"latitude": 40.027, "longitude": -82.9}}); r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	// a minute more north from the far side, at 90 km/h: 1.5 km
	if r := n.batch(k, id, track(time.Now().Add(time.Second).UTC().Truncate(time.Second).Add(time.Second), 40.027, -82.9, constant(90, 60))); r.Status != 200 {
		t.Fatalf("batch after the pause: %d %s", r.Status, r.Body)
	}
	rt := n.do("GET", "/v1/trips/"+id+"/route?include_traffic_data=true", k, nil).json(t)
	ra := rt["route_analytics"].(map[string]any)
	total := ra["total_distance_km"].(float64)
	if math.Abs(total-4.475) > 0.05 {
		t.Fatalf("total_distance_km %v, want about 4.475 (nothing across the pause)", total)
	}
	wps := rt["waypoints"].([]any)
	end := wps[len(wps)-1].(map[string]any)
	if d := end["distance_from_start_km"].(float64); math.Abs(d-total) > 0.05 {
		t.Errorf("the end waypoint at %v km from the start, the trip drove %v km", d, total)
	}
	// 1.475 of the 4.475 km driven were at highway speed; the 8.5 km
	// across the pause were not driven at all
	if h := ra["highway_percentage"].(float64); math.Abs(h-33) > 1 {
		t.Errorf("highway_percentage %v, want about 33", h)
	}
	for _, w := range wps {
		if w.(map[string]any)["waypoint_type"] == "turn" {
			t.Errorf("a turn at the pause: %v", w)
		}
	}
}

// TestPauseEventsStateOnlyAGivenReason: trip_paused and trip_resumed
// carry the reason the client gave, and none when it gave none (never an
// empty reason it did not state).
func TestPauseEventsStateOnlyAGivenReason(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"categories": []string{"trip_lifecycle"}}})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	c := n.dial(t, k, "stream_id="+r.json(t)["stream_id"].(string))
	expectSubscribed(t, c)
	id := n.startTrip(k, "veh-why", time.Now().UTC())
	for _, step := range []struct {
		path string
		body map[string]any
	}{{"pause", map[string]any{}}, {"resume", map[string]any{}}, {"pause", map[string]any{"reason": "fuel"}}, {"resume", map[string]any{"reason": "fueled"}}} {
		if r := n.do("POST", "/v1/trips/"+id+"/"+step.path, k, step.body); r.Status != 200 {
			t.Fatalf("%s: %d %s", step.path, r.Status, r.Body)
		}
	}
	want := []struct {
		typ, reason string
	}{{"trip_started", ""}, {"trip_paused", ""}, {"trip_resumed", ""}, {"trip_paused", "fuel"}, {"trip_resumed", "fueled"}}
	for i, d := range readEvents(t, c, len(want)) {
		var m struct {
			EventType string         `json:"event_type"`
			EventData map[string]any `json:"event_data"`
		}
		if err := json.Unmarshal(d.Message, &m); err != nil {
			t.Fatal(err)
		}
		reason, has := m.EventData["reason"]
		if m.EventType != want[i].typ || (want[i].reason == "") == has || has && reason != want[i].reason {
			t.Errorf("event %d: %s with event_data %v; want %s with reason %q (none when empty)", i, m.EventType, m.EventData, want[i].typ, want[i].reason)
		}
	}
}
