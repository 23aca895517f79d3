package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

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
	// Nothing changes (a managed key, a value as it is): nothing is
	// written, no history entry, updated_at as it was.
	for _, same := range []map[string]any{{"updated_by": "mallory"}, {"route_name": "R1", "tags": []string{"x"}}} {
		r2 := n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": same})
		m2 := r2.json(t)
		if r2.Status != 200 || len(m2["metadata_history"].([]any)) != len(h) || m2["updated_at"] != m["updated_at"] ||
			m2["metadata"].(map[string]any)["updated_by"] != md["updated_by"] {
			t.Errorf("%v changes nothing, yet: %d %s (before: %d history entries, updated_at %v)", same, r2.Status, r2.Body, len(h), m["updated_at"])
		}
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
	if r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, big); r.Status != 413 || r.errCode(t) != "payload_too_large" || !strings.Contains(string(r.Body), `"details":{"metadata":`) {
		t.Fatalf("70 KB metadata: %d %.200s", r.Status, r.Body)
	}
	big = map[string]any{"metadata": map[string]any{"blob": strings.Repeat("x", 65530)}}
	if r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, big); r.Status != 413 || !strings.Contains(string(r.Body), `"details":{"metadata":`) {
		t.Fatalf("64 KB of metadata and more: %d %.200s", r.Status, r.Body)
	}
	// the same at the start, and no trip is started
	big = map[string]any{"vehicle_id": "veh-big", "metadata": map[string]any{"notes": strings.Repeat("x", 66000)}}
	if r := n.do("POST", "/v1/trips", k, big); r.Status != 413 || r.errCode(t) != "payload_too_large" || strings.Contains(string(r.Body), "trips:") || !strings.Contains(string(r.Body), `"details":{"metadata":`) {
		t.Fatalf("start with 66 KB metadata: %d %.200s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-big"}); r.Status != 201 {
		t.Fatalf("start after the refused one: %d %s", r.Status, r.Body)
	}
	n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
	if r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"after": true}}); r.Status != 200 {
		t.Errorf("metadata on completed trip: %d", r.Status)
	}
}

