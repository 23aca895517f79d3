package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestResumeMetadataOverTheLimit: a resume's metadata is held to the 64
// KB of a trip's metadata, as at the start and on update: 66 KB answer
// 413 payload_too_large and the trip stays paused.
func TestResumeMetadataOverTheLimit(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := n.startTrip(k, "veh-resume", time.Now().Add(-time.Minute))
	if r := n.do("POST", "/v1/trips/"+id+"/pause", k, map[string]any{}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{"metadata": map[string]any{"note": strings.Repeat("x", 66<<10)}})
	if r.Status != 413 || r.errCode(t) != "payload_too_large" || !strings.Contains(string(r.Body), `"details":{"metadata":`) {
		t.Fatalf("resume with 66 KB of metadata: %d %.300s", r.Status, r.Body)
	}
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)["/v1/trips/{trip_id}/resume"].(map[string]any)["post"].(map[string]any)
	checkResponse(t, doc, op, "post", "/v1/trips/{trip_id}/resume", r)
	if g := n.do("GET", "/v1/trips/"+id, k, nil).json(t); g["status"] != "paused" {
		t.Fatalf("after the refused resume: %v", g["status"])
	}
	if r := n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{"metadata": map[string]any{"note": "fuel"}}); r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
}
