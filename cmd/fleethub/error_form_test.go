package main

import (
	"encoding/json"
	"testing"
)

// TestErrorsCarryTheGeneralForm: every error of the general form holds
// error.code, error.message and error.details (an object, empty when the
// error has nothing to add) and request_id, the X-Request-Id the answer
// carries: an unknown path, a method a path does not take, a missing key,
// a missing permission, a missing record, a refused transition, a body of
// another type, malformed JSON.
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
