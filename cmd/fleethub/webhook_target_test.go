package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWebhookTargetLiteralRefused: a webhook_url whose host is an address
// literal in a refused range, in any form, answers 400 naming
// --allow-private-webhooks at start and at configure, and no stream is
// created or changed; with the flag the same URLs are accepted.
func TestWebhookTargetLiteralRefused(t *testing.T) {
	urls := []string{"http://2130706433/", "http://[::1]/", "http://169.254.169.254/",
		"http://127.1/", "http://0x7f.0.0.1/", "http://0177.0.0.1/", "http://[::ffff:127.0.0.1]:8080/", "http://[64:ff9b::7f00:1]/"}
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	streams := func() int {
		l, err := n.app.store.ListStreams(context.Background(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	before := streams()
	for _, u := range urls {
		for _, start := range []struct {
			path string
			body map[string]any
		}{
			{"/api/v1/streaming/telemetry/start", map[string]any{"delivery_method": "webhook", "webhook_url": u}},
			{"/api/v1/streaming/events/start", map[string]any{"stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": u}},
		} {
			r := n.do("POST", start.path, k, start.body)
			if r.Status != 400 || r.errCode(t) != "validation_failed" || !strings.Contains(string(r.Body), "--allow-private-webhooks") {
				t.Errorf("%s %s: %d %s", start.path, u, r.Status, r.Body)
			}
		}
	}
	if got := streams(); got != before {
		t.Fatalf("streams: %d, want %d (unchanged)", got, before)
	}

	// configure: a webhook stream to a public name cannot be moved to a refused literal
	r := n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"delivery_method": "webhook", "webhook_url": "https://hooks.example.com/t"})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	for _, u := range urls {
		r := n.do("PUT", "/api/v1/streaming/telemetry/configure/"+id, k, map[string]any{"webhook_url": u})
		if r.Status != 400 || !strings.Contains(string(r.Body), "--allow-private-webhooks") {
			t.Errorf("configure %s: %d %s", u, r.Status, r.Body)
		}
	}
	st := n.do("GET", "/api/v1/streaming/telemetry/status/"+id, k, nil)
	if st.Status != 200 || !strings.Contains(string(st.Body), "hooks.example.com") {
		t.Fatalf("status after refused configures: %d %s", st.Status, st.Body)
	}

	// with --allow-private-webhooks they are accepted
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n2 := startNode(t, cfg)
	k2 := n2.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, u := range urls {
		if r := n2.do("POST", "/api/v1/streaming/telemetry/start", k2, map[string]any{"delivery_method": "webhook", "webhook_url": u}); r.Status != 201 {
			t.Errorf("with the flag, %s: %d %s", u, r.Status, r.Body)
		}
	}
}