// TestMetadataTypedKeys: the metadata keys the interface types (purpose,
// priority and the other strings; tags an array of strings) are refused
// with a 400 naming each when sent as another type, at start and on
// update, and the refused update changes nothing.
func TestMetadataTypedKeys(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-t", "metadata": map[string]any{"tags": "a", "priority": 3}})
	if r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Fatalf("start with typed keys mistyped: %d %s", r.Status, r.Body)
	}
	for _, f := range []string{"metadata.tags", "metadata.priority"} {
		if !strings.Contains(string(r.Body), f) {
			t.Errorf("start's error does not name %s: %s", f, r.Body)
		}
	}
	if r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-t", "start_time": "yesterday"}); r.Status != 400 ||
		r.json(t)["error"].(map[string]any)["details"].(map[string]any)["start_time"] == nil {
		t.Errorf("start_time yesterday: %d %s", r.Status, r.Body)
	}
	id := n.startTrip(k, "veh-1", time.Now())
	before := n.do("GET", "/v1/trips/"+id, k, nil).json(t)["metadata"]
	for _, bad := range []map[string]any{{"purpose": 5}, {"tags": "a"}, {"tags": []any{"a", 1}}, {"route_name": map[string]any{"a": 1}}, {"purpose": "ok", "external_id": true}} {
		r := n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": bad})
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%v: %d %s", bad, r.Status, r.Body)
			continue
		}
		for key := range bad {
			if key == "purpose" && bad[key] == "ok" {
				continue
			}
			if !strings.Contains(string(r.Body), "metadata."+key) {
				t.Errorf("%v: the error does not name metadata.%s: %s", bad, key, r.Body)
			}
		}
	}
	if after := n.do("GET", "/v1/trips/"+id, k, nil).json(t)["metadata"]; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("refused updates changed the metadata: %v, was %v", after, before)
	}
	r = n.do("PUT", "/v1/trips/"+id+"/metadata", k, map[string]any{"metadata": map[string]any{"tags": []string{"a", "b"}, "priority": "urgent", "estimated_revenue": 12.5}})
	if r.Status != 200 {
		t.Errorf("well-typed update: %d %s", r.Status, r.Body)
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
	// a 0.57 g stop is moderate: low risk of collision and for the
	// passengers, with the advice for harsh braking; the hub did nothing
	hb := got[1].Event
	if ra := hb.RiskAssessment; hb.Severity != "medium" || ra["collision_risk"] != "low" || ra["passenger_impact"] != "low" ||
		fmt.Sprint(ra["recommended_actions"]) != "[review the event with the driver keep a longer following distance and anticipate stops]" {
		t.Errorf("harsh_braking (%s) risk_assessment %v", hb.Severity, ra)
	}
	if aa := hb.AutomaticActions; aa["alert_sent"] != false || aa["incident_logged"] != false || aa["supervisor_notified"] != false {
		t.Errorf("harsh_braking automatic_actions %v", aa)
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

// TestDateRangesRefusedAlike: the trip list and the incident listing take
// a range whose start is before its end (a date alone as the end is the
// whole of that day, so a day to itself is a range), and refuse one whose
// start is at or after its end with 400 invalid_date_range whose details
// name both parameters with their values.
func TestDateRangesRefusedAlike(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	cases := []struct{ path, from, to string }{
		{"/v1/trips", "start_date", "end_date"},
		{"/v1/emergency/incidents", "date_from", "date_to"},
	}
	for _, c := range cases {
		q := func(from, to string) string { return c.path + "?" + c.from + "=" + from + "&" + c.to + "=" + to }
		for _, v := range [][2]string{{"2026-01-01", "2026-01-02"}, {"2026-01-01", "2026-01-01"}} {
			if r := n.do("GET", q(v[0], v[1]), k, nil); r.Status != 200 {
				t.Errorf("%s: %d %s", q(v[0], v[1]), r.Status, r.Body)
			}
		}
		for _, v := range [][2]string{{"2026-01-02", "2026-01-01"}, {"2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"}} {
			r := n.do("GET", q(v[0], v[1]), k, nil)
			var e struct {
				Error struct {
					Code    string            `json:"code"`
					Details map[string]string `json:"details"`
				} `json:"error"`
			}
			_ = json.Unmarshal(r.Body, &e)
			want := map[string]string{c.from: v[0], c.to: v[1]}
			if len(v[0]) == len("2026-01-01") {
				// a date alone starts a range at its midnight and ends
				// one at its last millisecond
				want[c.from] = v[0] + "T00:00:00Z"
				want[c.to] = v[1] + "T23:59:59.999Z"
			}
			if r.Status != 400 || e.Error.Code != "invalid_date_range" || fmt.Sprint(e.Error.Details) != fmt.Sprint(want) {
				t.Errorf("%s: %d %s, want invalid_date_range with details %v", q(v[0], v[1]), r.Status, r.Body, want)
			}
		}
	}
}

// TestDateRangesTakeBothEnds: the trip list and the incident listing take
// in what falls on either end of their ranges, and a date alone as the end
// stands for the whole of that day: end_date=D lists a trip that started
// on D, and a day from itself to itself lists that day's.
func TestDateRangesTakeBothEnds(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	day, yesterday := today.Format("2006-01-02"), today.AddDate(0, 0, -1).Format("2006-01-02")
	midnight := n.startTrip(k, "veh-midnight", today)                // the first millisecond of today
	late := n.startTrip(k, "veh-late", today.Add(-time.Millisecond)) // the last of yesterday
	trips := func(query string) []string {
		t.Helper()
		r := n.do("GET", "/v1/trips?"+query, k, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		var ids []string
		for _, tr := range r.json(t)["trips"].([]any) {
			ids = append(ids, tr.(map[string]any)["trip_id"].(string))
		}
		slices.Sort(ids)
		return ids
	}
	both := []string{midnight, late}
	slices.Sort(both)
	ms := func(at time.Time) string { return at.Format("2006-01-02T15:04:05.000Z") }
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"start_date=" + day + "&end_date=" + day, []string{midnight}},
		{"start_date=" + yesterday + "&end_date=" + yesterday, []string{late}},
		{"end_date=" + yesterday, []string{late}},
		{"start_date=" + day, []string{midnight}},
		{"start_date=" + ms(today.Add(-time.Millisecond)) + "&end_date=" + ms(today), both},
		{"start_date=" + ms(today) + "&end_date=" + ms(today.Add(time.Millisecond)), []string{midnight}},
		{"end_date=" + ms(today.Add(-time.Millisecond)), []string{late}},
	} {
		if got := trips(c.query); !slices.Equal(got, c.want) {
			t.Errorf("trips?%s: %v, want %v (midnight %s, late %s)", c.query, got, c.want, midnight, late)
		}
	}

	r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "moderate", "vehicle_id": "veh-1",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "description": "flat tyre"})
	if r.Status != 201 {
		t.Fatalf("incident: %d %s", r.Status, r.Body)
	}
	created := time.Now().UTC().Format("2006-01-02")
	count := func(query string) float64 {
		t.Helper()
		r := n.do("GET", "/v1/emergency/incidents?"+query, k, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		return r.json(t)["pagination"].(map[string]any)["total_count"].(float64)
	}
	if got := count("date_from=" + created + "&date_to=" + created); got != 1 {
		t.Errorf("incidents from %s to %s: %v, want today's 1", created, created, got)
	}
	before := today.AddDate(0, 0, -1)
	if created != day { // the day turned between the two
		before = today
	}
	if got := count("date_to=" + before.Format("2006-01-02")); got != 0 {
		t.Errorf("incidents to %s: %v, want 0", before.Format("2006-01-02"), got)
	}
}
