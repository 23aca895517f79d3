package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestErrorsCarryTheGeneralForm: every error of the general form holds
// error.code, error.message and error.details (an object, empty when the
// error has nothing to add) and request_id, the X-Request-Id the answer
// carries: an unknown path, a method a path does not take, a missing key,
// a missing permission, a missing record, a refused transition, a body of
// another type, malformed JSON, a websocket upgrade to a missing stream.
func TestErrorsCarryTheGeneralForm(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	narrow := n.key("org-a", "test", []string{"trips:read"}, 100000)
	for _, c := range []struct {
		method, path, key string
		body              any
		hdr               []string
		status            int
	}{
		{"GET", "/v1/nowhere", k, nil, nil, 404},
		{"DELETE", "/v1/routing/sources_to_targets", k, nil, nil, 405},
		{"GET", "/v1/trips", "", nil, nil, 401},
		{"POST", "/v1/routing/sources_to_targets", narrow, map[string]any{}, nil, 403},
		{"GET", "/api/v1/fleet/optimization/opt_missing", k, nil, nil, 404},
		{"GET", "/v1/trips/trip_missing", k, nil, nil, 404},
		{"POST", "/v1/trips", k, "{}", []string{"Content-Type", "text/plain"}, 415},
		{"POST", "/v1/trips", k, "{", nil, 400},
		{"GET", "/api/v1/streaming/ws?stream_id=str_missing", k, nil, nil, 404},
	} {
		r := n.do(c.method, c.path, c.key, c.body, c.hdr...)
		var e struct {
			Error     map[string]json.RawMessage `json:"error"`
			RequestID string                     `json:"request_id"`
		}
		if err := json.Unmarshal(r.Body, &e); err != nil || r.Status != c.status {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
			continue
		}
		for _, f := range []string{"code", "message", "details"} {
			if v, ok := e.Error[f]; !ok || string(v) == "null" {
				t.Errorf("%s %s: error.%s missing: %s", c.method, c.path, f, r.Body)
			}
		}
		if e.RequestID == "" || e.RequestID != r.Header.Get("X-Request-Id") {
			t.Errorf("%s %s: request_id %q, X-Request-Id %q", c.method, c.path, e.RequestID, r.Header.Get("X-Request-Id"))
		}
	}
}

// TestPlainPathsAnswerRouterErrorsPlain: on the plain-form endpoints
// (organization history, geocoding, tiles) a request no route takes, a
// method the path does not take (405) or a path beneath one (404), is
// answered in the plain form {success:false, error} as the endpoint's
// own errors are, with or without a key and once the key's budget is
// spent (429); paths of the general-form endpoints keep the general form.
func TestPlainPathsAnswerRouterErrorsPlain(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	plain := func(what string, r resp, status int) {
		t.Helper()
		var b map[string]any
		if err := json.Unmarshal(r.Body, &b); err != nil || r.Status != status || b["success"] != false {
			t.Errorf("%s: %d %s, want %d in the plain form", what, r.Status, r.Body, status)
			return
		}
		if msg, _ := b["error"].(string); msg == "" || len(b) != 2 {
			t.Errorf("%s: %s, want {success:false, error:<string>}", what, r.Body)
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", what)
		}
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/v1/organizations/org-a/trips/history", 405},
		{"DELETE", "/v1/search?q=main", 405},
		{"PUT", "/v1/autocomplete", 405},
		{"POST", "/v1/validate", 405},
		{"DELETE", "/v1/api/tiles/buildings/metadata", 405},
		{"POST", "/v1/api/tiles/buildings/1/2/3.mvt", 405},
		{"GET", "/v1/search/extra", 404},
		{"GET", "/v1/organizations/org-a/trips/history/x", 404},
		{"GET", "/v1/api/tiles/buildings/metadata/x", 404},
		{"GET", "/v1/api/tiles/buildings/1/2/3.png", 404},
	} {
		for _, key := range []string{k, ""} {
			r := n.do(c.method, c.path, key, nil)
			plain(fmt.Sprintf("%s %s (key %t)", c.method, c.path, key != ""), r, c.status)
			if c.status == 405 && r.Header.Get("Allow") == "" {
				t.Errorf("%s %s: 405 without Allow", c.method, c.path)
			}
		}
	}
	for _, c := range []struct{ method, path string }{
		{"DELETE", "/v1/trips"}, {"GET", "/v1/searches"}, {"GET", "/v1/organizations/org-a/trips"}, {"GET", "/v1/api/tiles/buildings/1/2"},
	} {
		r := n.do(c.method, c.path, k, nil)
		if r.Status < 400 || r.errCode(t) == "" || r.json(t)["request_id"] == nil {
			t.Errorf("%s %s: %d %s, want the general form", c.method, c.path, r.Status, r.Body)
		}
	}
	spent := n.key("org-a", "test", []string{"all"}, 1)
	for r := n.do("GET", "/v1/trips/health", spent, nil); r.Status != 429; r = n.do("GET", "/v1/trips/health", spent, nil) {
		if r.Status != 200 {
			t.Fatalf("spending the budget: %d %s", r.Status, r.Body)
		}
	}
	r := n.do("POST", "/v1/search", spent, nil)
	plain("POST /v1/search with the budget spent", r, 429)
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After: %v", r.Header)
	}
}
