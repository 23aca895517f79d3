package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every integer query parameter is plain decimal digits: a plus sign, a
// leading zero, an exponent, a fraction or hexadecimal is refused naming
// the parameter (400 invalid_request, or the plain form on the plain-form
// routes), never read as the number strconv would make of it; a plain
// value is still taken.
func TestQueryIntegersArePlainDecimal(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for _, c := range []struct {
		path, param string
		ok          bool // path?param=5 answers 200
	}{
		{"/v1/trips?", "limit", true},
		{"/v1/trips/trip_x/route?", "geometry_precision", false},
		{"/v1/emergency/alerts?", "limit", true},
		{"/v1/emergency/incidents?", "limit", true},
		{"/v1/emergency/incidents?", "offset", true},
		{"/v1/contacts?", "limit", true},
		{"/v1/vehicles?", "limit", true},
		{"/api/v1/streaming/feed?", "limit", true},
		{"/api/v1/streaming/feed?", "wait", false},
		{"/api/v1/streaming/feed?", "last", true},
		{"/api/v1/streaming/streams?", "limit", true},
		{"/api/v1/streaming/events/correlations/s1?correlation_id=c1&", "limit", false},
		{"/api/v1/streaming/telemetry/deliveries/s1?", "limit", false},
		{"/api/v1/streaming/sse?stream_id=s1&", "last_offset", false},
	} {
		for _, v := range []string{"%2B5", "05", "1e1", "0x5", "5.0", "%205", "-5"} {
			path := c.path + c.param + "=" + v
			r := n.do("GET", path, k, nil)
			if r.Status != 400 || r.errCode(t) != "invalid_request" {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
				continue
			}
			d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
			if msg, _ := d[c.param].(string); !strings.HasPrefix(msg, "must be") {
				t.Errorf("%s: details %v, want %s refused", path, d, c.param)
			}
		}
		if path := c.path + c.param + "=5"; c.ok {
			if r := n.do("GET", path, k, nil); r.Status != 200 {
				t.Errorf("%s: %d %s", path, r.Status, r.Body)
			}
		}
	}
	// the plain-form routes refuse them in their own form
	for _, path := range []string{"/v1/search?q=main&limit=", "/v1/autocomplete?q=main&limit="} {
		for _, v := range []string{"%2B5", "05", "1e1"} {
			r := n.do("GET", path+v, k, nil)
			if msg, _ := r.json(t)["error"].(string); r.Status != 400 || !strings.HasPrefix(msg, "limit ") {
				t.Errorf("%s%s: %d %s", path, v, r.Status, r.Body)
			}
		}
		if r := n.do("GET", path+"5", k, nil); r.Status == 400 {
			t.Errorf("%s5: %d %s", path, r.Status, r.Body)
		}
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range doc.Paths["/v1/emergency/incidents"]["get"].Parameters {
		if (p.Name == "limit" || p.Name == "offset") && !strings.Contains(p.Description, "plain decimal digits") {
			t.Errorf("incidents %s: description %q does not say how it is written", p.Name, p.Description)
		}
	}
}
