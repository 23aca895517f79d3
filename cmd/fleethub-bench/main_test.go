package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRunArguments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"none", nil, 2, "", "usage: fleethub-bench"},
		{"help", []string{"help"}, 0, "usage: fleethub-bench", ""},
		{"unknown generator", []string{"nope"}, 2, "", `unknown generator "nope"`},
		{"unknown flag", []string{"ingest", "--nope"}, 2, "", "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Fatalf("stdout %q, stderr %q; want %q and %q", stdout.String(), stderr.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

// The broker prints its address list and stops with the context.
func TestRunBroker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"broker", "--port", "0"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if addr := strings.TrimSpace(stdout.String()); !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("broker printed %q, want 127.0.0.1:port", addr)
	}
}
