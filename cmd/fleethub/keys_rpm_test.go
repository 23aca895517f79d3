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
