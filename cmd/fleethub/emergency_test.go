package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	// the last point 11 s before the report, within the minute that makes
	// its speed the speed at impact
	n.batch(k, trip, track(time.Now().Add(-40*time.Second).UTC(), 40, -83, constant(72, 30)))
	r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "crash", "severity_level": "critical",
		"location": map[string]any{"latitude": 40.01, "longitude": -83.0, "address": "I-70"}, "vehicle_id": "veh-x", "driver_id": "d-veh-x", "trip_id": trip, "fleet_id": "f1"})
	if r.Status != 201 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	in := r.json(t)
	id := in["incident_id"].(string)
	// no one in the directory: the timeline holds the report alone, and no
	// emergency service is said to be contacted
	if in["status"] != "active" || in["crash_analysis"].(map[string]any)["estimated_speed_at_impact"] != 72.0 || len(in["timeline"].([]any)) != 1 ||
		in["emergency_response"].(map[string]any)["status"] != "not_integrated" {
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
	if er := r.json(t)["emergency_response"].(map[string]any); er["status"] != "not_integrated" || er["dispatched"] != false {
		t.Errorf("escalating the incident changed its emergency response: %v (nothing was dispatched)", er)
	}
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
	// an unknown value of a filter is refused as every fixed set's is:
	// invalid_request, each parameter named with the values it takes
	r = n.do("GET", "/v1/emergency/incidents?severity=apocalyptic&status=open&event_type=fire", k, nil)
	if r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Errorf("bad filters: %d %s", r.Status, r.Body)
	}
	details, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for field, want := range map[string]string{
		"severity":   "must be one of low, moderate, high, critical",
		"status":     "must be one of active, resolved, cancelled, escalated",
		"event_type": "must be one of crash, breakdown, medical_emergency, security_incident",
	} {
		if details[field] != want {
			t.Errorf("details.%s %v, want %q", field, details[field], want)
		}
	}
	if l := n.do("GET", "/v1/emergency/incidents", other, nil).json(t); l["pagination"].(map[string]any)["total_count"] != 0.0 {
		t.Errorf("another org lists %v", l["pagination"])
	}
}

