package optimization_test

import (
	"strings"
	"testing"
)

// TestIDsAndTextsBounded: the plan's ids (fleet_id, a vehicle's
// vehicle_id and driver_id, a destination's destination_id and
// customer_id) follow the rule of every id of the API, at most 200
// characters and no control character, a place's address takes at most
// 500 characters as a trip's does, and delivery_notes at most 2000 as an
// incident's notes: past any, 400
// validation_failed naming each field, and no plan is made. Values at
// the bounds, counted as characters and not bytes, are taken.
func TestIDsAndTextsBounded(t *testing.T) {
	url := serve(t, nil)
	long := strings.Repeat("é", 201)
	for _, c := range []struct {
		field string
		set   func(b map[string]any)
	}{
		{"fleet_id", func(b map[string]any) { b["fleet_id"] = "f\x001" }},
		{"fleet_id", func(b map[string]any) { b["fleet_id"] = long }},
		{"vehicles[1].vehicle_id", func(b map[string]any) { vehicles(b)[1]["vehicle_id"] = "v\n2" }},
		{"vehicles[0].vehicle_id", func(b map[string]any) { vehicles(b)[0]["vehicle_id"] = long }},
		{"vehicles[0].driver_id", func(b map[string]any) { vehicles(b)[0]["driver_id"] = "d\u0085" }},
		{"destinations[2].destination_id", func(b map[string]any) { destinations(b)[2]["destination_id"] = long }},
		{"destinations[0].customer_id", func(b map[string]any) { destinations(b)[0]["customer_id"] = "c\x7f" }},
		{"destinations[3].customer_id", func(b map[string]any) { destinations(b)[3]["customer_id"] = long }},
	} {
		body := grid(4, 2, 10)
		c.set(body)
		st, res := post(t, url, body)
		e, _ := res["error"].(map[string]any)
		if st != 400 || e == nil || e["code"] != "validation_failed" {
			t.Errorf("%s: %d %v, want 400 validation_failed", c.field, st, res)
			continue
		}
		if d, _ := e["details"].(map[string]any); d[c.field] == nil || len(d) != 1 {
			t.Errorf("%s: details %v, want it alone named", c.field, d)
		}
	}
	body := placed()
	body["vehicles"].([]map[string]any)[0]["start_location"].(map[string]any)["address"] = strings.Repeat("a", 501)
	if st, res := post(t, url, body); st != 400 || res["error"].(map[string]any)["details"].(map[string]any)["vehicles[0].start_location.address"] == nil {
		t.Errorf("a 501-character address: %d %v", st, res)
	}
	body = grid(4, 2, 10)
	destinations(body)[1]["delivery_notes"] = strings.Repeat("n", 2001)
	if st, res := post(t, url, body); st != 400 || res["error"].(map[string]any)["details"].(map[string]any)["destinations[1].delivery_notes"] == nil {
		t.Errorf("2001 characters of delivery_notes: %d %v", st, res)
	}
	body = grid(4, 2, 10)
	ok := strings.Repeat("é", 200)
	destinations(body)[1]["delivery_notes"] = strings.Repeat("é", 2000)
	body["fleet_id"] = ok
	vehicles(body)[0]["vehicle_id"] = ok
	destinations(body)[0]["destination_id"] = ok
	destinations(body)[0]["customer_id"] = ok
	if st, res := post(t, url, body); st != 200 {
		t.Errorf("ids of 200 characters: %d %v", st, res)
	}
}

func vehicles(b map[string]any) []map[string]any     { return b["vehicles"].([]map[string]any) }
func destinations(b map[string]any) []map[string]any { return b["destinations"].([]map[string]any) }

// placed is a request whose places are coordinates: one vehicle, one
// destination, no road network (straight lines).
func placed() map[string]any {
	return map[string]any{
		"fleet_id":     "f1",
		"vehicles":     []map[string]any{{"vehicle_id": "v1", "start_location": map[string]any{"latitude": 40.0, "longitude": -83.0}}},
		"destinations": []map[string]any{{"destination_id": "x1", "location": map[string]any{"latitude": 40.01, "longitude": -83.01}}},
	}
}

// TestPlaceCoordinatesNamed: a place's missing or out-of-range
// coordinate is named by its own path (vehicles[0].start_location.latitude,
// destinations[1].location.longitude), as every other request of the API
// names a place's coordinates, with the same words; a destination without
// a place is named as required.
func TestPlaceCoordinatesNamed(t *testing.T) {
	url := serve(t, nil)
	body := placed()
	vehicles(body)[0]["start_location"] = map[string]any{"latitude": 91.0, "longitude": -83.0}
	vehicles(body)[0]["end_location"] = map[string]any{"latitude": 40.0}
	body["destinations"] = []map[string]any{
		{"destination_id": "x1", "location": map[string]any{"latitude": 40.01, "longitude": -181.0}},
		{"destination_id": "x2", "location": map[string]any{"longitude": -83.0}},
		{"destination_id": "x3"},
	}
	st, res := post(t, url, body)
	if st != 400 {
		t.Fatalf("%d %v", st, res)
	}
	want := map[string]any{
		"vehicles[0].start_location.latitude": "must be between -90 and 90",
		"vehicles[0].end_location.longitude":  "is required",
		"destinations[0].location.longitude":  "must be between -180 and 180",
		"destinations[1].location.latitude":   "is required",
		"destinations[2].location":            "is required",
	}
	got := res["error"].(map[string]any)["details"].(map[string]any)
	if len(got) != len(want) {
		t.Errorf("details %v, want %v", got, want)
	}
	for f, m := range want {
		if got[f] != m {
			t.Errorf("%s: %v, want %q", f, got[f], m)
		}
	}
}
