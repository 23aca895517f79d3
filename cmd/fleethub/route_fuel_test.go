package main

import (
	"math"
	"testing"
	"time"
)

// TestRouteFuelFollowsTheVehicle: the route data's fuel figures are the
// vehicle's: a diesel truck of 30 L/100 km idles at 3 L/h, so its idling
// and its congestion cost what that burns; an electric vehicle burns no
// fuel, so its fuel efficiency has no rating, its congestion no fuel
// cost, and idling is no fuel saving to suggest.
func TestRouteFuelFollowsTheVehicle(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for v, body := range map[string]map[string]any{
		"truck-30": {"fuel_type": "diesel", "fuel_consumption_l_per_100km": 30},
		"ev-18":    {"fuel_type": "electric", "energy_consumption_kwh_per_100km": 18},
	} {
		if r := n.do("PUT", "/v1/vehicles/"+v, k, body); r.Status != 200 {
			t.Fatalf("profile %s: %d %s", v, r.Status, r.Body)
		}
	}
	// 400 s idling, a gentle start, 4 minutes at 50 km/h, 90 s crawling
	// at 10, 4 more minutes at 50
	speeds := constant(0, 400)
	for v := 2.0; v < 50; v += 2 {
		speeds = append(speeds, v)
	}
	speeds = append(speeds, constant(50, 240)...)
	speeds = append(speeds, constant(10, 90)...)
	speeds = append(speeds, constant(50, 240)...)
	t0 := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	route := map[string]map[string]any{}
	for _, v := range []string{"truck-30", "ev-18"} {
		id := n.startTrip(k, v, t0)
		if r := n.batch(k, id, track(t0, 40, -83, speeds)); r.Status != 200 {
			t.Fatalf("batch: %d %s", r.Status, r.Body)
		}
		route[v] = n.do("GET", "/v1/trips/"+id+"/route?include_traffic_data=true", k, nil).json(t)
	}

	truck := route["truck-30"]
	ta := truck["traffic_analysis"].(map[string]any)
	delay := ta["traffic_delay_minutes"].(float64)
	if delay <= 0 {
		t.Fatalf("no congestion found: %v", ta)
	}
	if c, want := ta["fuel_cost_impact_usd"].(float64), delay/60*3*1.05; math.Abs(c-want) > 0.006 {
		t.Errorf("truck fuel_cost_impact_usd %v, want %.3f (3 L/h)", c, want)
	}
	var idle map[string]any
	for _, s := range truck["optimization_suggestions"].([]any) {
		if s := s.(map[string]any); s["type"] == "reduce_idling" {
			idle = s["potential_savings"].(map[string]any)
		}
	}
	if idle == nil || math.Abs(idle["fuel_liters"].(float64)-400.0/3600*3) > 0.011 {
		t.Errorf("truck idling savings %v, want about 0.33 L (400 s at 3 L/h)", idle)
	}

	ev := route["ev-18"]
	if r := ev["route_analytics"].(map[string]any)["fuel_efficiency_rating"]; r != "unknown" {
		t.Errorf("electric vehicle fuel_efficiency_rating %v", r)
	}
	if c := ev["traffic_analysis"].(map[string]any)["fuel_cost_impact_usd"]; c != 0.0 {
		t.Errorf("electric vehicle fuel_cost_impact_usd %v", c)
	}
	for _, s := range ev["optimization_suggestions"].([]any) {
		if s.(map[string]any)["type"] == "reduce_idling" {
			t.Errorf("electric vehicle told to idle less to save fuel: %v", s)
		}
	}
}
