package main

import (
	"strconv"
	"strings"
	"testing"
)

// A request a key makes is counted against it and answered with its
// X-RateLimit-* headers whatever the answer: a 403 for a permission the
// key lacks, a 404 for no endpoint, a 405 for a method the path does not
// take. Without a verified key those answers carry none.
func TestRateLimitHeadersOnRefusals(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read"}, 60)
	remaining := func(what string, r resp) int {
		t.Helper()
		if r.Header.Get("X-RateLimit-Limit") != "60" || r.Header.Get("X-RateLimit-Window") != "60" || r.Header.Get("X-RateLimit-Reset") == "" {
			t.Errorf("%s: %d, rate-limit headers %v", what, r.Status, r.Header)
		}
		v, err := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
		if err != nil {
			t.Errorf("%s: X-RateLimit-Remaining %q", what, r.Header.Get("X-RateLimit-Remaining"))
		}
		return v
	}
	first := remaining("first", n.do("GET", "/v1/trips/health", k, nil))
	last := first
	for _, c := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"POST", "/v1/trips", 403, "insufficient_permissions"},
		{"GET", "/v1/nothing", 404, "not_found"},
		{"DELETE", "/v1/trips", 405, "method_not_allowed"},
	} {
		for range 5 {
			r := n.do(c.method, c.path, k, map[string]any{"vehicle_id": "veh-1"})
			if r.Status != c.status || r.errCode(t) != c.code {
				t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
			}
			last = remaining(c.method+" "+c.path, r)
		}
	}
	// the 15 refusals are counted: the budget went down by more than the
	// bucket refilled meanwhile
	if first-last < 10 {
		t.Errorf("remaining %d after 15 refusals, %d before: not counted", last, first)
	}
	unknown := "fhk_test_" + strings.Repeat("ab", 32)
	for _, key := range []string{"", unknown} {
		r := n.do("GET", "/v1/nothing", key, nil)
		if r.Status != 404 || r.Header.Get("X-RateLimit-Limit") != "" {
			t.Errorf("no endpoint, key %q: %d, headers %v", key, r.Status, r.Header)
		}
	}
}
