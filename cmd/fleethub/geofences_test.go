package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestGeofencesAndEvents(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	// a circle 300 m around a point 1 km north of the start
	r := n.do("POST", "/v1/geofences", k, map[string]any{"name": "Depot", "type": "circle", "center": map[string]any{"latitude": 40.009, "longitude": -83.0}, "radius_m": 300})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["geofence_id"].(string)
	poly := n.do("POST", "/v1/geofences", k, map[string]any{"name": "Yard", "type": "polygon", "polygon": []map[string]any{
		{"latitude": 41, "longitude": -83}, {"latitude": 41, "longitude": -82.99}, {"latitude": 41.01, "longitude": -82.99}}})
	if poly.Status != 201 {
		t.Fatalf("polygon: %d %s", poly.Status, poly.Body)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
		code  string
	}{
		{map[string]any{"name": "x", "type": "circle", "center": map[string]any{"latitude": 40, "longitude": -83}}, "radius_m", "validation_failed"},
		{map[string]any{"name": "x", "type": "circle", "center": map[string]any{"latitude": 40, "longitude": -83}, "radius_m": -5}, "radius_m", "validation_failed"},
		{map[string]any{"name": "x", "type": "square"}, "type", "invalid_request"},
		{map[string]any{"name": "x", "type": "polygon", "polygon": []map[string]any{{"latitude": 1, "longitude": 1}}}, "polygon", "validation_failed"},
		{map[string]any{"type": "circle", "center": map[string]any{"latitude": 40, "longitude": -83}, "radius_m": 5}, "name", "validation_failed"},
	} {
		r := n.do("POST", "/v1/geofences", k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		found := false
		for f := range d {
			if len(f) >= len(c.field) && f[:len(c.field)] == c.field {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: details %v lack %s", c.body, d, c.field)
		}
	}
	if l := n.do("GET", "/v1/geofences", k, nil).json(t); l["count"].(float64) != 2 {
		t.Errorf("list %v", l)
	}
	if r := n.do("GET", "/v1/geofences/"+id, other, nil); r.Status != 404 || r.errCode(t) != "geofence_not_found" {
		t.Errorf("another org: %d %s", r.Status, r.Body)
	}
	if r := n.do("PUT", "/v1/geofences/"+id, k, map[string]any{"name": "Depot 2", "type": "circle", "center": map[string]any{"latitude": 40.009, "longitude": -83.0}, "radius_m": 300}); r.Status != 200 || r.json(t)["name"] != "Depot 2" {
		t.Errorf("put: %d %s", r.Status, r.Body)
	}
	// an event stream of geofence events, and a drive through the circle
	s := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"categories": []string{"geofence_events"}}})
	sid := s.json(t)["stream_id"].(string)
	c := n.dial(t, k, "stream_id="+sid)
	expectSubscribed(t, c)
	t0 := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	trip := n.startTrip(k, "veh-gf", t0)
	n.batch(k, trip, track(t0, 40, -83, constant(36, 200))) // 2 km north: in at ~0.7 km, out at ~1.3 km
	got := readEvents(t, c, 2)
	var types []string
	for _, d := range got {
		var m struct {
			EventType string         `json:"event_type"`
			EventData map[string]any `json:"event_data"`
			Source    map[string]any `json:"source"`
			// null: nothing measures them
			PerformanceMetrics map[string]any `json:"performance_metrics"`
		}
		if err := jsonUnmarshal(d.Message, &m); err != nil {
			t.Fatal(err)
		}
		types = append(types, m.EventType)
		if m.EventData["geofence_id"] != id || m.Source["trip_id"] != trip {
			t.Errorf("event %+v", m)
		}
		for _, f := range []string{"on_time_departure", "service_efficiency", "customer_satisfaction"} {
			if v, ok := m.PerformanceMetrics[f]; !ok || v != nil || len(m.PerformanceMetrics) != 3 {
				t.Errorf("%s performance_metrics %v, want on_time_departure, service_efficiency and customer_satisfaction null", m.EventType, m.PerformanceMetrics)
				break
			}
		}
		if m.EventType == "geofence_exit" {
			if d, _ := m.EventData["duration_inside"].(float64); d < 50 || d > 70 {
				t.Errorf("duration inside %v, want about 60 s", m.EventData["duration_inside"])
			}
		}
	}
	if fmt.Sprint(types) != "[geofence_entry geofence_exit]" {
		t.Errorf("events %v", types)
	}
	if r := n.do("DELETE", "/v1/geofences/"+id, k, nil); r.Status != 200 {
		t.Errorf("delete: %d", r.Status)
	}
	if r := n.do("DELETE", "/v1/geofences/"+id, k, nil); r.Status != 404 {
		t.Errorf("delete twice: %d", r.Status)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// A centre or vertex without a coordinate is refused naming it, never
// stored at 0; a refused replace leaves the geofence as it was.
func TestGeofenceMissingCoordinate(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	vertices := func(missing map[string]any) []map[string]any {
		return []map[string]any{{"latitude": 41, "longitude": -83}, {"latitude": 41, "longitude": -82.99}, missing}
	}
	for _, c := range []struct {
		body map[string]any
		want map[string]string
	}{
		{map[string]any{"name": "C", "type": "circle", "center": map[string]any{"latitude": 40.0}, "radius_m": 5},
			map[string]string{"center.longitude": "is required"}},
		{map[string]any{"name": "C", "type": "circle", "center": map[string]any{}, "radius_m": 5},
			map[string]string{"center.latitude": "is required", "center.longitude": "is required"}},
		{map[string]any{"name": "C", "type": "circle", "center": map[string]any{"latitude": nil, "longitude": -83}, "radius_m": 5},
			map[string]string{"center.latitude": "is required"}},
		{map[string]any{"name": "C", "type": "circle", "center": map[string]any{"latitude": 95}, "radius_m": 5},
			map[string]string{"center.latitude": "must be between -90 and 90", "center.longitude": "is required"}},
		{map[string]any{"name": "P", "type": "polygon", "polygon": vertices(map[string]any{"latitude": 41.01})},
			map[string]string{"polygon[2].longitude": "is required"}},
	} {
		r := n.do("POST", "/v1/geofences", k, c.body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if fmt.Sprint(d) != fmt.Sprint(c.want) {
			t.Errorf("%v: details %v, want %v", c.body, d, c.want)
		}
	}
	if l := n.do("GET", "/v1/geofences", k, nil).json(t); l["count"].(float64) != 0 {
		t.Errorf("refused geofences stored: %v", l)
	}
	r := n.do("POST", "/v1/geofences", k, map[string]any{"name": "Depot", "type": "circle", "center": map[string]any{"latitude": 40.009, "longitude": -83.0}, "radius_m": 300})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["geofence_id"].(string)
	if r := n.do("PUT", "/v1/geofences/"+id, k, map[string]any{"name": "Moved", "type": "circle", "center": map[string]any{"latitude": 40.0}, "radius_m": 300}); r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Errorf("put without longitude: %d %s", r.Status, r.Body)
	}
	g := n.do("GET", "/v1/geofences/"+id, k, nil).json(t)
	if c := g["center"].(map[string]any); g["name"] != "Depot" || c["longitude"] != -83.0 || c["latitude"] != 40.009 {
		t.Errorf("after a refused put: %v", g)
	}
}

// A change to the organization's geofences (one created, one renamed)
// keeps each vehicle's side of those that remain: a vehicle inside the
// depot before the change whose next point is outside it produces its
// exit, with the entry it had.
func TestGeofenceChangeKeepsVehiclesInside(t *testing.T) {
	cfg := testConfig(t)
	cfg.GeofenceRefresh = time.Nanosecond // each batch reads the geofences as they are
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	depot := map[string]any{"name": "Depot", "type": "circle", "center": map[string]any{"latitude": 40.009, "longitude": -83.0}, "radius_m": 300}
	r := n.do("POST", "/v1/geofences", k, depot)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["geofence_id"].(string)
	s := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"categories": []string{"geofence_events"}}})
	c := n.dial(t, k, "stream_id="+s.json(t)["stream_id"].(string))
	expectSubscribed(t, c)
	t0 := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	trip := n.startTrip(k, "veh-gf", t0)
	pts := track(t0, 40, -83, constant(36, 100)) // ends 1 km north, inside the depot
	n.batch(k, trip, pts)
	if got := readEvents(t, c, 1); !strings.Contains(string(got[0].Message), `"geofence_entry"`) {
		t.Fatalf("entering: %s", got[0].Message)
	}
	// the geofences change while the vehicle is inside
	if r := n.do("POST", "/v1/geofences", k, map[string]any{"name": "Yard", "type": "circle", "center": map[string]any{"latitude": 41, "longitude": -83.0}, "radius_m": 300}); r.Status != 201 {
		t.Fatalf("create yard: %d %s", r.Status, r.Body)
	}
	depot["name"] = "Depot 2"
	if r := n.do("PUT", "/v1/geofences/"+id, k, depot); r.Status != 200 {
		t.Fatalf("rename: %d %s", r.Status, r.Body)
	}
	// the next point is 1 km further north, outside the depot
	out := track(t0.Add(200*time.Second), 40.018, -83, constant(0, 1))
	n.batch(k, trip, out)
	got := readEventsWithin(t, c, 1, 10*time.Second)
	var m struct {
		EventType string         `json:"event_type"`
		EventData map[string]any `json:"event_data"`
	}
	if err := json.Unmarshal(got[0].Message, &m); err != nil {
		t.Fatal(err)
	}
	if m.EventType != "geofence_exit" || m.EventData["geofence_id"] != id || m.EventData["geofence_name"] != "Depot 2" || m.EventData["entry_time"] == nil {
		t.Errorf("after the change: %s, want the depot's exit with its entry time", got[0].Message)
	}
}

