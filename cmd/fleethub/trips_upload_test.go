package main

import (
	"fmt"
	"strings"

	"math"
	"testing"
	"time"
)

func TestBatchValidationAndIdempotence(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-20 * time.Minute).UTC()
	id := n.startTrip(k, "veh-1", t0)
	pts := track(t0.Add(time.Minute), 40, -83, constant(50, 120))
	bad := make([]map[string]any, len(pts))
	for i := range pts {
		c := map[string]any{}
		for k, v := range pts[i] {
			c[k] = v
		}
		bad[i] = c
	}
	bad[3]["latitude"] = 91.0
	bad[5]["timestamp"] = "yesterday"
	bad[7]["accuracy_meters"] = -1.0
	r := n.batch(k, id, bad)
	if r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Fatalf("bad batch: %d %s", r.Status, r.Body)
	}
	d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for _, f := range []string{"locations[3].latitude", "locations[5].timestamp", "locations[7].accuracy_meters"} {
		if _, ok := d[f]; !ok {
			t.Errorf("details lack %s: %v", f, d)
		}
	}
	if c := n.do("GET", "/v1/trips/"+id, k, nil).json(t)["analytics"].(map[string]any)["locations_count"].(float64); c != 0 {
		t.Fatalf("rejected batch stored %v points", c)
	}
	big := track(t0, 40, -83, constant(10, 1001))
	if r := n.batch(k, id, big); r.Status != 400 || r.errCode(t) != "batch_too_large" {
		t.Fatalf("1001 points: %d %.200s", r.Status, r.Body)
	}
	// a value of the wrong type is named with its point's index
	bad[4]["latitude"] = "forty"
	if r := n.batch(k, id, bad); r.Status != 400 || r.errCode(t) != "invalid_request" ||
		r.json(t)["error"].(map[string]any)["details"].(map[string]any)["locations[4].latitude"] == nil {
		t.Fatalf("a string latitude: %d %s", r.Status, r.Body)
	}
	if r := n.batch(k, id, []map[string]any{}); r.Status != 400 || r.errCode(t) != "validation_failed" || !strings.Contains(string(r.Body), `"locations"`) {
		t.Fatalf("no points: %d %.200s", r.Status, r.Body)
	}
	first := n.batch(k, id, pts).json(t)
	again := n.batch(k, id, pts)
	ag := again.json(t)
	if ag["processed_count"].(float64) != 0 || ag["rejected_count"].(float64) != 120 {
		t.Fatalf("resend: %s", again.Body)
	}
	if num(ag, "trip_analytics.current_distance_km") != num(first, "trip_analytics.current_distance_km") ||
		num(ag, "trip_analytics.locations_count") != 120 {
		t.Fatalf("resend changed analytics: %v vs %v", ag["trip_analytics"], first["trip_analytics"])
	}
	// unusable points are skipped and counted
	mixed := []map[string]any{
		{"latitude": 40.0, "longitude": -83.0, "timestamp": t0.Add(-time.Hour).Format(time.RFC3339)},            // before start
		{"latitude": 40.0, "longitude": -83.0, "timestamp": time.Now().Add(2 * time.Hour).Format(time.RFC3339)}, // future
		pts[0], // duplicate
	}
	m := n.batch(k, id, mixed).json(t)
	if m["rejected_count"].(float64) != 3 || m["processed_count"].(float64) != 0 {
		t.Fatalf("mixed: %v", m)
	}
	// wrong trip and missing trip id
	if r := n.batch(k, "trip_nope", pts); r.Status != 404 || r.errCode(t) != "trip_not_found" {
		t.Fatalf("missing trip: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/locations/batch", k, map[string]any{"locations": pts}); r.Status != 400 {
		t.Fatalf("no trip_id: %d", r.Status)
	}
}

func TestOutOfOrderBatchesAnalysedInOrder(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-20 * time.Minute).UTC()
	// cruise, hard stop, cruise: split so the stop arrives after later points
	speeds := append(append(constant(60, 60), 40, 20, 0), constant(0, 30)...)
	pts := track(t0, 40, -83, speeds)
	inOrder := n.startTrip(k, "veh-a", t0)
	n.batch(k, inOrder, pts)
	want := n.do("POST", "/v1/trips/"+inOrder+"/stop", k, nil).json(t)["analytics"].(map[string]any)

	shuffled := n.startTrip(k, "veh-b", t0)
	r1 := n.batch(k, shuffled, pts[50:]).json(t)
	r2 := n.batch(k, shuffled, pts[:50]).json(t)
	if r1["processed_count"].(float64)+r2["processed_count"].(float64) != float64(len(pts)) {
		t.Fatalf("late points rejected: %v %v", r1, r2)
	}
	got := n.do("POST", "/v1/trips/"+shuffled+"/stop", k, nil).json(t)["analytics"].(map[string]any)
	for _, f := range []string{"distance_km", "locations_count", "events_count"} {
		if want[f] != got[f] {
			t.Errorf("%s: in order %v, out of order %v", f, want[f], got[f])
		}
	}
	if want["harsh_events"].(map[string]any)["harsh_braking"].(float64) != 1 {
		t.Errorf("hard stop not detected: %v", want["harsh_events"])
	}
	if fmt.Sprint(want["harsh_events"]) != fmt.Sprint(got["harsh_events"]) {
		t.Errorf("harsh events differ: %v vs %v", want["harsh_events"], got["harsh_events"])
	}
}

