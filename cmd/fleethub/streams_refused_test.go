package main

import "testing"

// TestStreamEncryptionIsRefused: the hub encrypts no payload itself, so a
// stream asking for it is refused by name and nothing is started.
func TestStreamEncryptionIsRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 100000)
	for kind, body := range map[string]map[string]any{
		"telemetry": {"data_types": []string{"gps_enhanced"}, "delivery_method": "websocket", "stream_config": map[string]any{"encryption": true}},
		"events":    {"stream_config": map[string]any{"delivery_method": "websocket", "encryption": true}},
	} {
		r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["stream_config.encryption"] == nil {
			t.Errorf("%s stream with encryption: %d %s", kind, r.Status, r.Body)
		}
		body["stream_config"].(map[string]any)["encryption"] = false
		if r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body); r.Status != 201 {
			t.Errorf("%s stream with encryption false: %d %s", kind, r.Status, r.Body)
		}
	}
	r := n.do("GET", "/api/v1/streaming/streams", key, nil)
	if got := len(r.json(t)["streams"].([]any)); got != 2 {
		t.Errorf("%d streams listed, want the 2 started without encryption", got)
	}
}
