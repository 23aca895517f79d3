package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/keys"
)

// keyWith creates a key with a plan, straight through the service (as the
// bootstrap command does), and returns the secret and the id.
func (n *node) keyWith(org, env, plan string, rpm int, perms ...string) (secret, id string) {
	n.t.Helper()
	c, err := n.app.keys.Create(context.Background(), keys.CreateRequest{Org: org, Env: env, Name: "esc", Permissions: perms, Plan: plan, RPM: rpm})
	if err != nil {
		n.t.Fatalf("create key: %v", err)
	}
	return c.Key, c.Record.ID
}

// keyState lists a scope's keys as "id status permissions" lines, as seen
// by an all key of that scope: what an attack must leave unchanged.
func keyState(t *testing.T, n *node, lister string) []string {
	t.Helper()
	r := n.do("GET", "/v1/api-keys", lister, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var out []string
	for _, k := range r.json(t)["api_keys"].([]any) {
		m := k.(map[string]any)
		var perms []string
		for _, p := range m["permissions"].([]any) {
			perms = append(perms, p.(string))
		}
		out = append(out, m["id"].(string)+" "+m["status"].(string)+" "+m["plan"].(string)+" "+strings.Join(perms, ","))
	}
	slices.Sort(out)
	return out
}

func TestKeyEscalationRefused(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxBodyBytes = 4 << 20 // room for the 100,000-entry lists
	n := startNode(t, cfg)
	rootLive, _ := n.keyWith("org-a", "live", "enterprise", 0, "all")
	rootTest, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")
	// a manager on the enterprise plan meets every rule but the plan's;
	// keys on other plans cannot create keys through the API at all
	manager, _ := n.keyWith("org-a", "live", "enterprise", 0, "keys:manage")
	starter, _ := n.keyWith("org-a", "live", "starter", 0, "all")
	professional, _ := n.keyWith("org-a", "live", "professional", 0, "all")
	custom, _ := n.keyWith("org-a", "live", "custom", 5000, "all")
	testDefault, _ := n.keyWith("org-a", "test", "", 0, "all")
	_, allID := n.keyWith("org-a", "live", "enterprise", 0, "all")
	_, readerID := n.keyWith("org-a", "live", "starter", 0, "trips:read")
	testAdmin, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")

	type attack struct {
		name, key, method, path string
		body                    any
		status                  int
		code, detail, mention   string
	}
	perms := func(p ...string) map[string]any { return map[string]any{"name": "x", "permissions": p} }
	with := func(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }
	repeated := make([]string, 100_000)
	for i := range repeated {
		repeated[i] = "bogus:perm"
	}
	attacks := []attack{
		{"revoke an all key", manager, "DELETE", "/v1/api-keys/" + allID, nil, 403, "insufficient_permissions", "required_permission", "all"},
		{"revoke a key holding more", manager, "DELETE", "/v1/api-keys/" + readerID, nil, 403, "insufficient_permissions", "required_permission", "trips:read"},
		{"grant all", manager, "POST", "/v1/api-keys", perms("all"), 403, "insufficient_permissions", "required_permission", "all"},
		{"grant unheld", manager, "POST", "/v1/api-keys", perms("keys:manage", "fleet:write"), 403, "insufficient_permissions", "required_permission", "fleet:write"},
		{"starter plan creates", starter, "POST", "/v1/api-keys", with(perms("trips:read"), "rate_limit_rpm", 10), 403, "insufficient_permissions", "plan", "enterprise"},
		{"professional plan creates", professional, "POST", "/v1/api-keys", perms("trips:read"), 403, "insufficient_permissions", "plan", "enterprise"},
		{"custom plan creates", custom, "POST", "/v1/api-keys", perms("trips:read"), 403, "insufficient_permissions", "plan", "enterprise"},
		{"test default plan creates", testDefault, "POST", "/v1/api-keys", perms("trips:read"), 403, "insufficient_permissions", "plan", "enterprise"},
		{"starter plan, bad body", starter, "POST", "/v1/api-keys", perms("bogus:perm"), 400, "invalid_request", "permissions[0]", "bogus:perm"},
		{"rpm above own", manager, "POST", "/v1/api-keys", with(perms("keys:manage"), "rate_limit_rpm", 100_000), 403, "insufficient_permissions", "rate_limit_rpm", "100000"},
		{"custom plan rpm above own", manager, "POST", "/v1/api-keys", with(with(perms("keys:manage"), "plan", "custom"), "rate_limit_rpm", 2001), 403, "insufficient_permissions", "rate_limit_rpm", "2001"},
		{"test key creates live", testAdmin, "POST", "/v1/api-keys", with(perms("all"), "environment", "live"), 403, "insufficient_permissions", "environment", "live"},
		{"test key revokes live", testAdmin, "DELETE", "/v1/api-keys/" + readerID, nil, 404, "key_not_found", "", ""},
		{"unknown permission", manager, "POST", "/v1/api-keys", perms("bogus:perm"), 400, "invalid_request", "permissions[0]", "bogus:perm"},
		{"unknown beside held", manager, "POST", "/v1/api-keys", perms("keys:manage", "bogus:perm"), 400, "invalid_request", "permissions[1]", "bogus:perm"},
		{"100,000 unknown", manager, "POST", "/v1/api-keys", perms(repeated...), 400, "invalid_request", "permissions[0]", "bogus:perm"},
		{"repeated permission", manager, "POST", "/v1/api-keys", perms("keys:manage", "keys:manage"), 400, "validation_failed", "permissions[1]", "given twice"},
		{"organization_id", manager, "POST", "/v1/api-keys", with(perms("keys:manage"), "organization_id", "org-b"), 400, "validation_failed", "organization_id", "organization_id"},
		{"id", manager, "POST", "/v1/api-keys", with(perms("keys:manage"), "id", "key_mine"), 400, "validation_failed", "id", "id"},
		{"created_at", manager, "POST", "/v1/api-keys", with(perms("keys:manage"), "created_at", "2020-01-01T00:00:00Z"), 400, "validation_failed", "created_at", "created_at"},
		{"unknown field", manager, "POST", "/v1/api-keys", with(perms("keys:manage"), "admin", true), 400, "validation_failed", "admin", "admin"},
	}
	beforeLive, beforeTest := keyState(t, n, rootLive), keyState(t, n, rootTest)
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := n.do(a.method, a.path, a.key, a.body)
			if r.Status != a.status || r.errCode(t) != a.code {
				t.Fatalf("%d %.300s, want %d %s", r.Status, r.Body, a.status, a.code)
			}
			if a.detail != "" {
				d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
				if _, ok := d[a.detail]; !ok {
					t.Fatalf("details %v lack %s", d, a.detail)
				}
				if len(d) > 11 {
					t.Errorf("details has %d entries", len(d))
				}
			}
			if a.mention != "" && !strings.Contains(string(r.Body), a.mention) {
				t.Errorf("body %.300s does not name %q", r.Body, a.mention)
			}
			if len(r.Body) > 4096 {
				t.Errorf("answer of %d bytes", len(r.Body))
			}
		})
	}
	if after := keyState(t, n, rootLive); !slices.Equal(after, beforeLive) {
		t.Errorf("live keys changed:\n%v\n%v", beforeLive, after)
	}
	if after := keyState(t, n, rootTest); !slices.Equal(after, beforeTest) {
		t.Errorf("test keys changed:\n%v\n%v", beforeTest, after)
	}
}

