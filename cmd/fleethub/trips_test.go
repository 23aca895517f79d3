package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// track generates points at 1 Hz from a speed profile (km/h per second),
// heading north from (lat, lon), starting at t0.
func track(t0 time.Time, lat, lon float64, speeds []float64) []map[string]any {
	out := make([]map[string]any, 0, len(speeds))
	for i, v := range speeds {
		out = append(out, map[string]any{"latitude": lat, "longitude": lon, "timestamp": t0.Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano),
			"speed_kmh": v, "heading": 0.0, "accuracy_meters": 4.0})
		lat += v / 3.6 / 111195.0
	}
	return out
}

func constant(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func (n *node) startTrip(key, vehicle string, start time.Time) string {
	n.t.Helper()
	r := n.do("POST", "/v1/trips", key, map[string]any{"vehicle_id": vehicle, "driver_id": "d-" + vehicle, "start_time": start.Format(time.RFC3339Nano),
		"start_location": map[string]any{"latitude": 40.0, "longitude": -83.0, "address": "Columbus"}, "metadata": map[string]any{"purpose": "delivery"}})
	if r.Status != 201 {
		n.t.Fatalf("start trip: %d %s", r.Status, r.Body)
	}
	return r.json(n.t)["trip_id"].(string)
}

func (n *node) batch(key, trip string, pts []map[string]any) resp {
	n.t.Helper()
	return n.do("POST", "/v1/locations/batch", key, map[string]any{"trip_id": trip, "locations": pts, "device_info": map[string]any{"device_id": "dev-1"}})
}

func num(m map[string]any, path string) float64 {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		cur = cur.(map[string]any)[p]
	}
	f, _ := cur.(float64)
	return f
}

func TestTripLifecycle(t *testing.T) {
	clk := &clock{}
	cfg := testConfig(t)
	cfg.Now = clk.now
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"trips:read", "trips:write", "locations:write"}, 100000)
	t0 := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-1", t0)
	if r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-1"}); r.Status != 409 || r.errCode(t) != "trip_already_active" {
		t.Fatalf("second active trip: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{}); r.Status != 409 || r.errCode(t) != "invalid_state_transition" {
		t.Fatalf("resume active: %d %s", r.Status, r.Body)
	}
	// 10 minutes at 36 km/h: 6 km
	r := n.batch(k, id, track(t0, 40, -83, constant(36, 600)))
	if r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	b := r.json(t)
	if b["processed_count"].(float64) != 600 || b["rejected_count"].(float64) != 0 {
		t.Fatalf("counts: %s", r.Body)
	}
	if d := num(b, "trip_analytics.current_distance_km"); math.Abs(d-5.99) > 0.1 {
		t.Errorf("distance %v, want about 6 km", d)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/pause", k, map[string]any{"reason": "fuel"}); r.Status != 200 || r.json(t)["status"] != "paused" {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	if r := n.batch(k, id, track(t0.Add(20*time.Minute), 40.1, -83, constant(36, 5))); r.Status != 409 {
		t.Fatalf("upload to paused trip: %d %s", r.Status, r.Body)
	}
	clk.advance(1100 * time.Millisecond) // the pause lasts 1.1 s on the trip service's clock
	r = n.do("POST", "/v1/trips/"+id+"/resume", k, map[string]any{"location": map[string]any{"latitude": 40.0540, "longitude": -83.0}, "reason": "fueled"})
	if r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	rs := r.json(t)
	if rs["status"] != "active" || rs["pause_count"].(float64) != 1 || rs["total_pause_duration"].(float64) < 1 || rs["success"] != true {
		t.Errorf("resume: %s", r.Body)
	}
	if rs["resumed_at"] == nil || rs["resume_location"] == nil || rs["message"] == "" {
		t.Errorf("resume fields: %s", r.Body)
	}
	// a place without one of its coordinates is refused, never stored at 0
	r = n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"end_location": map[string]any{"latitude": 40.03}})
	if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); r.Status != 400 || r.errCode(t) != "validation_failed" || d["end_location.longitude"] != "is required" {
		t.Fatalf("stop with an end_location without longitude: %d %s", r.Status, r.Body)
	}
	if g := n.do("GET", "/v1/trips/"+id, k, nil).json(t); g["status"] != "active" || g["end_location"] != nil {
		t.Fatalf("after the refused stop: status %v, end_location %v", g["status"], g["end_location"])
	}
	r = n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"odometer_reading": 48213, "fuel_level_percent": 61.5})
	if r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	st := r.json(t)
	// the stop's readings are kept with the trip, not only echoed
	if g := n.do("GET", "/v1/trips/"+id, k, nil).json(t); g["odometer_reading"] != 48213.0 || g["fuel_level_percent"] != 61.5 {
		t.Errorf("trip after a stop with readings: odometer %v, fuel %v", g["odometer_reading"], g["fuel_level_percent"])
	}
	if st["status"] != "completed" || st["end_time"] == nil || st["end_location"] == nil {
		t.Fatalf("stop: %s", r.Body)
	}
	if num(st, "analytics.distance_km") < 5.8 || num(st, "analytics.locations_count") != 600 {
		t.Errorf("final analytics: %s", r.Body)
	}
	for _, f := range []string{"safety_score", "eco_score", "harsh_events", "fuel_efficiency", "duration_minutes", "max_speed_kmh", "avg_speed_kmh", "idle_time_minutes", "events_count"} {
		if _, ok := st["analytics"].(map[string]any)[f]; !ok {
			t.Errorf("analytics lacks %s", f)
		}
	}
	if r := n.do("POST", "/v1/trips/"+id+"/stop", k, nil); r.Status != 409 {
		t.Fatalf("stop twice: %d", r.Status)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/pause", k, nil); r.Status != 409 {
		t.Fatalf("pause completed: %d", r.Status)
	}
	// the vehicle may start a new trip now
	n.startTrip(k, "veh-1", time.Now().UTC())
	g := n.do("GET", "/v1/trips/"+id, k, nil).json(t)
	if g["status"] != "completed" || g["metadata"].(map[string]any)["purpose"] != "delivery" {
		t.Errorf("get: %v", g)
	}
}