func TestAlerts(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		if m["channel"] == "voice_call" {
			w.WriteHeader(503) // the voice provider is down
			return
		}
		w.WriteHeader(202)
	}))
	defer gw.Close()
	cfg := testConfig(t)
	cfg.NotifyURL = gw.URL
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-5 * time.Minute).UTC()
	in := n.startTrip(k, "veh-in", t0) // near the center
	n.batch(k, in, track(t0, 40.0, -83.0, constant(30, 10)))
	out := n.startTrip(k, "veh-out", t0) // 100 km away
	n.batch(k, out, track(t0, 41.0, -83.0, constant(30, 10)))
	// the two drivers' directory entries give the gateway their numbers
	for i, d := range []string{"d-veh-in", "d-extra"} {
		num := fmt.Sprintf("+1555000410%d", i)
		if r := n.do("POST", "/v1/contacts", k, map[string]any{"name": d, "roles": []string{"driver"}, "channels": map[string]any{"sms": num, "voice": num},
			"links": map[string]any{"driver_ids": []string{d}}}); r.Status != 201 {
			t.Fatalf("contact %s: %d %s", d, r.Status, r.Body)
		}
	}
	body := map[string]any{"alert_type": "severe_weather_warning", "severity": "high", "title": "Tornado warning", "message": "Seek shelter now",
		"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 10},
		"target_audience":   map[string]any{"include": []string{"active_drivers"}, "specific_drivers": []string{"d-extra"}},
		"delivery_channels": []map[string]any{{"channel": "sms", "priority": "immediate"}, {"channel": "voice_call"}, {"channel": "in_app_alert"}},
		"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true,
		"escalation_policy": map[string]any{"enabled": true, "escalation_levels": []map[string]any{{"delay_minutes": 15, "action": "notify_supervisors"}}},
		"automated_actions": []string{"enable_emergency_tracking"}}
	r := n.do("POST", "/v1/emergency/alerts", k, body)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	a := r.json(t)
	ds := a["delivery_status"].(map[string]any)
	if ds["total_recipients"] != 2.0 { // the driver in the area and d-extra
		t.Fatalf("recipients %v", a["recipients"])
	}
	bd := ds["delivery_breakdown"].(map[string]any)
	// the voice calls the provider refused (503) are retried by the gateway
	// queue: pending, not failed
	if bd["sms"].(map[string]any)["delivered"] != 2.0 || bd["voice_call"].(map[string]any)["initiated"] != 2.0 || bd["voice_call"].(map[string]any)["failed"] != 0.0 ||
		bd["in_app_alert"].(map[string]any)["delivered"] != 2.0 || ds["pending_deliveries"] != 2.0 || ds["failed_deliveries"] != 0.0 {
		t.Errorf("delivery_status %v", ds)
	}
	mu.Lock()
	if len(got) != 4 { // sms and voice for two recipients; in-app goes on the bus
		t.Errorf("gateway got %d notifications", len(got))
	}
	mu.Unlock()
	if aa := a["affected_area_analysis"].(map[string]any); aa["total_vehicles_in_area"] != 1.0 {
		t.Errorf("area analysis %v", aa)
	}
	id := a["alert_id"].(string)
	if r := n.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", k, map[string]any{"recipient_id": "nobody"}); r.Status != 400 {
		t.Errorf("ack by a non-recipient: %d", r.Status)
	}
	r = n.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", k, map[string]any{"recipient_id": "d-extra", "recipient_type": "driver", "note": "safe"})
	ack := r.json(t)["acknowledgment_status"].(map[string]any)
	if r.Status != 200 || ack["received"] != 1.0 || ack["pending"] != 1.0 || ack["acknowledgment_rate"] != 0.5 {
		t.Errorf("ack: %d %v", r.Status, ack)
	}
	if r := n.do("DELETE", "/v1/emergency/alerts/"+id, k, nil); r.Status != 200 || r.json(t)["status"] != "cancelled" {
		t.Errorf("cancel: %d", r.Status)
	}
	if r := n.do("DELETE", "/v1/emergency/alerts/"+id, k, nil); r.Status != 409 {
		t.Errorf("cancel twice: %d", r.Status)
	}
	if r := n.do("GET", "/v1/emergency/alerts/"+id, n.key("org-b", "test", []string{"all"}, 1000), nil); r.Status != 404 || r.errCode(t) != "alert_not_found" {
		t.Errorf("another org: %d", r.Status)
	}
	bad := map[string]any{"alert_type": "alien_invasion", "severity": "high", "title": strings.Repeat("x", 101), "message": "m",
		"affected_area": map[string]any{"type": "state", "state": "ohio"}, "target_audience": map[string]any{"include": []string{"everyone"}},
		"delivery_channels": []map[string]any{{"channel": "pigeon"}}, "expiration": "2001-01-01T00:00:00Z"}
	r = n.do("POST", "/v1/emergency/alerts", k, bad)
	d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for _, f := range []string{"alert_type", "title", "affected_area.state", "delivery_channels[0].channel", "expiration"} {
		if d[f] == nil {
			t.Errorf("details lack %s: %v", f, d)
		}
	}
}

// TestIncidentFleetFromTheVehicle: an incident reported without fleet_id
// takes the fleet of its vehicle's profile, as the vehicle's events do,
// so the listing's fleet_id finds it; one naming its fleet keeps it.
func TestIncidentFleetFromTheVehicle(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	if r := n.do("PUT", "/v1/vehicles/truck-7", k, map[string]any{"fleet_id": "north"}); r.Status != 200 && r.Status != 201 {
		t.Fatalf("profile: %d %s", r.Status, r.Body)
	}
	report := func(body map[string]any) map[string]any {
		t.Helper()
		body["event_type"], body["severity_level"] = "breakdown", "low"
		body["location"] = map[string]any{"latitude": 40.0, "longitude": -83.0}
		r := n.do("POST", "/v1/emergency/incidents", k, body)
		if r.Status != 201 {
			t.Fatalf("report: %d %s", r.Status, r.Body)
		}
		return r.json(t)
	}
	if in := report(map[string]any{"vehicle_id": "truck-7"}); in["fleet_id"] != "north" {
		t.Errorf("fleet_id %v, want north, the vehicle's", in["fleet_id"])
	}
	if in := report(map[string]any{"vehicle_id": "truck-7", "fleet_id": "south"}); in["fleet_id"] != "south" {
		t.Errorf("fleet_id %v, want south, as reported", in["fleet_id"])
	}
	report(map[string]any{"vehicle_id": "van-1"}) // no profile: no fleet
	l := n.do("GET", "/v1/emergency/incidents?fleet_id=north", k, nil).json(t)
	if p := l["pagination"].(map[string]any); p["total_count"] != 1.0 {
		t.Errorf("incidents of fleet north: %v, want the one of truck-7", p)
	}
}