func TestKeyGrantWithinOwn(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxBodyBytes = 4 << 20 // room for the 100,000-entry lists
	n := startNode(t, cfg)
	rootLive, _ := n.keyWith("org-a", "live", "enterprise", 0, "all")
	manager, _ := n.keyWith("org-a", "live", "enterprise", 0, "keys:manage", "trips:read")
	testAdmin, _ := n.keyWith("org-a", "test", "", 0, "all")
	_, readerID := n.keyWith("org-a", "live", "starter", 0, "trips:read")

	// 100,000 repeats of a held permission are refused, the repeat named
	// once, and nothing is stored
	repeated := make([]string, 100_000)
	for i := range repeated {
		repeated[i] = "trips:read"
	}
	before := keyState(t, n, rootLive)
	r := n.do("POST", "/v1/api-keys", manager, map[string]any{"name": "ci", "permissions": append(repeated, "keys:manage", "trips:read"), "plan": "professional", "rate_limit_rpm": 500})
	if r.Status != 400 || r.errCode(t) != "validation_failed" ||
		fmt.Sprint(r.json(t)["error"].(map[string]any)["details"]) != "map[permissions[1]:is given twice]" {
		t.Fatalf("100,000 repeats: %d %.300s", r.Status, r.Body)
	}
	if after := keyState(t, n, rootLive); !slices.Equal(after, before) {
		t.Errorf("a refused create changed the keys:\n%v\n%v", before, after)
	}
	r = n.do("POST", "/v1/api-keys", manager, map[string]any{"name": "ci", "permissions": []string{"trips:read", "keys:manage"}, "plan": "professional", "rate_limit_rpm": 500})
	if r.Status != 201 {
		t.Fatalf("create: %d %.300s", r.Status, r.Body)
	}
	m := r.json(t)
	if got := m["permissions"].([]any); len(got) != 2 || got[0] != "trips:read" || got[1] != "keys:manage" {
		t.Errorf("permissions %v, want [trips:read keys:manage]", got)
	}
	if m["plan"] != "professional" || m["rate_limit_rpm"].(float64) != 500 || m["organization_id"] != "org-a" || m["environment"] != "live" {
		t.Errorf("created %.300s", r.Body)
	}
	for _, k := range keyState(t, n, rootLive) {
		if strings.HasPrefix(k, m["id"].(string)+" ") && k != m["id"].(string)+" active professional trips:read,keys:manage" {
			t.Errorf("stored %q", k)
		}
	}
	// a lower plan and a live key making a test key are fine; the live
	// key lists the test key it made and may revoke it
	r = n.do("POST", "/v1/api-keys", manager, map[string]any{"name": "t", "permissions": []string{"trips:read"}, "plan": "starter", "environment": "test"})
	if r.Status != 201 || r.json(t)["environment"] != "test" {
		t.Fatalf("lower plan, test env: %d %.300s", r.Status, r.Body)
	}
	madeTest, madeSecret := r.json(t)["id"].(string), r.json(t)["key"].(string)
	if l := n.do("GET", "/v1/api-keys", manager, nil); !strings.Contains(string(l.Body), madeTest) {
		t.Errorf("the live key does not list the test key it made: %.300s", l.Body)
	}
	if r := n.do("DELETE", "/v1/api-keys/"+madeTest, manager, nil); r.Status != 200 || r.json(t)["status"] != "revoked" || r.json(t)["environment"] != "test" {
		t.Errorf("the live key revoking the test key it made: %d %.300s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/trips", madeSecret, nil); r.Status != 401 {
		t.Errorf("the revoked test key still answers: %d", r.Status)
	}
	// a key holding what the target holds may revoke it
	if r := n.do("DELETE", "/v1/api-keys/"+readerID, manager, nil); r.Status != 200 || r.json(t)["status"] != "revoked" {
		t.Errorf("revoke within own: %d %.300s", r.Status, r.Body)
	}
	// a test key lists only test keys, never live ones
	l := n.do("GET", "/v1/api-keys", testAdmin, nil)
	for _, k := range l.json(t)["api_keys"].([]any) {
		if env := k.(map[string]any)["environment"]; env != "test" {
			t.Errorf("test key sees a %v key: %.300s", env, l.Body)
		}
	}
	if strings.Contains(string(l.Body), readerID) || strings.Contains(string(l.Body), `"live"`) {
		t.Errorf("test listing shows live keys: %.300s", l.Body)
	}
}