func TestStopPausedTripAndCompletionStatus(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read", "trips:write", "locations:write"}, 100000)
	id := n.startTrip(k, "veh-2", time.Now().Add(-time.Hour))
	n.do("POST", "/v1/trips/"+id+"/pause", k, nil)
	r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"completion_status": "interrupted", "end_location": map[string]any{"latitude": 1, "longitude": 2}})
	if r.Status != 200 || r.json(t)["status"] != "interrupted" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	g := n.do("GET", "/v1/trips/"+id, k, nil).json(t)
	if g["paused_at"] != nil || g["total_pause_duration"].(float64) < 0 || g["pause_count"].(float64) != 1 {
		t.Errorf("pause not closed at stop: %v", g)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"completion_status": "done"}); r.Status != 400 {
		t.Errorf("bad completion_status: %d", r.Status)
	}
}

func TestTripScope(t *testing.T) {
	n := startNode(t, testConfig(t))
	a := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	live := n.key("org-a", "live", []string{"all"}, 100000)
	id := n.startTrip(a, "veh-1", time.Now().Add(-time.Minute))
	missing := n.do("GET", "/v1/trips/trip_doesnotexist", a, nil)
	for _, k := range []string{other, live} {
		r := n.do("GET", "/v1/trips/"+id, k, nil)
		if r.Status != 404 || r.errCode(t) != "trip_not_found" {
			t.Fatalf("foreign trip: %d %s", r.Status, r.Body)
		}
		var m1, m2 = r.json(t)["error"].(map[string]any)["message"], missing.json(t)["error"].(map[string]any)["message"]
		if m1 != m2 {
			t.Errorf("foreign and missing differ: %v vs %v", m1, m2)
		}
		if r := n.batch(k, id, track(time.Now(), 1, 1, constant(10, 2))); r.Status != 404 {
			t.Errorf("upload to foreign trip: %d", r.Status)
		}
		if c := n.do("GET", "/v1/trips", k, nil).json(t)["pagination"].(map[string]any)["total_count"].(float64); c != 0 {
			t.Errorf("foreign listing shows %v trips", c)
		}
	}
	// the same vehicle id is independent in another environment
	n.startTrip(live, "veh-1", time.Now())
}

// TestUploadReturnsTheDeviceState: battery_level and network_type of the
// last point come back in the upload answer's last_location.
func TestUploadReturnsTheDeviceState(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-time.Minute).UTC()
	id := n.startTrip(k, "veh-b", t0)
	r := n.batch(k, id, []map[string]any{
		{"latitude": 40.0, "longitude": -83.0, "timestamp": t0.Add(time.Second).Format(time.RFC3339Nano), "battery_level": 80, "network_type": "wifi"},
		{"latitude": 40.0001, "longitude": -83.0, "timestamp": t0.Add(2 * time.Second).Format(time.RFC3339Nano), "battery_level": 79.5, "network_type": "cellular"},
	})
	if r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	ll := r.json(t)["trip_analytics"].(map[string]any)["last_location"].(map[string]any)
	if ll["battery_level"] != 79.5 || ll["network_type"] != "cellular" {
		t.Errorf("last_location %v, want battery 79.5 on cellular", ll)
	}
	// the device's description is kept with the trip
	r = n.do("POST", "/v1/locations/single", k, map[string]any{"trip_id": id, "latitude": 40.0002, "longitude": -83.0,
		"timestamp":   t0.Add(3 * time.Second).Format(time.RFC3339Nano),
		"device_info": map[string]any{"device_id": "dev-1", "device_model": "Pixel 9", "os_version": "Android 16", "app_version": "4.2.0"}})
	if r.Status != 200 {
		t.Fatalf("single: %d %s", r.Status, r.Body)
	}
	di, _ := n.do("GET", "/v1/trips/"+id, k, nil).json(t)["device_info"].(map[string]any)
	if di["device_model"] != "Pixel 9" || di["os_version"] != "Android 16" || di["app_version"] != "4.2.0" {
		t.Errorf("trip device_info %v", di)
	}
}
