package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
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
	// One that fits no truck is left unassigned, naming why and what
	// would help; the others are planned.
	body["destinations"] = append(dests, map[string]any{"destination_id": "huge", "location": depot, "delivery_requirements": map[string]any{"weight": 5000}})
	body["options"] = map[string]any{"time_limit_seconds": 0.2}
	if r := n.do("POST", "/api/v1/fleet/optimization/routes", k, body); r.Status != 200 {
		t.Errorf("a destination no vehicle can serve: %d %s", r.Status, r.Body)
	} else if un := r.json(t)["data"].(map[string]any)["unassigned_destinations"].([]any); len(un) != 1 ||
		un[0].(map[string]any)["destination_id"] != "huge" || un[0].(map[string]any)["reason"] != "capacity" {
		t.Errorf("a destination no vehicle can serve: unassigned %v", un)
	}
	delete(body, "options")
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
	for _, f := range []string{"vehicles[0].shift_start", "destinations[0].location.latitude", "destinations[0].priority"} {
		if det[f] == nil {
			t.Errorf("details lack %s: %v", f, det)
		}
	}
}

// TestApplyRunnerUp: an optimization asked for two runner-up plans is
// applied with its first runner-up plan: the answer names it, and the
// route_assigned events on the feed carry that plan's routes, not the
// chosen plan's. A plan number beyond the runner-ups, and an unknown
// field, are refused by name and apply nothing.
func TestApplyRunnerUp(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	depot := map[string]any{"latitude": 39.96, "longitude": -83.0}
	var dests []map[string]any
	for i := 0; i < 8; i++ {
		dests = append(dests, map[string]any{"destination_id": fmt.Sprintf("d%d", i),
			"location": map[string]any{"latitude": 39.96 + float64(i%4)*0.01, "longitude": -83.0 + float64(i/4)*0.01}})
	}
	body := map[string]any{"fleet_id": "f1", "destinations": dests, "options": map[string]any{"alternatives": 2, "seed": 1},
		"vehicles": []map[string]any{{"vehicle_id": "t1", "driver_id": "drv-1", "start_location": depot}, {"vehicle_id": "t2", "driver_id": "drv-2", "start_location": depot}}}
	r := n.do("POST", "/api/v1/fleet/optimization/routes", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	plans, _ := d["alternative_plans"].([]any)
	if len(plans) == 0 {
		t.Fatalf("no runner-up plan: %s", r.Body)
	}
	id := d["optimization_id"].(string)
	for _, bad := range []map[string]any{{"plan": len(plans) + 1}, {"plan": -1}, {"plan_id": 1}} {
		r := n.do("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, bad)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("apply %v: %d %s", bad, r.Status, r.Body)
		}
	}
	r = n.do("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, map[string]any{"plan": 1})
	if r.Status != 200 {
		t.Fatalf("apply plan 1: %d %s", r.Status, r.Body)
	}
	if a := r.json(t)["data"].(map[string]any); a["status"] != "applied" || a["applied_plan"] != 1.0 {
		t.Errorf("applied %v, plan %v", a["status"], a["applied_plan"])
	}
	want := map[string]string{}
	for _, rt := range plans[0].(map[string]any)["routes"].([]any) {
		m := rt.(map[string]any)
		want[m["vehicle_id"].(string)] = fmt.Sprint(m["destination_ids"])
	}
	var p feedPage
	waitfor.Until(t, 10*time.Second, "the runner-up plan's assignments on the feed", func() bool {
		p = n.pull(t, k, "types=events&event_type=route_assigned")
		return len(p.Entries) >= len(want)
	})
	got := map[string]string{}
	for _, e := range p.Entries {
		var ev struct {
			Source struct {
				VehicleID string `json:"vehicle_id"`
			} `json:"source"`
			EventData map[string]any `json:"event_data"`
		}
		if err := json.Unmarshal(e.Message, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.EventData["plan"] != 1.0 {
			t.Errorf("assignment of plan %v", ev.EventData["plan"])
		}
		got[ev.Source.VehicleID] = fmt.Sprint(ev.EventData["stops"])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("assignments %v, runner-up plan 1 %v", got, want)
	}
}
