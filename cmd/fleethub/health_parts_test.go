package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHealthEmbeddedBus: the embedded bus is reported as its directory
// and writes show it: healthy, degraded once its directory takes no new
// file (the service with it), healthy again once it does.
func TestHealthEmbeddedBus(t *testing.T) {
	cfg := testConfig(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"trips:read"}, 0)
	if got := n.dependency(k, "bus"); got != "healthy" {
		t.Fatalf("bus at start: %q", got)
	}
	dir := filepath.Join(cfg.Data, "bus")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	n.app.health.Invalidate() // as 10 s passing: the report is cached
	r := n.do("GET", "/v1/trips/health", k, nil)
	h := r.json(t)
	if deps := h["dependencies"].(map[string]any); deps["bus"] != "degraded" || h["status"] == "healthy" {
		t.Fatalf("with the bus directory gone: %s", r.Body)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n.app.health.Invalidate()
	if got := n.dependency(k, "bus"); got != "healthy" {
		t.Fatalf("bus with its directory back: %q", got)
	}
}

// TestHealthMemoryCache: without Redis the cache is this node's memory,
// reported by a probe through the limiter.
func TestHealthMemoryCache(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read"}, 0)
	if got := n.dependency(k, "cache"); got != "healthy" {
		t.Fatalf("cache: %q", got)
	}
	if got := n.dependency(k, "redis"); got != "" {
		t.Fatalf("a redis entry without --redis-url: %q", got)
	}
}
