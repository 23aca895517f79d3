package main

import (
	"testing"
	"time"
)

// TestHealthActiveTripsScoped: GET /v1/trips/health shows cross-organization
// active trip figures only to a key holding "all"; every other key, however
// many other permissions it holds, sees its own organization and
// environment's.
func TestHealthActiveTripsScoped(t *testing.T) {
	n := startNode(t, testConfig(t))
	start := time.Now().Add(-10 * time.Minute)
	writerA := n.key("org-a", "live", []string{"trips:write"}, 0)
	writerATest := n.key("org-a", "test", []string{"trips:write"}, 0)
	writerB := n.key("org-b", "live", []string{"trips:write"}, 0)
	n.startTrip(writerA, "veh-a1", start)
	n.startTrip(writerA, "veh-a2", start)
	n.startTrip(writerATest, "veh-at", start)
	n.startTrip(writerB, "veh-b1", start)

	for _, c := range []struct {
		name        string
		key         string
		total, orgs float64
	}{
		{"org A live, trips:read", n.key("org-a", "live", []string{"trips:read"}, 0), 2, 1},
		{"org A live, every permission but all", n.key("org-a", "live", []string{"trips:read", "trips:write", "analytics:read", "fleet:read", "keys:manage", "streams:manage"}, 0), 2, 1},
		{"org A test", n.key("org-a", "test", []string{"trips:read"}, 0), 1, 1},
		{"org B live", n.key("org-b", "live", []string{"trips:read"}, 0), 1, 1},
		{"org C, no trips", n.key("org-c", "live", []string{"trips:read"}, 0), 0, 0},
		{"admin: all", n.key("org-c", "live", []string{"all"}, 0), 4, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := n.do("GET", "/v1/trips/health", c.key, nil)
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			at, ok := r.json(t)["active_trips"].(map[string]any)
			if !ok {
				t.Fatalf("no active_trips: %s", r.Body)
			}
			if at["total_count"] != c.total || at["organization_count"] != c.orgs {
				t.Errorf("active_trips = %v; want total_count %v, organization_count %v", at, c.total, c.orgs)
			}
			if avg, ok := at["avg_duration_minutes"]; c.total > 0 && (!ok || avg == nil || avg.(float64) < 9) {
				t.Errorf("avg_duration_minutes = %v; want about 10", avg)
			} else if c.total == 0 && (!ok || avg != nil) {
				t.Errorf("avg_duration_minutes of no open trip = %v; want null", at["avg_duration_minutes"])
			}
		})
	}
	// The admin answer, cached, never leaks into a scoped one.
	if r := n.do("GET", "/v1/trips/health", n.key("org-b", "live", []string{"trips:read"}, 0), nil); r.json(t)["active_trips"].(map[string]any)["total_count"] != 1.0 {
		t.Errorf("org B after the admin call: %s", r.Body)
	}
}
