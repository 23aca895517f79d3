package main

import (
	"strings"
	"testing"
)

// TestStreamEncryptionStartAnswers: a stream of either kind started with
// encryption true is started, its start answer carrying the algorithm,
// the key id and the key (shown this once); with encryption false it is
// started without an encryption block.
func TestStreamEncryptionStartAnswers(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 100000)
	var keys []string
	for kind, body := range map[string]map[string]any{
		"telemetry": {"data_types": []string{"gps_enhanced"}, "delivery_method": "websocket", "stream_config": map[string]any{"encryption": true}},
		"events":    {"stream_config": map[string]any{"delivery_method": "websocket", "encryption": true}},
	} {
		_, k := startEncrypted(t, n, key, kind, body)
		keys = append(keys, k)
		body["stream_config"].(map[string]any)["encryption"] = false
		r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
		if r.Status != 201 || r.json(t)["encryption"] != nil {
			t.Errorf("%s stream with encryption false: %d %s", kind, r.Status, r.Body)
		}
	}
	if keys[0] == keys[1] {
		t.Error("two streams got one key")
	}
	r := n.do("GET", "/api/v1/streaming/streams", key, nil)
	if got := len(r.json(t)["streams"].([]any)); got != 4 {
		t.Errorf("%d streams listed, want 4", got)
	}
	for _, k := range keys {
		if strings.Contains(string(r.Body), k) {
			t.Errorf("the listing shows a key: %s", r.Body)
		}
	}
}
