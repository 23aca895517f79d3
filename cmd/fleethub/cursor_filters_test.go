package main

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

// page reads a listing page, failing unless it answers 200.
func (n *node) page(key, path string) map[string]any {
	n.t.Helper()
	r := n.do("GET", path, key, nil)
	if r.Status != 200 {
		n.t.Fatalf("%s: %d %s", path, r.Status, r.Body)
	}
	return r.json(n.t)
}

// refusesCursor checks that path answers 400 invalid_request naming cursor.
func (n *node) refusesCursor(key, path string) {
	n.t.Helper()
	r := n.do("GET", path, key, nil)
	if r.Status != 400 || r.errCode(n.t) != "invalid_request" {
		n.t.Errorf("%s: %d %s, want 400 invalid_request", path, r.Status, r.Body)
		return
	}
	if d, _ := r.json(n.t)["error"].(map[string]any)["details"].(map[string]any); d["cursor"] == nil {
		n.t.Errorf("%s: %s, want details naming cursor", path, r.Body)
	}
}

// TestTripCursorKeepsItsFilters: a trip list cursor continues only the
// listing it came from: given with another status, vehicle, date, sort or
// order it is refused naming cursor instead of answering a page of the
// other listing; another limit is the same listing. A page that comes back
// empty after a cursor (the trips past it have left the listing) still
// leads back, to the page that ends at the cursor.
func TestTripCursorKeepsItsFilters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	base := time.Now().Add(-48 * time.Hour).UTC()
	var ids []string
	for i := 0; i < 6; i++ {
		ids = append(ids, n.startTrip(k, fmt.Sprintf("veh-c%d", i), base.Add(time.Duration(i)*time.Hour)))
	}
	first := n.page(k, "/v1/trips?status=active&limit=2")
	next, _ := first["pagination"].(map[string]any)["next_cursor"].(string)
	if next == "" {
		t.Fatalf("first page: %v", first["pagination"])
	}
	c := url.QueryEscape(next)
	for _, q := range []string{"status=completed", "vehicle_id=veh-c1", "status=active&order=asc", "status=active&sort=end_time",
		"status=active&start_date=2020-01-01", ""} {
		n.refusesCursor(k, "/v1/trips?limit=2&cursor="+c+"&"+q)
	}
	if pg := n.page(k, "/v1/trips?status=active&limit=3&cursor="+c); len(pg["trips"].([]any)) != 3 {
		t.Errorf("another limit: %d trips", len(pg["trips"].([]any)))
	}

	// the trips after the first page leave the active listing
	for _, id := range ids[:4] {
		if r := n.do("POST", "/v1/trips/"+id+"/stop", k, nil); r.Status != 200 {
			t.Fatalf("stop: %d %s", r.Status, r.Body)
		}
	}
	empty := n.page(k, "/v1/trips?status=active&limit=2&cursor="+c)
	p := empty["pagination"].(map[string]any)
	if len(empty["trips"].([]any)) != 0 {
		t.Fatalf("page after the cursor: %v", empty["trips"])
	}
	prev, _ := p["prev_cursor"].(string)
	if prev == "" || p["next_cursor"] != nil || p["has_more"] != false {
		t.Fatalf("empty page's pagination %v, want a prev_cursor", p)
	}
	back := n.page(k, "/v1/trips?status=active&limit=2&cursor="+url.QueryEscape(prev))
	var got []string
	for _, tr := range back["trips"].([]any) {
		got = append(got, tr.(map[string]any)["trip_id"].(string))
	}
	if fmt.Sprint(got) != fmt.Sprint([]string{ids[5], ids[4]}) {
		t.Errorf("back from the empty page: %v, want the first page %v", got, []string{ids[5], ids[4]})
	}
}

// TestListingCursorsKeepTheirFilters: the stream, alert, contact and
// vehicle listings tie a cursor to the filters it was made with, as the
// trip list does: the next page of one listing given with another filter
// is refused naming cursor, and with the same filters it continues.
func TestListingCursorsKeepTheirFilters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for i := range 2 {
		body := map[string]any{"fleet_id": "f1", "event_filters": map[string]any{"categories": []string{"safety_events"}},
			"stream_config": map[string]any{"delivery_method": "websocket", "reliability": "at_least_once"}}
		if r := n.do("POST", "/api/v1/streaming/events/start", k, body); r.Status != 201 {
			t.Fatalf("stream %d: %d %s", i, r.Status, r.Body)
		}
		r := n.do("POST", "/v1/emergency/alerts", k, map[string]any{"alert_type": "severe_weather_warning", "severity": "high", "title": fmt.Sprint("Alert ", i), "message": "Take care",
			"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 10},
			"target_audience":   map[string]any{"include": []string{"active_drivers"}, "specific_drivers": []string{"d-1"}},
			"delivery_channels": []map[string]any{{"channel": "in_app_alert"}},
			"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true})
		if r.Status != 201 {
			t.Fatalf("alert %d: %d %s", i, r.Status, r.Body)
		}
		if r := n.do("POST", "/v1/contacts", k, map[string]any{"name": fmt.Sprint("Dispatcher ", i), "roles": []string{"dispatcher"},
			"channels": map[string]any{"sms": fmt.Sprintf("+155500041%02d", i)}}); r.Status != 201 {
			t.Fatalf("contact %d: %d %s", i, r.Status, r.Body)
		}
		if r := n.do("PUT", fmt.Sprintf("/v1/vehicles/veh-%d", i), k, map[string]any{"fleet_id": "f-1"}); r.Status != 200 {
			t.Fatalf("vehicle %d: %d %s", i, r.Status, r.Body)
		}
		nextMilli(t, time.Now()) // distinct creation times
	}
	for _, c := range []struct{ path, list, other string }{
		{"/api/v1/streaming/streams?limit=1", "streams", "kind=telemetry"},
		{"/api/v1/streaming/streams?limit=1", "streams", "status=stopped"},
		{"/v1/emergency/alerts?limit=1", "alerts", "status=cancelled"},
		{"/v1/contacts?limit=1", "contacts", "role=driver"},
		{"/v1/contacts?limit=1", "contacts", "vehicle_id=veh-0"},
		{"/v1/vehicles?limit=1", "vehicles", "fleet_id=f-2"},
	} {
		first := n.page(k, c.path)
		next, _ := first["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			t.Errorf("%s: no next_cursor: %v", c.path, first["pagination"])
			continue
		}
		cur := "&cursor=" + url.QueryEscape(next)
		n.refusesCursor(k, c.path+"&"+c.other+cur)
		if items, _ := n.page(k, c.path+cur)[c.list].([]any); len(items) != 1 {
			t.Errorf("%s: the next page under the same filters has %d items", c.path, len(items))
		}
	}
}