func TestDetectionThroughUpload(t *testing.T) {
	cfg := testConfig(t)
	cfg.SpeedLimitKmh = 80
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-40 * time.Minute).UTC()

	smooth := n.startTrip(k, "smooth", t0)
	r := n.batch(k, smooth, track(t0, 40, -83, constant(60, 900))).json(t)
	if ev := r["events_detected"].([]any); len(ev) != 0 {
		t.Errorf("smooth drive raised %v", ev)
	}

	hard := n.startTrip(k, "hard", t0)
	speeds := append(append(constant(60, 30), 40, 20, 0), constant(0, 10)...)
	r = n.batch(k, hard, track(t0, 40, -83, speeds)).json(t)
	ev := r["events_detected"].([]any)
	if len(ev) != 1 || ev[0].(map[string]any)["event_type"] != "harsh_braking" {
		t.Fatalf("hard stop: %v", ev)
	}
	e := ev[0].(map[string]any)
	for _, f := range []string{"event_id", "timestamp", "severity", "location", "metrics"} {
		if e[f] == nil {
			t.Errorf("event lacks %s: %v", f, e)
		}
	}

	speeding := n.startTrip(k, "fast", t0)
	var sp []float64
	sp = append(sp, constant(70, 60)...)
	for v := 72.0; v < 100; v += 2 {
		sp = append(sp, v)
	}
	sp = append(sp, constant(100, 300)...)
	for v := 98.0; v > 70; v -= 2 {
		sp = append(sp, v)
	}
	sp = append(sp, constant(70, 60)...)
	pts := track(t0, 40, -83, sp)
	var all []any
	for i := 0; i < len(pts); i += 100 { // across batch boundaries
		all = append(all, n.batch(k, speeding, pts[i:min(i+100, len(pts))]).json(t)["events_detected"].([]any)...)
	}
	if len(all) != 1 || all[0].(map[string]any)["event_type"] != "speeding" {
		t.Fatalf("speeding: %v", all)
	}
	m := all[0].(map[string]any)["metrics"].(map[string]any)
	if d := m["duration_seconds"].(float64); d < 280 || d > 320 {
		t.Errorf("speeding duration %v, want about 300 s", d)
	}
	if x := m["excess_speed_kmh"].(float64); math.Abs(x-20) > 2 {
		t.Errorf("excess %v, want 20", x)
	}
}

func TestSingleUpload(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-time.Minute).UTC()
	id := n.startTrip(k, "veh-1", t0)
	p := map[string]any{"trip_id": id, "latitude": 40.0, "longitude": -83.0, "timestamp": t0.Add(time.Second).Format(time.RFC3339),
		"speed_kmh": 30.0, "heading": 90.0, "accuracy_meters": 4.0, "device_info": map[string]any{"device_id": "d1", "signal_strength": -70.0, "satellites_count": 9.0}}
	r := n.do("POST", "/v1/locations/single", k, p)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	s := r.json(t)
	for _, f := range []string{"trip_id", "location_id", "processed_at", "events_detected", "trip_analytics", "quality_assessment", "processing_time_ms"} {
		if _, ok := s[f]; !ok {
			t.Errorf("single lacks %s", f)
		}
	}
	q := s["quality_assessment"].(map[string]any)
	if q["accuracy_rating"] != "excellent" || q["signal_quality"] != "excellent" {
		t.Errorf("quality %v", q)
	}
	if id, _ := s["location_id"].(string); id == "" {
		t.Errorf("a stored point without location_id: %s", r.Body)
	}
	// the same point again is not stored: no id names it
	again := n.do("POST", "/v1/locations/single", k, p).json(t)
	if again["accepted"] != false || again["rejection_reason"] != "duplicate_timestamp" || again["location_id"] != nil {
		t.Errorf("a repeated point: accepted %v (%v), location_id %v", again["accepted"], again["rejection_reason"], again["location_id"])
	}
	p["accuracy_meters"] = -3.0
	r = n.do("POST", "/v1/locations/single", k, p)
	if r.Status != 400 || r.errCode(t) != "invalid_location" {
		t.Fatalf("negative accuracy: %d %s", r.Status, r.Body)
	}
	if _, ok := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["accuracy_meters"]; !ok {
		t.Errorf("details: %s", r.Body)
	}
	// at most 10 per second per trip
	limited := 0
	for i := 0; i < 15; i++ {
		p["accuracy_meters"] = 4.0
		p["timestamp"] = t0.Add(time.Duration(10+i) * time.Second).Format(time.RFC3339)
		if r := n.do("POST", "/v1/locations/single", k, p); r.Status == 429 {
			limited++
		}
	}
	if limited < 4 {
		t.Errorf("only %d of 15 rapid single uploads limited", limited)
	}
}
