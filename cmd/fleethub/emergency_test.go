package main

import (
	"testing"
	"time"
)

func TestIncidents(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	readOnly := n.key("org-a", "test", []string{"emergency:read"}, 100000)
	t0 := time.Now().Add(-5 * time.Minute).UTC()
	trip := n.startTrip(k, "veh-x", t0)
	n.batch(k, trip, track(t0, 40, -83, constant(72, 30)))
	r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "crash", "severity_level": "critical",
		"location": map[string]any{"latitude": 40.01, "longitude": -83.0, "address": "I-70"}, "vehicle_id": "veh-x", "driver_id": "d-veh-x", "trip_id": trip, "fleet_id": "f1"})
	if r.Status != 201 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	in := r.json(t)
	id := in["incident_id"].(string)
	if in["status"] != "active" || in["crash_analysis"].(map[string]any)["estimated_speed_at_impact"] != 72.0 || len(in["timeline"].([]any)) < 2 {
		t.Errorf("incident %s", r.Body)
	}
	if r := n.do("POST", "/v1/emergency/incidents", readOnly, map[string]any{}); r.Status != 403 {
		t.Errorf("read-only key reports: %d", r.Status)
	}
	if r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "meteor", "severity_level": "low", "location": map[string]any{"latitude": 91, "longitude": 0}}); r.Status != 400 {
		t.Errorf("bad report: %d", r.Status)
	}
	if r := n.do("GET", "/v1/emergency/incidents/"+id, other, nil); r.Status != 404 || r.errCode(t) != "incident_not_found" {
		t.Errorf("another org: %d %s", r.Status, r.Body)
	}
	r = n.do("PUT", "/v1/emergency/incidents/"+id+"/status", k, map[string]any{"status": "escalated", "notes": "no answer from driver"})
	if r.Status != 200 || r.json(t)["status"] != "escalated" {
		t.Fatalf("escalate: %d %s", r.Status, r.Body)
	}
	r = n.do("PUT", "/v1/emergency/incidents/"+id+"/status", k, map[string]any{"status": "resolved", "resolution_type": "emergency_services_resolved", "updated_by": "dispatcher-7"})
	res := r.json(t)
	ups := res["status_updates"].([]any)
	if r.Status != 200 || len(ups) != 3 || ups[2].(map[string]any)["updated_by"] != "dispatcher-7" {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	if r := n.do("PUT", "/v1/emergency/incidents/"+id+"/status", k, map[string]any{"status": "active"}); r.Status != 409 || r.errCode(t) != "invalid_state_transition" {
		t.Errorf("reopen resolved: %d %s", r.Status, r.Body)
	}
	n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "low", "location": map[string]any{"latitude": 40, "longitude": -83}})
	l := n.do("GET", "/v1/emergency/incidents?limit=1", k, nil).json(t)
	p := l["pagination"].(map[string]any)
	if p["total_count"] != 2.0 || p["has_more"] != true || len(l["incidents"].([]any)) != 1 {
		t.Errorf("list %v", p)
	}
	if l := n.do("GET", "/v1/emergency/incidents?event_type=crash&status=resolved", k, nil).json(t); l["pagination"].(map[string]any)["total_count"] != 1.0 {
		t.Errorf("filtered list %v", l["pagination"])
	}
	if r := n.do("GET", "/v1/emergency/incidents?severity=apocalyptic", k, nil); r.Status != 400 {
		t.Errorf("bad filter: %d", r.Status)
	}
	if l := n.do("GET", "/v1/emergency/incidents", other, nil).json(t); l["pagination"].(map[string]any)["total_count"] != 0.0 {
		t.Errorf("another org lists %v", l["pagination"])
	}
}
