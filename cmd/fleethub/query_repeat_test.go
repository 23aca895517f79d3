package main

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A query parameter given twice where the route takes one value is
// refused naming it, never read as its first value; a repeatable one (the
// feed's filters) is taken, and documented as an array.
func TestUnknownQueryRepeatedParameter(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for _, c := range []struct{ path, param string }{
		{"/v1/emergency/incidents?status=active&status=cancelled", "status"},
		{"/v1/contacts?role=driver&role=field_personnel", "role"},
		{"/v1/vehicles?limit=1&limit=500", "limit"},
		{"/v1/trips?vehicle_id=a&vehicle_id=b", "vehicle_id"},
	} {
		queryRefused(t, n, k, c.path, c.param, "must be given once")
	}
	// a parameter without a name is named quoted, never as nothing
	for _, path := range []string{"/v1/trips?=1", "/v1/vehicles?limit=5&=x", "/api/v1/streaming/feed?=1"} {
		queryRefused(t, n, k, path, `[""]`, "unknown parameter")
	}
	if r := n.do("GET", "/api/v1/streaming/feed?category=safety_events&category=geofence_events&severity=high&severity=low", k, nil); r.Status != 200 {
		t.Errorf("feed with repeated filters: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/feed?limit=5&limit=6", k, nil); r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Errorf("feed with limit twice: %d %s", r.Status, r.Body)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name    string         `json:"name"`
				Schema  map[string]any `json:"schema"`
				Explode bool           `json:"explode"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	types := map[string]any{}
	for _, p := range doc.Paths["/api/v1/streaming/feed"]["get"].Parameters {
		types[p.Name] = p.Schema["type"]
		if p.Name == "category" && !p.Explode {
			t.Errorf("feed category not exploded: %+v", p)
		}
	}
	if types["category"] != "array" || types["limit"] != "integer" {
		t.Errorf("feed parameter types: %v", types)
	}
}

// An identifier query parameter given empty or blank, or holding bytes no
// id is made of (invalid UTF-8, a control character), is refused naming
// it, never read as no filter or as a filter on a blank id; the list is
// unchanged for a real id, and an empty cursor is still the first page.
func TestBlankIdentifierQueryRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for _, c := range []struct{ path, param string }{
		{"/v1/trips?vehicle_id=", "vehicle_id"},
		{"/v1/trips?driver_id=%20%20", "driver_id"},
		{"/v1/emergency/incidents?driver_id=%09", "driver_id"},
		{"/v1/vehicles?fleet_id=", "fleet_id"},
	} {
		queryRefused(t, n, k, c.path, c.param, blankRefusal)
	}
	for _, c := range []struct{ path, param string }{
		{"/v1/trips?vehicle_id=%FF", "vehicle_id"},
		{"/v1/trips?driver_id=a%00b", "driver_id"},
		{"/v1/emergency/incidents?fleet_id=a%0Ab", "fleet_id"},
		{"/v1/contacts?vehicle_id=v%7F", "vehicle_id"},
	} {
		queryRefused(t, n, k, c.path, c.param, "must be UTF-8 text without control characters")
	}
	for _, path := range []string{"/v1/trips?vehicle_id=veh-1", "/v1/trips?vehicle_id=v%C3%A9h%201", "/v1/trips?cursor=", "/v1/vehicles?limit=5"} {
		if r := n.do("GET", path, k, nil); r.Status != 200 {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
}

// A query parameter of a fixed kind (one of a fixed set, a number, a
// boolean, a date) given empty or blank is refused naming it, on the
// general and the plain-form endpoints alike, never read as absent; an
// empty cursor is still the first page.
func TestEmptyQueryValueRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for _, c := range []struct{ path, param string }{
		{"/v1/emergency/incidents?status=", "status"},
		{"/v1/emergency/incidents?limit=", "limit"},
		{"/v1/emergency/incidents?offset=%20", "offset"},
		{"/v1/emergency/incidents?date_from=", "date_from"},
		{"/v1/emergency/alerts?status=", "status"},
		{"/v1/trips?sort=", "sort"},
		{"/v1/trips?limit=", "limit"},
		{"/v1/trips?include_analytics=", "include_analytics"},
		{"/v1/trips?start_date=", "start_date"},
		{"/v1/trips/trip_x/route?geometry_precision=", "geometry_precision"},
		{"/api/v1/streaming/ws?stream_id=s1&encoding=", "encoding"},
	} {
		queryRefused(t, n, k, c.path, c.param, blankRefusal)
	}
	for _, path := range []string{"/v1/organizations/org-a/trips/history?status=", "/v1/search?q=main&limit="} {
		r := n.do("GET", path, k, nil)
		if r.Status != 400 || r.json(t)["success"] != false || r.json(t)["error"] == nil {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	for _, path := range []string{"/v1/trips?cursor=", "/v1/emergency/alerts?cursor=", "/v1/emergency/incidents?status=active&limit=5"} {
		if r := n.do("GET", path, k, nil); r.Status != 200 {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
}

// queryRefused asserts that GET path is 400 invalid_request whose details
// name param alone, with msg.
func queryRefused(t *testing.T, n *node, k, path, param, msg string) {
	t.Helper()
	r := n.do("GET", path, k, nil)
	if r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Errorf("%s: %d %s", path, r.Status, r.Body)
		return
	}
	d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	if want := map[string]any{param: msg}; fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("%s: details %v, want %v", path, d, want)
	}
}
