package main

import "testing"

// TestEphemeralStreamStartBodies: ephemeral and idle_timeout_seconds are
// kept in the stream's configuration, and refused by name with webhook
// delivery, out of bounds or without ephemeral.
func TestEphemeralStreamStartBodies(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"ephemeral": true, "idle_timeout_seconds": 60})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	cfg, _ := st["configuration"].(map[string]any)
	if cfg["ephemeral"] != true || cfg["idle_timeout_seconds"] != 60.0 || st["stop_reason"] != nil {
		t.Fatalf("status: %v", st)
	}
	for path, body := range map[string]map[string]any{
		"events":    {"ephemeral": true, "stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": "https://example.com/h"},
		"telemetry": {"idle_timeout_seconds": 60},
	} {
		r := n.do("POST", "/api/v1/streaming/"+path+"/start", k, body)
		det, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		field := "ephemeral"
		if path == "telemetry" {
			field = "idle_timeout_seconds"
		}
		if r.Status != 400 || r.errCode(t) != "validation_failed" || det[field] == nil {
			t.Errorf("%s %v: %d %s, want validation_failed naming %s", path, body, r.Status, r.Body, field)
		}
	}
}