// A field of the other shape is named as it was sent (radius_m on a
// polygon is radius_m), and a name's limit is 200 characters, not bytes.
func TestGeofenceFieldsNamed(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	tri := []map[string]any{{"latitude": 41, "longitude": -83}, {"latitude": 41, "longitude": -82.99}, {"latitude": 41.01, "longitude": -82.99}}
	r := n.do("POST", "/v1/geofences", k, map[string]any{"name": "P", "type": "polygon", "polygon": tri, "radius_m": 50})
	if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); r.Status != 400 || fmt.Sprint(d) != "map[radius_m:is only for type circle]" {
		t.Errorf("polygon with radius_m: %d %s", r.Status, r.Body)
	}
	r = n.do("POST", "/v1/geofences", k, map[string]any{"name": "P", "type": "polygon", "polygon": tri, "center": map[string]any{"latitude": 41, "longitude": -83}})
	if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); r.Status != 400 || fmt.Sprint(d) != "map[center:is only for type circle]" {
		t.Errorf("polygon with center: %d %s", r.Status, r.Body)
	}
	name := strings.Repeat("é", 200) // 400 bytes
	if r := n.do("POST", "/v1/geofences", k, map[string]any{"name": name, "type": "polygon", "polygon": tri}); r.Status != 201 {
		t.Errorf("a name of 200 characters: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/geofences", k, map[string]any{"name": name + "é", "type": "polygon", "polygon": tri}); r.Status != 400 {
		t.Errorf("a name of 201 characters: %d %s", r.Status, r.Body)
	}
}

