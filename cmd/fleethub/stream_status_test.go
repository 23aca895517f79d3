package main

import (
	"slices"
	"testing"
	"time"
)

// A stream's lag states only what was measured: before the node matched
// a message for it, last_message_at and pipeline_lag_ms are both null
// (no lag of 0 ms claimed); once one matched, both are set.
func TestStreamLagNullUntilAMessageMatched(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read", "events:write"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"lag-v1"}}})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	lag := func() map[string]any {
		r := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil)
		if r.Status != 200 {
			t.Fatalf("status: %d %s", r.Status, r.Body)
		}
		return r.json(t)["lag"].(map[string]any)
	}
	l := lag()
	if v, ok := l["pipeline_lag_ms"]; !ok || v != nil {
		t.Errorf("before any match: pipeline_lag_ms %v (present %v), want null", v, ok)
	}
	if v, ok := l["last_message_at"]; !ok || v != nil {
		t.Errorf("before any match: last_message_at %v (present %v), want null", v, ok)
	}
	if l["last_offset"] != 0.0 {
		t.Errorf("before any match: last_offset %v", l["last_offset"])
	}
	r = n.do("POST", "/v1/events", k, map[string]any{"events": []any{map[string]any{"event_type": "harsh_braking", "category": "safety_events",
		"timestamp": time.Now().UTC().Format(time.RFC3339), "severity": "high", "source": map[string]any{"vehicle_id": "lag-v1"}}}})
	if r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the event matched", func() bool { return lag()["last_offset"] == 1.0 })
	l = lag()
	if ms, ok := l["pipeline_lag_ms"].(float64); !ok || ms < 0 {
		t.Errorf("after a match: pipeline_lag_ms %v, want a number of milliseconds", l["pipeline_lag_ms"])
	}
	if _, ok := l["last_message_at"].(string); !ok {
		t.Errorf("after a match: last_message_at %v, want a time", l["last_message_at"])
	}
}

// A stream's counters are the counts the service keeps, each moved by
// what happens: no dropped count that nothing ever moves.
func TestStreamCountersAreTheCountedOnes(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, kind := range []string{"events", "telemetry"} {
		r := n.do("POST", "/api/v1/streaming/"+kind+"/start", k, map[string]any{})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		id := r.json(t)["stream_id"].(string)
		r = n.do("GET", "/api/v1/streaming/"+kind+"/status/"+id, k, nil)
		var got []string
		for name := range r.json(t)["counters"].(map[string]any) {
			got = append(got, name)
		}
		slices.Sort(got)
		want := []string{"dead_lettered", "delivered", "duplicates_suppressed", "failed_attempts", "matched", "throttled"}
		if !slices.Equal(got, want) {
			t.Errorf("%s counters %v, want %v", kind, got, want)
		}
	}
}
