package main

import (
	"testing"
	"time"
)

// TestEndTimeNotBeforeTheTrip: a trip's start and points may lie a few
// minutes ahead of the server's clock (a device's clock running fast);
// stopped at once, its end_time is never before its start_time or its
// newest point.
func TestEndTimeNotBeforeTheTrip(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	ahead := time.Now().Add(3 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-fast-start", ahead)
	r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{})
	if r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	st := r.json(t)
	end, _ := time.Parse(time.RFC3339Nano, st["end_time"].(string))
	if end.Before(ahead) {
		t.Errorf("end_time %v before start_time %v", st["end_time"], st["start_time"])
	}

	t0 := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	id = n.startTrip(k, "veh-fast-clock", t0)
	last := time.Now().Add(2 * time.Minute).UTC().Truncate(time.Second)
	if r := n.batch(k, id, track(t0, 40, -83, constant(36, 60))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if r := n.batch(k, id, track(last, 40.01, -83, constant(36, 1))); r.Status != 200 || r.json(t)["processed_count"] != 1.0 {
		t.Fatalf("a point 2 minutes ahead: %d %s", r.Status, r.Body)
	}
	st = n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{}).json(t)
	if end, _ := time.Parse(time.RFC3339Nano, st["end_time"].(string)); end.Before(last) {
		t.Errorf("end_time %v before the newest point %v", st["end_time"], last)
	}
	if g := n.do("GET", "/v1/trips/"+id, k, nil).json(t); g["end_time"] != st["end_time"] {
		t.Errorf("stored end_time %v, answered %v", g["end_time"], st["end_time"])
	}
}
