package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/apikey"
)

// Failed authentication is throttled per client address (issue 14, item
// 7): 3,000 unknown keys from one client used to be answered 401 each.
// Through a started node, after the documented budget of 20 failures the
// next ones are 429 too_many_failed_authentications with Retry-After, a
// revoked key counts as a failure, a valid key from the same address is
// still served, and nothing was created on the way.
func TestAuthFailureThrottleThroughNode(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := n.key("org-a", "test", []string{"all"}, 100000)
	c, err := n.app.keys.Create(context.Background(), keys.CreateRequest{Org: "org-a", Env: "test", Name: "victim", Permissions: []string{"trips:read"}, RPM: 100000})
	if err != nil {
		t.Fatal(err)
	}
	victim, victimID := c.Key, c.Record.ID
	before := n.do("GET", "/v1/api-keys", admin, nil)
	if before.Status != 200 {
		t.Fatalf("list keys: %d %s", before.Status, before.Body)
	}

	unknown, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		k := unknown
		if i%4 == 0 {
			k = "" // no key
		}
		if r := n.do("GET", "/v1/trips/health", k, nil); r.Status != 401 || r.Header.Get("Retry-After") != "" {
			t.Fatalf("failure %d: %d %s Retry-After %q, want 401", i, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	}
	for i, k := range []string{unknown, "", "fhk_test_nothex"} {
		r := n.do("GET", "/v1/trips/health", k, nil)
		if r.Status != 429 || r.errCode(t) != "too_many_failed_authentications" {
			t.Fatalf("throttled failure %d: %d %s, want 429 too_many_failed_authentications", i, r.Status, r.Body)
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Fatalf("throttled failure %d: Retry-After %q", i, r.Header.Get("Retry-After"))
		}
	}
	// a valid key from the throttled address is served
	if r := n.do("GET", "/v1/trips/health", victim, nil); r.Status != 200 {
		t.Fatalf("valid key while the address is throttled: %d %s", r.Status, r.Body)
	}
	// a revoked key is a failure too: 429 while throttled
	// nothing changed: the key listing is as it was
	if after := n.do("GET", "/v1/api-keys", admin, nil); after.Status != 200 || after.json(t)["count"] != before.json(t)["count"] {
		t.Fatalf("keys changed: before %s after %s", before.Body, after.Body)
	}
	if r := n.do("DELETE", "/v1/api-keys/"+victimID, admin, nil); r.Status/100 != 2 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/trips/health", victim, nil); r.Status != 429 || r.errCode(t) != "too_many_failed_authentications" {
		t.Fatalf("revoked key while throttled: %d %s", r.Status, r.Body)
	}
}
