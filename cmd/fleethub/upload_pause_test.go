package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestPointsInsideAPauseAreRejected: after a resume, a point timestamped
// inside the closed pause is skipped as during_pause, and the answer
// conforms to the OpenAPI document, which lists that reason.
func TestPointsInsideAPauseAreRejected(t *testing.T) {
	clk := &clock{}
	cfg := testConfig(t)
	cfg.Now = clk.now
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-2 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-pause", t0)
	if r := n.batch(k, id, track(t0, 40, -83, constant(36, 60))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	p := n.do("POST", "/v1/trips/"+id+"/pause", k, map[string]any{})
	if p.Status != 200 {
		t.Fatalf("pause: %d %s", p.Status, p.Body)
	}
	pausedAt, err := time.Parse(time.RFC3339Nano, p.json(t)["paused_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(300 * time.Millisecond) // the pause lasts 300 ms on the trip service's clock
	if r := n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{}); r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	r := n.batch(k, id, track(pausedAt.Add(100*time.Millisecond), 40.01, -83, constant(36, 1)))
	if r.Status != 200 {
		t.Fatalf("batch inside the pause: %d %s", r.Status, r.Body)
	}
	b := r.json(t)
	rej, _ := b["rejections"].([]any)
	if b["processed_count"] != 0.0 || len(rej) != 1 || rej[0].(map[string]any)["reason"] != "during_pause" {
		t.Fatalf("a point inside the pause: %s", r.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)["/v1/locations/batch"].(map[string]any)["post"].(map[string]any)
	checkResponse(t, doc, op, "post", "/v1/locations/batch", r)
}
