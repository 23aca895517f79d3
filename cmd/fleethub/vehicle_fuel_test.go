package main

import (
	"math"
	"testing"
	"time"
)

// TestTripFuelFromVehicleProfiles: over HTTP, the same route costs two
// vehicles the fuel of their own profiles, a vehicle without a profile
// the default model's, and each answer names the model it used.
func TestTripFuelFromVehicleProfiles(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read", "trips:write", "locations:write", "fleet:read", "fleet:write"}, 100000)
	for id, b := range map[string]map[string]any{
		"truck": {"fuel_type": "diesel", "fuel_consumption_l_per_100km": 30},
		"car":   {"fuel_type": "gasoline", "fuel_consumption_l_per_100km": 6},
	} {
		if r := n.do("PUT", "/v1/vehicles/"+id, k, b); r.Status != 200 {
			t.Fatalf("profile %s: %d %s", id, r.Status, r.Body)
		}
	}
	t0 := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	fuel := map[string]map[string]any{}
	for _, v := range []string{"truck", "car", "van"} {
		id := n.startTrip(k, v, t0)
		if r := n.batch(k, id, track(t0, 40, -83, constant(60, 360))); r.Status != 200 {
			t.Fatalf("%s batch: %d %s", v, r.Status, r.Body)
		}
		r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{})
		if r.Status != 200 {
			t.Fatalf("%s stop: %d %s", v, r.Status, r.Body)
		}
		a := r.json(t)["analytics"].(map[string]any)
		fuel[v] = a["fuel_efficiency"].(map[string]any)
		fuel[v]["distance_km"] = a["distance_km"]
	}
	for v, want := range map[string]struct {
		per100 float64
		model  string
	}{"truck": {30, "vehicle_profile"}, "car": {6, "vehicle_profile"}, "van": {8, "default"}} {
		f := fuel[v]
		if got, exp := f["fuel_consumed_liters"].(float64), want.per100/100*f["distance_km"].(float64); math.Abs(got-exp) > 0.005 {
			t.Errorf("%s: %v L over %v km, want %v (%v L/100 km)", v, got, f["distance_km"], exp, want.per100)
		}
		if f["fuel_model"] != want.model || f["fuel_source"] != "model" {
			t.Errorf("%s: fuel_model %v, fuel_source %v; want %s, model", v, f["fuel_model"], f["fuel_source"], want.model)
		}
	}
	if fuel["truck"]["fuel_type"] != "diesel" || fuel["van"]["fuel_type"] != nil {
		t.Errorf("fuel types: truck %v, van %v", fuel["truck"]["fuel_type"], fuel["van"]["fuel_type"])
	}
}

// TestTripReadingsFromTheStop: a trip starts with the readings its
// vehicle's previous trip was stopped with; stopped with its own, it
// reports the odometer's difference as its distance (the GPS distance
// beside it) and the fuel level's drop times the tank as its fuel.
func TestTripReadingsFromTheStop(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read", "trips:write", "locations:write", "fleet:read", "fleet:write"}, 100000)
	if r := n.do("PUT", "/v1/vehicles/van-1", k, map[string]any{"fuel_type": "diesel", "fuel_consumption_l_per_100km": 9, "tank_capacity_liters": 50}); r.Status != 200 {
		t.Fatalf("profile: %d %s", r.Status, r.Body)
	}
	t0 := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	first := n.startTrip(k, "van-1", t0)
	n.batch(k, first, track(t0, 40, -83, constant(60, 60)))
	if r := n.do("POST", "/v1/trips/"+first+"/stop", k, map[string]any{"odometer_reading": 5000, "fuel_level_percent": 60}); r.Status != 200 {
		t.Fatalf("first stop: %d %s", r.Status, r.Body)
	}
	// the next trip starts now; its points run up to two minutes ahead,
	// within the five the service accepts
	t1 := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	second := n.startTrip(k, "van-1", t1)
	if r := n.batch(k, second, track(t1.Add(time.Second), 40.01, -83, constant(60, 120))); r.Status != 200 || r.json(t)["processed_count"] != 120.0 {
		t.Fatalf("second batch: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/v1/trips/"+second+"/stop", k, map[string]any{"odometer_reading": 5002, "fuel_level_percent": 58})
	if r.Status != 200 {
		t.Fatalf("second stop: %d %s", r.Status, r.Body)
	}
	for _, b := range []map[string]any{r.json(t), n.do("GET", "/v1/trips/"+second, k, nil).json(t)} {
		if b["start_odometer_reading"] != 5000.0 || b["start_fuel_level_percent"] != 60.0 {
			t.Errorf("start readings: %v, %v; want the first stop's 5000 and 60", b["start_odometer_reading"], b["start_fuel_level_percent"])
		}
		a := b["analytics"].(map[string]any)
		if a["distance_source"] != "odometer" || a["distance_km"] != 2.0 || a["odometer_distance_km"] != 2.0 || math.Abs(a["gps_distance_km"].(float64)-2) > 0.05 {
			t.Errorf("distance: %v", a)
		}
		f := a["fuel_efficiency"].(map[string]any)
		if f["fuel_source"] != "fuel_level" || f["fuel_consumed_liters"] != 1.0 || f["fuel_efficiency_kmpl"] != 2.0 || f["fuel_model"] != "vehicle_profile" {
			t.Errorf("fuel: %v; want 1 L from the levels (2 %% of 50 L), 2 km/L", f)
		}
	}
	if l := n.do("GET", "/v1/trips?vehicle_id=van-1", k, nil).json(t); num(l, "summary_stats.total_distance_km") < 2 {
		t.Errorf("listing's total distance: %v", l["summary_stats"])
	}
}
