package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"

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
	n := startNode(t, testConfig(t))
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
	time.Sleep(1100 * time.Millisecond) // real time: the pause lasts a second on the trip service's wall clock, which app.go wires
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
	r = n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
	if r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	st := r.json(t)
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

func TestMetadataUpdate(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := n.startTrip(k, "veh-1", time.Now())
	r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"route_name": "R1", "purpose": "service", "billing_code": "B7", "tags": []string{"x"}}})
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	m := r.json(t)
	md := m["metadata"].(map[string]any)
	if md["route_name"] != "R1" || md["purpose"] != "service" || md["billing_code"] != "B7" || md["updated_by"] == nil || md["created_at"] == nil {
		t.Errorf("merge: %v", md)
	}
	h := m["metadata_history"].([]any)
	ch := h[len(h)-1].(map[string]any)["changes"].(map[string]any)
	if fmt.Sprint(ch["added"]) != "[billing_code route_name tags]" || fmt.Sprint(ch["modified"]) != "[purpose]" {
		t.Errorf("changes %v", ch)
	}
	r = n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"route_name": nil}})
	md = r.json(t)["metadata"].(map[string]any)
	if _, still := md["route_name"]; still || md["billing_code"] != "B7" {
		t.Errorf("null removal: %v", md)
	}
	r = n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"only": 1}, "replace_metadata": true})
	md = r.json(t)["metadata"].(map[string]any)
	if md["only"] != 1.0 || md["billing_code"] != nil || md["created_at"] == nil {
		t.Errorf("replace: %v", md)
	}
	big := map[string]any{"metadata": map[string]any{"blob": strings.Repeat("x", 70000)}}
	if r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, big); r.Status != 413 || r.errCode(t) != "payload_too_large" {
		t.Fatalf("70 KB metadata: %d %.200s", r.Status, r.Body)
	}
	n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
	if r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"after": true}}); r.Status != 200 {
		t.Errorf("metadata on completed trip: %d", r.Status)
	}
}

func TestListTrips(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	base := time.Now().Add(-48 * time.Hour).UTC()
	var ids []string
	for i := 0; i < 12; i++ {
		id := n.startTrip(k, fmt.Sprintf("veh-%02d", i), base.Add(time.Duration(i)*time.Hour))
		ids = append(ids, id)
		if i%3 == 0 {
			n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
		}
	}
	seen := map[string]bool{}
	cursor := ""
	var prev string
	pages := 0
	for {
		q := "/v1/trips?limit=5&order=asc"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		r := n.do("GET", q, k, nil)
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		m := r.json(t)
		pg := m["pagination"].(map[string]any)
		if tc := pg["total_count"].(float64); tc != 12 && !(pages > 0 && tc == 13) {
			t.Fatalf("total %v", pg["total_count"])
		}
		for _, it := range m["trips"].([]any) {
			id := it.(map[string]any)["trip_id"].(string)
			if seen[id] {
				t.Fatalf("%s seen twice", id)
			}
			seen[id] = true
			if st := it.(map[string]any)["start_time"].(string); st < prev {
				t.Fatalf("not ascending: %s after %s", st, prev)
			} else {
				prev = st
			}
		}
		pages++
		if pages == 1 {
			// a trip inserted while paging, before the cursor, is not repeated
			n.startTrip(k, "late", base.Add(-time.Hour))
		}
		if pages == 2 {
			back := n.do("GET", "/v1/trips?limit=5&order=asc&cursor="+pg["prev_cursor"].(string), k, nil).json(t)
			if len(back["trips"].([]any)) != 5 || back["trips"].([]any)[0].(map[string]any)["trip_id"] != ids[0] {
				t.Errorf("prev page: %v", back["trips"])
			}
		}
		if pg["has_more"] != true {
			break
		}
		cursor = pg["next_cursor"].(string)
	}
	if len(seen) != 12 {
		t.Fatalf("visited %d of 12", len(seen))
	}
	r := n.do("GET", "/v1/trips?status=completed&include_analytics=false", k, nil).json(t)
	if len(r["trips"].([]any)) != 4 || r["trips"].([]any)[0].(map[string]any)["analytics"] != nil {
		t.Errorf("status filter: %d", len(r["trips"].([]any)))
	}
	if s := r["summary_stats"].(map[string]any); s["completed_trips"].(float64) != 4 {
		t.Errorf("summary %v", s)
	}
	if r := n.do("GET", "/v1/trips?vehicle_id=veh-03", k, nil).json(t); len(r["trips"].([]any)) != 1 || r["filters_applied"].(map[string]any)["vehicle_id"] != "veh-03" {
		t.Errorf("vehicle filter: %v", r)
	}
	rng := n.do("GET", "/v1/trips?start_date=2026-01-02&end_date=2026-01-01", k, nil)
	if rng.Status != 400 || rng.errCode(t) != "invalid_date_range" {
		t.Errorf("date range: %d %s", rng.Status, rng.Body)
	}
	for _, q := range []string{"limit=0", "limit=201", "sort=speed", "order=up", "status=flying", "cursor=zzz", "include_analytics=maybe"} {
		if r := n.do("GET", "/v1/trips?"+q, k, nil); r.Status != 400 {
			t.Errorf("%s: %d", q, r.Status)
		}
	}
	for _, s := range []string{"distance", "duration", "safety_score", "end_time"} {
		if r := n.do("GET", "/v1/trips?sort="+s, k, nil); r.Status != 200 {
			t.Errorf("sort %s: %d", s, r.Status)
		}
	}
}

