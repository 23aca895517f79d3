package main

import (
	"fmt"
	"testing"
)

func TestFleetOptimization(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"fleet:read", "fleet:write"}, 100000)
	depot := map[string]any{"latitude": 39.96, "longitude": -83.0}
	var dests []map[string]any
	for i := 0; i < 12; i++ {
		dests = append(dests, map[string]any{"destination_id": fmt.Sprintf("d%d", i),
			"location":              map[string]any{"latitude": 39.96 + float64(i%4)*0.01, "longitude": -83.0 + float64(i/4)*0.01},
			"delivery_requirements": map[string]any{"weight": 100, "packages": 2},
			"time_window":           map[string]any{"earliest": "08:00", "latest": "17:00", "service_duration": 10}})
	}
	body := map[string]any{"fleet_id": "f1", "destinations": dests, "vehicles": []map[string]any{
		{"vehicle_id": "t1", "start_location": depot, "capacity": map[string]any{"weight": 700}, "shift_start": "08:00", "shift_end": "17:00"},
		{"vehicle_id": "t2", "start_location": depot, "capacity": map[string]any{"weight": 700}, "shift_start": "08:00", "shift_end": "17:00"}}}
	r := n.do("POST", "/api/v1/fleet/optimization/routes", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	routes := d["optimized_routes"].([]any)
	served := map[string]bool{}
	for _, rt := range routes {
		w := 0.0
		for _, s := range rt.(map[string]any)["route_sequence"].([]any) {
			if s.(map[string]any)["activity_type"] != "delivery" {
				continue
			}
			id := s.(map[string]any)["destination_id"].(string)
			if served[id] {
				t.Fatalf("%s served twice", id)
			}
			served[id] = true
			w += 100
		}
		if w > 700 {
			t.Errorf("route %v carries %v kg over capacity 700", rt.(map[string]any)["vehicle_id"], w)
		}
	}
	if len(served) != 12 {
		t.Errorf("served %d of 12", len(served))
	}
	if un := d["unassigned_destinations"].([]any); len(un) != 0 {
		t.Errorf("unassigned %v", un)
	}
	// One that fits no truck is refused, naming it.
	body["destinations"] = append(dests, map[string]any{"destination_id": "huge", "location": depot, "delivery_requirements": map[string]any{"weight": 5000}})
	if r := n.do("POST", "/api/v1/fleet/optimization/routes", k, body); r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Errorf("a destination no vehicle can serve: %d %s", r.Status, r.Body)
	}
	id := d["optimization_id"].(string)
	if g := n.do("GET", "/api/v1/fleet/optimization/"+id, k, nil).json(t); g["data"].(map[string]any)["status"] != "completed" {
		t.Errorf("get %v", g)
	}
	if r := n.do("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, nil); r.Status != 200 || r.json(t)["data"].(map[string]any)["status"] != "applied" {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	if r := n.do("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, nil); r.Status != 409 {
		t.Errorf("apply twice: %d", r.Status)
	}
	if r := n.do("GET", "/api/v1/fleet/optimization/"+id, n.key("org-b", "test", []string{"fleet:read"}, 1000), nil); r.Status != 404 || r.errCode(t) != "optimization_not_found" {
		t.Errorf("another org: %d", r.Status)
	}
	bad := map[string]any{"fleet_id": "f1", "vehicles": []map[string]any{{"vehicle_id": "t1", "start_location": depot, "shift_start": "25:00"}},
		"destinations": []map[string]any{{"destination_id": "x", "location": map[string]any{"latitude": 99, "longitude": 0}, "priority": "asap"}}}
	r = n.do("POST", "/api/v1/fleet/optimization/routes", k, bad)
	det := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for _, f := range []string{"vehicles[0].shift_start", "destinations[0].location", "destinations[0].priority"} {
		if det[f] == nil {
			t.Errorf("details lack %s: %v", f, det)
		}
	}
}
