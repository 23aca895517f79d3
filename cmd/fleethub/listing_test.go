package main

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

// pageIDs reads a listing page: the ids of its items under list and id,
// and its next cursor ("" on the last page).
func pageIDs(t *testing.T, r resp, list, id string) ([]string, string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	m := r.json(t)
	ids := []string{}
	for _, it := range m[list].([]any) {
		ids = append(ids, it.(map[string]any)[id].(string))
	}
	p := m["pagination"].(map[string]any)
	next, _ := p["next_cursor"].(string)
	if (next != "") != (p["has_more"] == true) {
		t.Errorf("pagination %v", p)
	}
	return ids, next
}

// allPages follows the cursors of a listing from path.
func allPages(t *testing.T, n *node, key, path, list, id string) ([]string, int) {
	t.Helper()
	var out []string
	pages := 0
	next := ""
	for {
		p := path
		if next != "" {
			p += "&cursor=" + url.QueryEscape(next)
		}
		ids, c := pageIDs(t, n.do("GET", p, key, nil), list, id)
		out = append(out, ids...)
		pages++
		if c == "" || pages > 20 {
			return out, pages
		}
		next = c
	}
}

func TestStreamListing(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	reader := n.key("org-a", "test", []string{"streams:read"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	live := n.key("org-a", "live", []string{"all"}, 100000)
	noPerm := n.key("org-a", "test", []string{"trips:read"}, 100000)
	start := func(key, kind string, body map[string]any) string {
		t.Helper()
		r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
		if r.Status != 201 {
			t.Fatalf("start %s: %d %s", kind, r.Status, r.Body)
		}
		nextMilli(t, time.Now()) // distinct creation times
		return r.json(t)["stream_id"].(string)
	}
	ws := map[string]any{"delivery_method": "websocket"}
	var events, telemetry []string
	for i := range 3 {
		events = append(events, start(k, "events", map[string]any{"fleet_id": fmt.Sprintf("f%d", i), "stream_config": ws}))
	}
	telemetry = append(telemetry, start(k, "telemetry", map[string]any{"stream_config": map[string]any{"frequency": "high"}, "delivery_method": "websocket"}))
	theirs := start(other, "events", map[string]any{"fleet_id": "f1", "stream_config": ws})
	liveOne := start(live, "events", map[string]any{"fleet_id": "f1", "stream_config": ws})
	if r := n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": events[0]}); r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}

	// every stream of the scope, newest first, with the status view
	r := n.do("GET", "/api/v1/streaming/streams", reader, nil)
	n.conforms("GET", "/api/v1/streaming/streams", r)
	ids, next := pageIDs(t, r, "streams", "stream_id")
	want := []string{telemetry[0], events[2], events[1], events[0]}
	if !slices.Equal(ids, want) || next != "" {
		t.Fatalf("listing %v (next %q), want %v", ids, next, want)
	}
	first := r.json(t)["streams"].([]any)[0].(map[string]any)
	if first["stream_type"] != "telemetry" || first["status"] != "active" || first["delivery_method"] != "websocket" ||
		first["counters"] == nil || first["lag"] == nil || first["connected_clients"] != 0.0 || first["websocket_url"] == nil {
		t.Errorf("item %v", first)
	}
	// success belongs to the answer, not to each stream it lists
	if _, ok := first["success"]; ok || r.json(t)["success"] != true {
		t.Errorf("listing: success %v on the answer, item %v; want it on the answer only", r.json(t)["success"], first)
	}
	status := n.do("GET", "/api/v1/streaming/telemetry/status/"+telemetry[0], k, nil).json(t)
	if status["success"] != true {
		t.Errorf("status answer %v, want success true", status)
	}
	for _, f := range []string{"stream_id", "stream_type", "status", "created_at", "configuration", "counters", "lag", "connected_clients"} {
		if fmt.Sprint(status[f]) != fmt.Sprint(first[f]) {
			t.Errorf("%s: listing %v, status %v", f, first[f], status[f])
		}
	}
	for _, id := range []string{theirs, liveOne} {
		if slices.Contains(ids, id) {
			t.Errorf("another scope's stream %s listed", id)
		}
	}
	if ids, _ := pageIDs(t, n.do("GET", "/api/v1/streaming/streams", other, nil), "streams", "stream_id"); !slices.Equal(ids, []string{theirs}) {
		t.Errorf("org-b lists %v", ids)
	}

	// filters
	for q, want := range map[string][]string{
		"kind=events":               {events[2], events[1], events[0]},
		"kind=telemetry":            telemetry,
		"status=stopped":            {events[0]},
		"status=active&kind=events": {events[2], events[1]},
		"status=paused":             {},
	} {
		if ids, _ := pageIDs(t, n.do("GET", "/api/v1/streaming/streams?"+q, k, nil), "streams", "stream_id"); !slices.Equal(ids, want) {
			t.Errorf("%s: %v, want %v", q, ids, want)
		}
	}

	// pages of 1 and of 3 give the same listing
	for _, limit := range []int{1, 3} {
		got, pages := allPages(t, n, k, fmt.Sprintf("/api/v1/streaming/streams?limit=%d", limit), "streams", "stream_id")
		if !slices.Equal(got, want) || pages != (len(want)+limit-1)/limit {
			t.Errorf("limit %d: %v in %d pages", limit, got, pages)
		}
	}
	if got, _ := allPages(t, n, k, "/api/v1/streaming/streams?kind=events&limit=2", "streams", "stream_id"); !slices.Equal(got, []string{events[2], events[1], events[0]}) {
		t.Errorf("filtered pages %v", got)
	}

	// bad requests
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "kind=webhook", "status=running", "cursor=%21%21"} {
		if r := n.do("GET", "/api/v1/streaming/streams?"+q, k, nil); r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	if r := n.do("GET", "/api/v1/streaming/streams", noPerm, nil); r.Status != 403 {
		t.Errorf("without streams:read: %d", r.Status)
	}
}

func TestAlertListing(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	reader := n.key("org-a", "test", []string{"emergency:read"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	noPerm := n.key("org-a", "test", []string{"trips:read"}, 100000)
	create := func(key, title string) string {
		t.Helper()
		r := n.do("POST", "/v1/emergency/alerts", key, map[string]any{"alert_type": "severe_weather_warning", "severity": "high", "title": title, "message": "Take care",
			"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 10},
			"target_audience":   map[string]any{"include": []string{"active_drivers"}, "specific_drivers": []string{"d-1"}},
			"delivery_channels": []map[string]any{{"channel": "in_app_alert"}},
			"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true})
		if r.Status != 201 {
			t.Fatalf("alert: %d %s", r.Status, r.Body)
		}
		nextMilli(t, time.Now()) // distinct creation times
		return r.json(t)["alert_id"].(string)
	}
	var ours []string
	for i := range 4 {
		ours = append(ours, create(k, fmt.Sprintf("Alert %d", i)))
	}
	theirs := create(other, "Not yours")
	if r := n.do("DELETE", "/v1/emergency/alerts/"+ours[1], k, nil); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/emergency/alerts/"+ours[2]+"/acknowledge", k, map[string]any{"recipient_id": "d-1"}); r.Status != 200 {
		t.Logf("acknowledge: %d %s", r.Status, r.Body)
	}

	// newest first, each as GET /v1/emergency/alerts/{id} answers it
	r := n.do("GET", "/v1/emergency/alerts", reader, nil)
	n.conforms("GET", "/v1/emergency/alerts", r)
	ids, next := pageIDs(t, r, "alerts", "alert_id")
	want := []string{ours[3], ours[2], ours[1], ours[0]}
	if !slices.Equal(ids, want) || next != "" {
		t.Fatalf("listing %v (next %q), want %v", ids, next, want)
	}
	items := r.json(t)["alerts"].([]any)
	for i, id := range ids {
		one := n.do("GET", "/v1/emergency/alerts/"+id, k, nil).json(t)
		it := items[i].(map[string]any)
		for _, f := range []string{"status", "title", "acknowledgment_status", "delivery_status", "created_at"} {
			if fmt.Sprint(one[f]) != fmt.Sprint(it[f]) {
				t.Errorf("%s %s: listing %v, get %v", id, f, it[f], one[f])
			}
		}
	}
	if slices.Contains(ids, theirs) {
		t.Error("another organization's alert listed")
	}
	if ids, _ := pageIDs(t, n.do("GET", "/v1/emergency/alerts", other, nil), "alerts", "alert_id"); !slices.Equal(ids, []string{theirs}) {
		t.Errorf("org-b lists %v", ids)
	}

	// filters
	for q, want := range map[string][]string{
		"status=active":    {ours[3], ours[2], ours[0]},
		"status=cancelled": {ours[1]},
		"status=expired":   {},
	} {
		if ids, _ := pageIDs(t, n.do("GET", "/v1/emergency/alerts?"+q, k, nil), "alerts", "alert_id"); !slices.Equal(ids, want) {
			t.Errorf("%s: %v, want %v", q, ids, want)
		}
	}

	// pages
	for _, limit := range []int{1, 3} {
		got, pages := allPages(t, n, k, fmt.Sprintf("/v1/emergency/alerts?limit=%d", limit), "alerts", "alert_id")
		if !slices.Equal(got, want) || pages != (len(want)+limit-1)/limit {
			t.Errorf("limit %d: %v in %d pages", limit, got, pages)
		}
	}
	if got, _ := allPages(t, n, k, "/v1/emergency/alerts?status=active&limit=2", "alerts", "alert_id"); !slices.Equal(got, []string{ours[3], ours[2], ours[0]}) {
		t.Errorf("filtered pages %v", got)
	}

	// bad requests
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "status=sleeping", "cursor=%21%21"} {
		if r := n.do("GET", "/v1/emergency/alerts?"+q, k, nil); r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	if r := n.do("GET", "/v1/emergency/alerts", noPerm, nil); r.Status != 403 {
		t.Errorf("without emergency:read: %d", r.Status)
	}
}

// nextMilli waits until the wall clock has left the millisecond of at:
// the services stamp creation times to the millisecond, so what is
// created next is newer than what was created by at.
func nextMilli(t *testing.T, at time.Time) {
	t.Helper()
	waitfor.Until(t, time.Second, "the next millisecond", func() bool { return time.Now().UnixMilli() > at.UnixMilli() })
}

// TestBadCursorRefusedAlike: every keyset listing refuses a cursor it did
// not make with the same answer, naming the cursor and saying why.
func TestBadCursorRefusedAlike(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for _, path := range []string{
		"/api/v1/streaming/streams",
		"/v1/trips",
		"/v1/vehicles",
		"/v1/contacts",
		"/v1/emergency/alerts",
		"/api/v1/streaming/events/deliveries/str_missing",
	} {
		for _, c := range []string{"garbage", "YWJj"} {
			r := n.do("GET", path+"?cursor="+c, k, nil)
			if r.Status != 400 || r.errCode(t) != "invalid_request" {
				t.Errorf("%s?cursor=%s: %d %s", path, c, r.Status, r.Body)
				continue
			}
			e := r.json(t)["error"].(map[string]any)
			if e["message"] != "cursor: is not a cursor of this listing" || fmt.Sprint(e["details"]) != "map[cursor:is not a cursor of this listing]" {
				t.Errorf("%s?cursor=%s: %s", path, c, r.Body)
			}
		}
	}
}

// TestVehicleAndContactListingsSayHasMore: the vehicle and contact
// listings page as the others do, with has_more true exactly on a page
// that has a next_cursor (pageIDs checks each page).
func TestVehicleAndContactListingsSayHasMore(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	var vehicles, contacts []string
	for i := range 3 {
		id := fmt.Sprintf("veh-%d", i)
		if r := n.do("PUT", "/v1/vehicles/"+id, k, map[string]any{"fleet_id": "f-1"}); r.Status != 200 {
			t.Fatalf("vehicle %d: %d %s", i, r.Status, r.Body)
		}
		vehicles = append(vehicles, id)
		r := n.do("POST", "/v1/contacts", k, map[string]any{"name": fmt.Sprint("Dispatcher ", i), "roles": []string{"dispatcher"},
			"channels": map[string]any{"sms": fmt.Sprintf("+155500042%02d", i)}})
		if r.Status != 201 {
			t.Fatalf("contact %d: %d %s", i, r.Status, r.Body)
		}
		contacts = append(contacts, r.json(t)["contact_id"].(string))
	}
	for _, l := range []struct {
		path, list, id string
		want           []string
	}{
		{"/v1/vehicles?limit=2", "vehicles", "vehicle_id", vehicles},
		{"/v1/contacts?limit=2", "contacts", "contact_id", contacts},
	} {
		// every item once over the two pages (records made within one
		// millisecond keep no order of their making)
		got, pages := allPages(t, n, k, l.path, l.list, l.id)
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(l.want))) || pages != 2 {
			t.Errorf("%s: %v in %d pages, want %v in 2", l.path, got, pages, l.want)
		}
	}
}