func TestOrganizationHistory(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for i := 0; i < 3; i++ {
		id := n.startTrip(k, fmt.Sprintf("v%d", i), time.Now().Add(time.Duration(-i)*time.Hour))
		if i > 0 {
			n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
		}
	}
	r := n.do("GET", "/v1/organizations/org-a/trips/history", k, nil).json(t)
	d := r["data"].(map[string]any)
	if r["success"] != true || d["count"].(float64) != 2 || d["filter"] != "completed" {
		t.Fatalf("history: %v", r)
	}
	item := d["trips"].([]any)[0].(map[string]any)
	for _, f := range []string{"id", "org_id", "vehicle_id", "user_id", "status", "purpose", "start_time", "end_time", "created_at", "duration_seconds", "distance_meters"} {
		if _, ok := item[f]; !ok {
			t.Errorf("history item lacks %s", f)
		}
	}
	if rec := n.do("GET", "/v1/organizations/org-a/trips/history?status=recording", k, nil).json(t)["data"].(map[string]any); rec["count"].(float64) != 1 {
		t.Errorf("recording: %v", rec)
	}
	if o := n.do("GET", "/v1/organizations/org-z/trips/history", k, nil).json(t)["data"].(map[string]any); o["count"].(float64) != 0 {
		t.Errorf("other org: %v", o)
	}
	bad := n.do("GET", "/v1/organizations/org-a/trips/history?status=nope", k, nil)
	if bad.Status != 400 || bad.json(t)["success"] != false {
		t.Errorf("bad status: %d %s", bad.Status, bad.Body)
	}
}

func TestTripEventsPublished(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-10 * time.Minute).UTC()
	id := n.startTrip(k, "veh-pub", t0)
	speeds := append(append(constant(60, 30), 40, 20, 0), constant(0, 5)...)
	n.batch(k, id, track(t0, 40, -83, speeds))
	n.do("POST", "/v1/trips/"+id+"/stop", k, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []*event.Envelope
	points := 0
	go n.app.bus.Subscribe(ctx, hub.Subscription{Topic: hub.TopicEvents, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			env, err := event.Unmarshal(m.Value)
			if err != nil {
				t.Error(err)
				continue
			}
			if env.Event.Source.TripID == id {
				got = append(got, env)
			}
		}
		return nil
	})
	go n.app.bus.Subscribe(ctx, hub.Subscription{Topic: hub.TopicLocations, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			env, _ := event.Unmarshal(m.Value)
			if env != nil && len(env.Points) > 0 && env.Points[0].TripID == id {
				points += len(env.Points)
			}
		}
		return nil
	})
	waitFor(t, "trip events on the bus", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3 && points == len(speeds)
	})
	mu.Lock()
	defer mu.Unlock()
	var types []string
	var last int64
	for _, e := range got {
		types = append(types, e.Event.EventType)
		if e.Event.Metadata.CorrelationID != id || e.Org != "org-a" || e.Env != "test" {
			t.Errorf("event %s: correlation %q scope %s/%s", e.Event.EventType, e.Event.Metadata.CorrelationID, e.Org, e.Env)
		}
		if e.Event.Metadata.SequenceNumber <= last {
			t.Errorf("sequence %d after %d", e.Event.Metadata.SequenceNumber, last)
		}
		last = e.Event.Metadata.SequenceNumber
	}
	if fmt.Sprint(types) != "[trip_started harsh_braking trip_completed]" {
		t.Errorf("events %v", types)
	}
	if got[1].Event.Category != "safety_events" || got[0].Event.Category != "trip_lifecycle" {
		t.Errorf("categories %s %s", got[0].Event.Category, got[1].Event.Category)
	}
}

