package main

import (
	"context"
	"strings"
	"testing"
)

// TestKeysCreateRefusesZeroRPM: --rpm 0 is a rate, refused as out of
// range as rate_limit_rpm 0 is by POST /v1/api-keys, never read as "no
// --rpm" (the plan's rate); nothing is created. Left out, the plan's rate
// holds.
func TestKeysCreateRefusesZeroRPM(t *testing.T) {
	dir := t.TempDir()
	var out, errb strings.Builder
	code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "test", "--name", "z", "--permissions", "all", "--rpm", "0"}, &out, &errb)
	if code == 0 || out.Len() != 0 || !strings.Contains(errb.String(), "--rpm must be between 1 and 60000000") {
		t.Fatalf("--rpm 0: exit %d, stdout %q, stderr %q; want a refusal naming --rpm and no key", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "test", "--name", "z", "--permissions", "all"}, &out, &errb); code != 0 {
		t.Fatalf("without --rpm: exit %d: %s", code, errb.String())
	}
	cfg := testConfig(t)
	cfg.Data = dir
	n := startNode(t, cfg)
	key := strings.SplitN(out.String(), "\n", 2)[0]
	r := n.do("GET", "/v1/api-keys", key, nil)
	if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1000" {
		t.Fatalf("without --rpm: %d %v, want the test keys' 1000 per minute", r.Status, r.Header.Get("X-RateLimit-Limit"))
	}
	if keys := r.json(t)["api_keys"].([]any); len(keys) != 1 {
		t.Errorf("the refused --rpm 0 created a key: %d keys listed", len(keys))
	}
}

// TestKeysCreateRefusesZeroRPMFromEnv: FLEETHUB_RPM=0 is refused as
// --rpm 0 is.
func TestKeysCreateRefusesZeroRPMFromEnv(t *testing.T) {
	t.Setenv("FLEETHUB_RPM", "0")
	var out, errb strings.Builder
	code := run(context.Background(), []string{"keys", "create", "--data", t.TempDir(), "--org", "acme", "--env", "test", "--name", "z", "--permissions", "all"}, &out, &errb)
	if code == 0 || out.Len() != 0 || !strings.Contains(errb.String(), "--rpm must be between 1 and 60000000") {
		t.Fatalf("FLEETHUB_RPM=0: exit %d, stdout %q, stderr %q; want a refusal naming --rpm", code, out.String(), errb.String())
	}
}

// TestKeyCreateRefusesEmptyEnvironmentAndPlan: "environment": "" and
// "plan": "" are values outside their sets, refused (400 invalid_request
// naming the field and listing the values) and nothing is created, never
// read as left out (the caller's environment, no plan); left out or null
// they take the defaults.
func TestKeyCreateRefusesEmptyEnvironmentAndPlan(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")
	count := func() int {
		r := n.do("GET", "/v1/api-keys", admin, nil)
		return len(r.json(t)["api_keys"].([]any))
	}
	before := count()
	for field, want := range map[string]string{"environment": "must be one of test, live", "plan": "must be one of starter, professional, enterprise, custom"} {
		r := n.do("POST", "/v1/api-keys", admin, map[string]any{"name": "e", "permissions": []string{"trips:read"}, field: ""})
		if r.Status != 400 || r.errCode(t) != "invalid_request" || !strings.Contains(string(r.Body), `"`+field+`":"`+want) {
			t.Errorf("%s \"\": %d %s, want 400 invalid_request naming it", field, r.Status, r.Body)
		}
		r = n.do("POST", "/v1/api-keys", admin, map[string]any{"permissions": []string{"trips:read"}, field: ""})
		if r.Status != 400 || r.errCode(t) != "validation_failed" || !strings.Contains(string(r.Body), `"`+field+`":"`+want) || !strings.Contains(string(r.Body), `"name":"is required"`) {
			t.Errorf("%s \"\" beside a missing name: %d %s, want validation_failed naming both", field, r.Status, r.Body)
		}
	}
	if c := count(); c != before {
		t.Fatalf("refused requests created keys: %d listed, %d before", c, before)
	}
	for _, field := range []string{"environment", "plan"} {
		r := n.do("POST", "/v1/api-keys", admin, map[string]any{"name": "e", "permissions": []string{"trips:read"}, field: nil})
		if r.Status != 201 || r.json(t)["environment"] != "test" {
			t.Errorf("%s null: %d %s, want the default", field, r.Status, r.Body)
		}
	}
}
