package main

import (
	"strings"
	"testing"
)

// TestOtherCharsetRefused: a JSON body sent with a charset other than
// utf-8 (case aside, quoted or not) is 415 unsupported_media_type naming
// the charset, on every route that takes a body (those decoding with
// Bind and those checking the type themselves), and nothing is created;
// charset=utf-8 in any case, quoted, is taken.
func TestOtherCharsetRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{})
	if r.Status != 201 {
		t.Fatalf("events start: %d %s", r.Status, r.Body)
	}
	stream := r.json(t)["stream_id"].(string)
	routes := []struct{ method, path, body string }{
		{"POST", "/v1/api-keys", `{"name":"x","permissions":["trips:read"]}`},
		{"POST", "/v1/trips", `{"vehicle_id":"veh-1"}`},
		{"PUT", "/v1/vehicles/veh-1", `{"name":"Van"}`},
		{"POST", "/v1/locations/batch", `{"trip_id":"t","locations":[]}`},
		{"POST", "/v1/locations/single", `{"trip_id":"t"}`},
		{"POST", "/v1/telemetry", `{"messages":[]}`},
		{"POST", "/v1/events", `{"events":[]}`},
		{"POST", "/api/v1/streaming/telemetry/start", `{"data_types":["gps_enhanced"]}`},
		{"PUT", "/api/v1/streaming/events/configure/" + stream, `{"state":"paused"}`},
		{"PUT", "/v1/devices/dev-1/settings", `{}`},
		{"POST", "/v1/routing/sources_to_targets", `{}`},
	}
	for _, ct := range []struct{ header, charset string }{
		{"application/json; charset=latin1", `"latin1"`},
		{"application/json;charset=ISO-8859-1", `"ISO-8859-1"`},
		{`application/json; Charset="utf-16"`, `"utf-16"`},
		{"application/problem+json; charset=us-ascii", `"us-ascii"`},
		{"application/json; charset=", `""`},
	} {
		for _, rt := range routes {
			r := n.do(rt.method, rt.path, k, rt.body, "Content-Type", ct.header)
			if r.Status != 415 || r.errCode(t) != "unsupported_media_type" {
				t.Errorf("%s %s with %q: %d %.300s, want 415 unsupported_media_type", rt.method, rt.path, ct.header, r.Status, r.Body)
				continue
			}
			if msg, _ := r.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "charset "+ct.charset) {
				t.Errorf("%s %s with %q: message %q does not name charset %s", rt.method, rt.path, ct.header, msg, ct.charset)
			}
		}
	}
	if l := n.do("GET", "/v1/trips", k, nil).json(t)["trips"].([]any); len(l) != 0 {
		t.Errorf("refused bodies started %d trips", len(l))
	}
	if r := n.do("GET", "/v1/vehicles/veh-1", k, nil); r.Status != 404 {
		t.Errorf("a refused vehicle profile was stored: %d", r.Status)
	}
	for _, ct := range []string{"application/json; charset=utf-8", `application/json; charset="UTF-8"`, "APPLICATION/JSON;CHARSET=Utf-8", "application/json"} {
		if r := n.do("POST", "/v1/trips", k, `{"vehicle_id":"veh-1"}`, "Content-Type", ct); r.Status != 201 {
			t.Errorf("start with %q: %d %s", ct, r.Status, r.Body)
		}
		if r := n.do("POST", "/v1/trips/"+n.do("GET", "/v1/trips", k, nil).json(t)["trips"].([]any)[0].(map[string]any)["trip_id"].(string)+"/stop", k, `{}`, "Content-Type", ct); r.Status != 200 {
			t.Errorf("stop with %q: %d %s", ct, r.Status, r.Body)
		}
	}
}