// TestGeofenceMetadataLimit: a geofence's metadata may be 64 KB (65,536
// bytes as JSON), the trip metadata's limit; one byte more is 413
// payload_too_large, its message saying the limit and its details naming
// metadata, and nothing is stored.
func TestGeofenceMetadataLimit(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	body := func(jsonBytes int) map[string]any {
		// {"notes":"x…"} is 12 bytes around the string
		return map[string]any{"name": "Depot", "type": "circle", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_m": 300,
			"metadata": map[string]any{"notes": strings.Repeat("x", jsonBytes-12)}}
	}
	r := n.do("POST", "/v1/geofences", k, body(65536))
	if r.Status != 201 {
		t.Fatalf("metadata of 65,536 bytes: %d %.300s", r.Status, r.Body)
	}
	id := r.json(t)["geofence_id"].(string)
	for _, req := range []struct{ method, path string }{{"POST", "/v1/geofences"}, {"PUT", "/v1/geofences/" + id}} {
		r := n.do(req.method, req.path, k, body(65537))
		if r.Status != 413 || r.errCode(t) != "payload_too_large" {
			t.Fatalf("%s metadata of 65,537 bytes: %d %.300s", req.method, r.Status, r.Body)
		}
		if msg := r.json(t)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "at most 64 KB") {
			t.Errorf("%s: message %q, want it to say the limit: at most 64 KB", req.method, msg)
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["metadata"] == nil {
			t.Errorf("%s: details %v do not name metadata", req.method, d)
		}
	}
	if l := n.do("GET", "/v1/geofences", k, nil).json(t); l["count"].(float64) != 1 {
		t.Errorf("a refused geofence stored: count %v", l["count"])
	}
	g := n.do("GET", "/v1/geofences/"+id, k, nil).json(t)
	if notes, _ := g["metadata"].(map[string]any)["notes"].(string); len(notes) != 65536-12 {
		t.Errorf("after a refused put the notes are %d bytes, want %d", len(notes), 65536-12)
	}
}

// TestNamesRefuseControlCharacters: a geofence's, a vehicle profile's, a
// contact's and a key's name is a label shown as it is: one holding a
// control character is refused naming it, as on every name.
func TestNamesRefuseControlCharacters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")
	bad := "Depot\n2"
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"POST", "/v1/geofences", map[string]any{"name": bad, "type": "circle", "center": map[string]any{"latitude": 40, "longitude": -83}, "radius_m": 300}},
		{"PUT", "/v1/vehicles/veh-1", map[string]any{"name": bad}},
		{"POST", "/v1/api-keys", map[string]any{"name": bad, "permissions": []string{"trips:read"}}},
		{"POST", "/v1/contacts", map[string]any{"name": bad, "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "ann@example.com"}}},
	} {
		r := n.do(c.method, c.path, k, c.body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["name"] == nil {
			t.Errorf("%s %s with a newline in the name: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if l := n.do("GET", "/v1/geofences", k, nil).json(t); fmt.Sprint(l["geofences"]) != "[]" {
		t.Errorf("a refused geofence was kept: %v", l)
	}
}
