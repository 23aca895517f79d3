package optimization_test

import "testing"

// TestDriverIDNull: a route's driver_id, in optimized_routes and in the
// runner-up plans, is the vehicle's as sent, null when it has none.
func TestDriverIDNull(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	body := line([]float64{0, 1, -1, 2, -2}, map[string]int{"a": 0, "b": 0})
	for _, v := range body["vehicles"].([]map[string]any) {
		v["capacity"] = map[string]any{"weight": 2}
	}
	byID(body, "vehicles", "vehicle_id", "a")["driver_id"] = "drv-a"
	body["options"].(map[string]any)["alternatives"] = 2
	data := plan(t, url, body)
	want := map[any]any{"a": "drv-a", "b": nil}
	routes := data["optimized_routes"].([]any)
	if len(routes) != 2 {
		t.Fatalf("routes %v", routes)
	}
	check := func(r map[string]any) {
		if d, ok := r["driver_id"]; !ok || d != want[r["vehicle_id"]] {
			t.Errorf("%v: driver_id %v (present %v), want %v", r["vehicle_id"], d, ok, want[r["vehicle_id"]])
		}
	}
	for _, r := range routes {
		check(r.(map[string]any))
	}
	alts, _ := data["alternative_plans"].([]any)
	for _, p := range alts {
		for _, r := range p.(map[string]any)["routes"].([]any) {
			check(r.(map[string]any))
		}
	}
}
