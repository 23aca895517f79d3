package main

import (
	"math"
	"testing"
	"time"
)

// TestAlternativesAgainstTheTrack: the alternative routes run from the
// trip's first point to its last, so they are measured against the track
// between them, also when the trip's distance is its odometer's (which
// counts what was driven before the first point and after the last, in
// whole units). 204 m up Main Street, stopped with 2 km more on the
// odometer, drove no farther than the quickest route: no 1.8 km of
// savings, an efficiency of 1 and no distance difference.
func TestAlternativesAgainstTheTrack(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	first := n.startTrip(k, "veh-odo", time.Now().Add(-time.Hour))
	if r := n.do("POST", "/v1/trips/"+first+"/stop", k, map[string]any{"odometer_reading": 100}); r.Status != 200 {
		t.Fatalf("stop the first trip: %d %s", r.Status, r.Body)
	}
	t0 := time.Now().Add(time.Second)
	id := n.startTrip(k, "veh-odo", t0)
	if r := n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": id, "locations": track(t0.Add(time.Second), 40, -83, constant(15, 50))}); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"odometer_reading": 102})
	if r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	if a := r.json(t)["analytics"].(map[string]any); a["distance_source"] != "odometer" || a["distance_km"] != 2.0 {
		t.Fatalf("the trip's distance is not the odometer's 2 km: %v", a)
	}
	rt := n.do("GET", "/v1/trips/"+id+"/route?include_alternatives=true", k, nil)
	if rt.Status != 200 {
		t.Fatalf("route: %d %s", rt.Status, rt.Body)
	}
	alts, _ := rt.json(t)["alternative_routes"].([]any)
	if len(alts) == 0 {
		t.Fatalf("no alternative routes: %s", rt.Body)
	}
	fast := alts[0].(map[string]any)
	if fast["route_id"] != "quickest_free_flow" || math.Abs(fast["distance_km"].(float64)-0.204) > 0.01 {
		t.Fatalf("quickest route %v", fast)
	}
	if s := fast["fuel_savings_liters"].(float64); math.Abs(s) > 0.002 {
		t.Errorf("fuel_savings_liters %v, want about 0: the track is the quickest route", s)
	}
	if e := fast["efficiency_score"].(float64); e < 0.95 {
		t.Errorf("efficiency_score %v, want about 1", e)
	}
	if d := fast["trade_offs"].(map[string]any)["distance_difference_km"].(float64); math.Abs(d) > 0.01 {
		t.Errorf("distance_difference_km %v, want about 0", d)
	}
}