// TestIncidentLocationTextLimits: an incident's location.address takes 500
// characters as a trip's or an event's does and its landmark 200, as a
// name; one past is refused naming the field, and nothing is reported.
func TestIncidentLocationTextLimits(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	report := func(address, landmark string) resp {
		return n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "low",
			"location": map[string]any{"latitude": 40, "longitude": -83, "address": address, "landmark": landmark}})
	}
	if r := report(strings.Repeat("é", 500), strings.Repeat("é", 200)); r.Status != 201 {
		t.Fatalf("address of 500 and landmark of 200 characters: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ address, landmark, field, msg string }{
		{strings.Repeat("a", 501), "", "location.address", "must be at most 500 characters"},
		{"", strings.Repeat("a", 201), "location.landmark", "must be at most 200 characters"},
	} {
		r := report(c.address, c.landmark)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%s one past: %d %s", c.field, r.Status, r.Body)
			continue
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] != c.msg || len(d) != 1 {
			t.Errorf("%s one past: details %v", c.field, d)
		}
	}
	// the description takes 2,000 characters, as a status change's notes
	desc := func(d string) resp {
		return n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "low",
			"location": map[string]any{"latitude": 40, "longitude": -83}, "description": d})
	}
	if r := desc(strings.Repeat("é", 2001)); r.Status != 400 || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["description"] != "must be at most 2000 characters" {
		t.Errorf("description one past: %d %s", r.Status, r.Body)
	}
	if l := n.do("GET", "/v1/emergency/incidents", k, nil).json(t); l["pagination"].(map[string]any)["total_count"] != 1.0 {
		t.Errorf("refused reports were kept: %v", l["pagination"])
	}
	if r := desc(strings.Repeat("é", 2000)); r.Status != 201 {
		t.Errorf("description of 2000 characters: %d %s", r.Status, r.Body)
	}
}

// TestContactCityCountsCharacters: a contact's home_area.city takes 200
// characters, counted as characters as every text limit is, not bytes;
// one with a control character is refused saying so.
func TestContactCityCountsCharacters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	body := func(city string) map[string]any {
		return map[string]any{"name": "Ann", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "ann@example.com"},
			"home_area": map[string]any{"city": city, "state": "OH"}}
	}
	if r := n.do("POST", "/v1/contacts", k, body(strings.Repeat("é", 200))); r.Status != 201 {
		t.Errorf("a city of 200 two-byte characters: %d %s", r.Status, r.Body)
	}
	for city, msg := range map[string]string{strings.Repeat("é", 201): "must be at most 200 characters", "Colum\tbus": "must not contain a control character"} {
		r := n.do("POST", "/v1/contacts", k, body(city))
		if r.Status != 400 || !strings.Contains(string(r.Body), `"home_area.city":"`+msg+`"`) {
			t.Errorf("city %.20q: %d %s", city, r.Status, r.Body)
		}
	}
}

// TestIncidentStatusRace: sixty requests at once move one active
// incident to escalated: one does, and each of the others, which meet it
// in the store, reads the incident again and answers 409
// invalid_state_transition (escalated cannot become escalated), never a
// 500; the incident has one escalation in its history.
func TestIncidentStatusRace(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh-race"})
	if r.Status != 201 {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["incident_id"].(string)
	codes := make(chan resp, 60)
	var wg sync.WaitGroup
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- n.do("PUT", "/v1/emergency/incidents/"+id+"/status", k, map[string]any{"status": "escalated", "updated_by": "ops"})
		}()
	}
	wg.Wait()
	close(codes)
	ok := 0
	for r := range codes {
		switch {
		case r.Status == 200:
			ok++
		case r.Status != 409 || r.errCode(t) != "invalid_state_transition":
			t.Errorf("a racing status change answered %d %s, want 200 once and 409 invalid_state_transition", r.Status, r.Body)
		}
	}
	if ok != 1 {
		t.Errorf("%d status changes succeeded, want 1", ok)
	}
	in := n.do("GET", "/v1/emergency/incidents/"+id, k, nil).json(t)
	esc := 0
	for _, u := range in["status_updates"].([]any) {
		if u.(map[string]any)["status"] == "escalated" {
			esc++
		}
	}
	if esc != 1 {
		t.Errorf("%d escalations recorded, want 1: %v", esc, in["status_updates"])
	}
}