func TestRouteAndSafetyScore(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-40 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-route", t0)
	// 15 minutes north at 50 km/h with a hard stop in the middle
	speeds := append(append(constant(50, 400), 30, 10, 0), constant(0, 20)...)
	for v := 2.0; v < 50; v += 2 {
		speeds = append(speeds, v)
	}
	speeds = append(speeds, constant(50, 900-len(speeds))...)
	n.batch(k, id, track(t0, 40, -83, speeds))
	r := n.do("GET", "/v1/trips/"+id+"/route?include_traffic_data=true&geometry_precision=5", k, nil)
	if r.Status != 200 {
		t.Fatalf("route: %d %s", r.Status, r.Body)
	}
	rt := r.json(t)
	g := rt["route_geometry"].(map[string]any)
	if g["type"] != "LineString" || g["total_points"].(float64) != 900 || g["simplified"] != true {
		t.Errorf("geometry %v", g["type"])
	}
	if c := g["coordinates"].([]any); len(c) < 2 || len(c) > 50 {
		t.Errorf("a straight track simplifies to a few points, got %d", len(c))
	}
	if d := rt["route_analytics"].(map[string]any)["total_distance_km"].(float64); d < 11 || d > 12.5 {
		t.Errorf("route distance %v", d)
	}
	wps := rt["waypoints"].([]any)
	if wps[0].(map[string]any)["waypoint_type"] != "start" || wps[len(wps)-1].(map[string]any)["waypoint_type"] != "end" {
		t.Errorf("waypoints %v", wps)
	}
	if rt["traffic_analysis"] == nil {
		t.Error("traffic analysis missing")
	}
	if r := n.do("GET", "/v1/trips/"+id+"/route?geometry_precision=9", k, nil); r.Status != 400 {
		t.Errorf("precision 9: %d", r.Status)
	}
	s := n.do("GET", "/v1/analytics/safety-score/"+id, k, nil)
	if s.Status != 200 {
		t.Fatalf("safety: %d %s", s.Status, s.Body)
	}
	sa := s.json(t)
	if sa["score_grade"] == nil || sa["score_breakdown"] == nil || sa["benchmarks"] == nil {
		t.Errorf("safety analysis: %s", s.Body)
	}
	rfs := sa["risk_factors"].([]any)
	if len(rfs) != 1 || rfs[0].(map[string]any)["factor_type"] != "harsh_braking" {
		t.Errorf("risk factors %v", rfs)
	}
	w := sa["score_breakdown"].(map[string]any)["score_weights"].(map[string]any)
	sum := 0.0
	for _, v := range w {
		sum += v.(float64)
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("weights sum to %v", sum)
	}
	// too short a trip: trip_not_found
	short := n.startTrip(k, "veh-short", t0)
	n.batch(k, short, track(t0, 40, -83, constant(40, 30)))
	if r := n.do("GET", "/v1/analytics/safety-score/"+short, k, nil); r.Status != 404 || r.errCode(t) != "trip_not_found" {
		t.Errorf("short trip: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/trips/"+n.startTrip(k, "veh-empty", t0)+"/route", k, nil); r.Status != 404 {
		t.Errorf("route of a trip without points: %d", r.Status)
	}
}
