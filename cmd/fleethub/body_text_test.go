package main

import (
	"strings"
	"testing"
	"time"
)

// TestBodyMustBeUnicodeText: a JSON body holding bytes that are not UTF-8,
// or a \u escape of half a surrogate pair, is 400 invalid_request naming
// the body, on every route whichever way it decodes its body (the general
// decoder, the upload and ingest decoders, the device settings'), and
// nothing is created: the service never stores U+FFFD in place of what was
// sent. A surrogate pair, and an escaped backslash before a u, are text
// and taken as sent; a body that is not JSON keeps its 415.
func TestBodyMustBeUnicodeText(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 1_000_000)
	trip := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-ok"}).json(t)["trip_id"].(string)
	now := time.Now().UTC().Format(time.RFC3339)
	for _, c := range []struct{ path, method, body string }{
		{"/v1/trips", "POST", "{\"vehicle_id\":\"veh\xff\"}"},
		{"/v1/trips", "POST", "{\"vehicle_id\":\"veh\xc3\"}"},
		{"/v1/trips", "POST", `{"vehicle_id":"veh\ud800"}`},
		{"/v1/trips", "POST", `{"vehicle_id":"veh\uDC00x"}`},
		{"/v1/trips", "POST", `{"vehicle_id":"veh\ud83d\u0041"}`},
		{"/v1/locations/batch", "POST", `{"trip_id":"` + trip + `","locations":[{"latitude":40,"longitude":-83,"timestamp":"` + now + "\"}],\"device_info\":{\"device_id\":\"d\xfe\"}}"},
		{"/v1/locations/single", "POST", `{"trip_id":"` + trip + `","latitude":40,"longitude":-83,"timestamp":"` + now + `","device_info":{"device_id":"d\udbff"}}`},
		{"/v1/telemetry", "POST", `{"messages":[{"timestamp":"` + now + "\",\"vehicle_id\":\"v\x80\",\"data_type\":\"environmental\",\"data\":{\"cabin\":{\"temp\":21}}}]}"},
		{"/v1/devices/dev-1/settings", "PUT", "{\"connectivity\":{\"preferred_network\":\"4g_lte\xff\"}}"},
	} {
		r := n.do(c.method, c.path, k, []byte(c.body))
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s %s %q: %d %s, want 400 invalid_request", c.method, c.path, c.body, r.Status, r.Body)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["body"] == nil {
			t.Errorf("%s %q: details %v do not name the body", c.path, c.body, d)
		}
	}
	if l := n.do("GET", "/v1/trips", k, nil).json(t)["trips"].([]any); len(l) != 1 {
		t.Errorf("refused bodies left %d trips, want the one started", len(l))
	}
	if a := n.do("GET", "/v1/trips/"+trip, k, nil).json(t)["analytics"].(map[string]any); a["locations_count"] != 0.0 {
		t.Errorf("refused uploads stored %v points", a["locations_count"])
	}
	if r := n.do("GET", "/v1/devices/dev-1/settings", k, nil); r.Status != 404 {
		t.Errorf("a refused settings body was applied: %d %s", r.Status, r.Body)
	}
	for body, want := range map[string]string{
		`{"vehicle_id":"veh-\ud83d\ude9a"}`: "veh-\U0001F69A",
		`{"vehicle_id":"veh-\\ud800"}`:      `veh-\ud800`,
		`{"vehicle_id":"v\"\\\u00e9"}`:      "v\"\\é",
	} {
		r := n.do("POST", "/v1/trips", k, []byte(body))
		if r.Status != 201 || r.json(t)["vehicle_id"] != want {
			t.Errorf("%s: %d %s, want 201 with vehicle_id %q", body, r.Status, r.Body, want)
		}
	}
	r := n.do("POST", "/v1/trips", k, []byte("{\"vehicle_id\":\"veh\xff\"}"), "Content-Type", "text/plain")
	if r.Status != 415 {
		t.Errorf("a text/plain body: %d %s, want 415", r.Status, r.Body)
	}
	if !strings.Contains(string(n.do("POST", "/v1/trips", k, []byte(`{"vehicle_id":"veh\udfff"}`)).Body), "offset 18") {
		t.Errorf("the refusal does not give the offset of the escape")
	}
}
