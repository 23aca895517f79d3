package main

import (
	"context"
	"testing"
	"time"
)

// A body that is not a JSON object where an object is expected is 400
// invalid_request, and nothing is started (issue 14, item 5): null used
// to be taken as {}, a stream with no filters at all.
func TestNonObjectBodyRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, path := range []string{"/api/v1/streaming/events/start", "/api/v1/streaming/telemetry/start"} {
		for _, body := range []string{`null`, ` null `, `[]`, `[{}]`, `"x"`, `1`, `true`} {
			r := n.do("POST", path, k, body)
			if r.Status != 400 || r.errCode(t) != "invalid_request" {
				t.Errorf("%s %s: %d %s", path, body, r.Status, r.Body)
			}
		}
	}
	ss, err := n.app.store.ListStreams(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 0 {
		t.Errorf("%d streams started by non-object bodies", len(ss))
	}
	if r := n.do("POST", "/api/v1/streaming/events/start", k, `{}`); r.Status != 201 {
		t.Errorf("{} still starts a stream: %d %s", r.Status, r.Body)
	}
}
