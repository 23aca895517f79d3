package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestVehicleProfiles: a profile round-trips over HTTP, lists by fleet a
// page at a time, is 404 vehicle_not_found once deleted or from another
// organization or environment, and a bad value (a fleet_id holding a
// control character among them, as every id) is 400 naming its field.
func TestVehicleProfiles(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"fleet:read", "fleet:write"}, 100000)
	other := n.key("org-b", "test", []string{"fleet:read", "fleet:write"}, 100000)
	live := n.key("org-a", "live", []string{"fleet:read", "fleet:write"}, 100000)
	reader := n.key("org-a", "test", []string{"fleet:read"}, 100000)

	body := map[string]any{"fleet_id": "north", "name": "Truck 7", "vehicle_type": "truck", "fuel_type": "diesel",
		"fuel_consumption_l_per_100km": 31.5, "tank_capacity_liters": 400, "odometer_unit": "mi"}
	r := n.do("PUT", "/v1/vehicles/veh-7", k, body)
	if r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	put := r.json(t)
	g := n.do("GET", "/v1/vehicles/veh-7", reader, nil)
	if g.Status != 200 {
		t.Fatalf("get: %d %s", g.Status, g.Body)
	}
	got := g.json(t)
	for f, want := range map[string]any{"vehicle_id": "veh-7", "fleet_id": "north", "name": "Truck 7", "vehicle_type": "truck", "fuel_type": "diesel",
		"fuel_consumption_l_per_100km": 31.5, "tank_capacity_liters": 400.0, "odometer_unit": "mi", "created_at": put["created_at"]} {
		if got[f] != want {
			t.Errorf("%s: %v, want %v", f, got[f], want)
		}
	}
	if r := n.do("PUT", "/v1/vehicles/veh-7", reader, body); r.Status != 403 {
		t.Errorf("put with fleet:read only: %d", r.Status)
	}

	// another organization or environment sees none of it, and its own
	// vehicle of the same id is its own
	for name, key := range map[string]string{"another organization": other, "the live environment": live} {
		if r := n.do("GET", "/v1/vehicles/veh-7", key, nil); r.Status != 404 || r.errCode(t) != "vehicle_not_found" {
			t.Errorf("%s: get %d %s", name, r.Status, r.Body)
		}
		if r := n.do("DELETE", "/v1/vehicles/veh-7", key, nil); r.Status != 404 || r.errCode(t) != "vehicle_not_found" {
			t.Errorf("%s: delete %d %s", name, r.Status, r.Body)
		}
		if l := n.do("GET", "/v1/vehicles", key, nil).json(t); len(l["vehicles"].([]any)) != 0 {
			t.Errorf("%s lists %v", name, l["vehicles"])
		}
	}
	if r := n.do("PUT", "/v1/vehicles/veh-7", other, map[string]any{"fleet_id": "b-fleet"}); r.Status != 200 {
		t.Fatalf("org-b's own veh-7: %d %s", r.Status, r.Body)
	}
	if f := n.do("GET", "/v1/vehicles/veh-7", k, nil).json(t)["fleet_id"]; f != "north" {
		t.Errorf("org-a's veh-7 after org-b's put: fleet %v", f)
	}

	// listing by fleet, two at a time
	for i := range 5 {
		fleet := "north"
		if i%2 == 1 {
			fleet = "south"
		}
		if r := n.do("PUT", fmt.Sprintf("/v1/vehicles/veh-%d", i), k, map[string]any{"fleet_id": fleet}); r.Status != 200 {
			t.Fatalf("put veh-%d: %d %s", i, r.Status, r.Body)
		}
	}
	var north []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("listing does not end")
		}
		l := n.do("GET", "/v1/vehicles?fleet_id=north&limit=2"+cursor, reader, nil)
		if l.Status != 200 {
			t.Fatalf("list: %d %s", l.Status, l.Body)
		}
		page := l.json(t)
		for _, v := range page["vehicles"].([]any) {
			north = append(north, v.(map[string]any)["vehicle_id"].(string))
		}
		next, _ := page["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = "&cursor=" + next
	}
	if want := []string{"veh-0", "veh-2", "veh-4", "veh-7"}; !slices.Equal(north, want) {
		t.Errorf("fleet north: %v, want %v", north, want)
	}
	if l := n.do("GET", "/v1/vehicles", reader, nil).json(t); len(l["vehicles"].([]any)) != 6 {
		t.Errorf("every vehicle: %d, want 6", len(l["vehicles"].([]any)))
	}
	// a cursor this listing did not issue, also one that decodes (zzzz,
	// YWJj is "abc"), is refused, not read as a position
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "cursor=%25%25", "cursor=zzzz", "cursor=YWJj", "cursor=garbage"} {
		r := n.do("GET", "/v1/vehicles?"+q, reader, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("list ?%s: %d %s", q, r.Status, r.Body)
		}
		if q[:6] == "cursor" && !strings.Contains(string(r.Body), `"cursor":"is not a cursor of this listing"`) {
			t.Errorf("list ?%s: %s", q, r.Body)
		}
	}

	// bad values: 400 naming the field, and nothing changed
	for field, bad := range map[string]map[string]any{
		"fuel_consumption_l_per_100km":     {"fuel_type": "diesel", "fuel_consumption_l_per_100km": 0},
		"tank_capacity_liters":             {"fuel_type": "gasoline", "tank_capacity_liters": 1e6},
		"fuel_type":                        {"fuel_type": "steam"},
		"energy_consumption_kwh_per_100km": {"fuel_type": "diesel", "energy_consumption_kwh_per_100km": 20},
		"odometer_unit":                    {"odometer_unit": "furlong"},
		"vehicle_type":                     {"vehicle_type": "spaceship"},
		"fleet_id":                         {"fleet_id": "north\n2"},
	} {
		r := n.do("PUT", "/v1/vehicles/veh-7", k, bad)
		want := "validation_failed"
		switch field {
		case "fuel_type", "odometer_unit", "vehicle_type": // a value outside the field's set
			want = "invalid_request"
		}
		if r.Status != 400 || r.errCode(t) != want {
			t.Errorf("%s: %d %s", field, r.Status, r.Body)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[field] == nil {
			t.Errorf("%s not named: %s", field, r.Body)
		}
	}
	if r := n.do("PUT", "/v1/vehicles/veh-7", k, map[string]any{"fuel_consumption_l_per_100km": "eight"}); r.Status != 400 {
		t.Errorf("a string for a number: %d %s", r.Status, r.Body)
	}
	if g := n.do("GET", "/v1/vehicles/veh-7", k, nil).json(t); g["fuel_consumption_l_per_100km"] != 31.5 || g["fleet_id"] != "north" {
		t.Errorf("refused puts changed the profile: %v", g)
	}

	if r := n.do("DELETE", "/v1/vehicles/veh-7", k, nil); r.Status != 200 || r.json(t)["vehicle_id"] != "veh-7" {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/vehicles/veh-7", k, nil); r.Status != 404 || r.errCode(t) != "vehicle_not_found" {
		t.Errorf("get after delete: %d %s", r.Status, r.Body)
	}
	if r := n.do("DELETE", "/v1/vehicles/veh-7", k, nil); r.Status != 404 {
		t.Errorf("delete twice: %d", r.Status)
	}
	if f := n.do("GET", "/v1/vehicles/veh-7", other, nil).json(t)["fleet_id"]; f != "b-fleet" {
		t.Errorf("org-b's veh-7 after org-a's delete: fleet %v", f)
	}
}

// TestVehicleFleetLookup: the streaming core's look-up answers the fleet
// a PUT gave and none after the DELETE, at once on the node that served
// them.
func TestVehicleFleetLookup(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"fleet:read", "fleet:write"}, 100000)
	fleet := func() string {
		t.Helper()
		f, err := n.app.vehicles.Fleet(t.Context(), "org-a", "test", "veh-1")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := fleet(); f != "" {
		t.Fatalf("before any profile: %q", f)
	}
	if r := n.do("PUT", "/v1/vehicles/veh-1", k, map[string]any{"fleet_id": "north"}); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if f := fleet(); f != "north" {
		t.Fatalf("after the PUT: %q", f)
	}
	if r := n.do("DELETE", "/v1/vehicles/veh-1", k, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if f := fleet(); f != "" {
		t.Fatalf("after the DELETE: %q", f)
	}
}
