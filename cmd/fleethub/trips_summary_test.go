package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSummaryScoresOverScoredTrips: the listing's avg_safety_score and
// avg_eco_score average the trips that have a score (at least one
// location); a trip without points does not pull them towards 100, and
// when no matching trip has a score they are null.
func TestSummaryScoresOverScoredTrips(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Second)
	n.startTrip(k, "veh-empty", t0)
	driven := n.startTrip(k, "veh-driven", t0)
	// 50 km/h, then a jump to 150: a harsh acceleration costs safety points
	if r := n.batch(k, driven, track(t0.Add(time.Second), 40, -83, append(constant(50, 30), constant(150, 30)...))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	a := n.do("GET", "/v1/trips/"+driven, k, nil).json(t)["analytics"].(map[string]any)
	if a["safety_score"].(float64) >= 100 {
		t.Fatalf("the driven trip's safety score is %v: the track should cost points", a["safety_score"])
	}
	r := n.do("GET", "/v1/trips", k, nil)
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	n.conforms("GET", "/v1/trips", r)
	s := r.json(t)["summary_stats"].(map[string]any)
	if s["avg_safety_score"] != a["safety_score"] || s["avg_eco_score"] != a["eco_score"] {
		t.Errorf("summary averages %v / %v, want the one scored trip's %v / %v (the trip without points has no score)",
			s["avg_safety_score"], s["avg_eco_score"], a["safety_score"], a["eco_score"])
	}
	r = n.do("GET", "/v1/trips?vehicle_id=veh-empty", k, nil)
	n.conforms("GET", "/v1/trips", r)
	s = r.json(t)["summary_stats"].(map[string]any)
	for _, f := range []string{"avg_safety_score", "avg_eco_score"} {
		if v, ok := s[f]; !ok || v != nil {
			t.Errorf("%s of trips without a score = %v (present %v), want null", f, v, ok)
		}
	}
	if s["active_trips"] != 1.0 {
		t.Errorf("active_trips %v, want 1", s["active_trips"])
	}
}

// TestTripWithoutADriver: a trip started without a driver_id renders
// driver_id null wherever the trip is shown (start, read, list, stop,
// the safety analysis' driver benchmark) and user_id null in the
// organization history, never an empty string; the history's purpose of
// a trip without one is null too.
func TestTripWithoutADriver(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Second)
	r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-nd", "start_time": t0.Format(time.RFC3339)})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["trip_id"].(string)
	isNull := func(what string, m map[string]any, field string) {
		t.Helper()
		if v, ok := m[field]; !ok || v != nil {
			t.Errorf("%s: %s = %#v (present %v), want null", what, field, v, ok)
		}
	}
	isNull("start", r.json(t), "driver_id")
	isNull("read", n.do("GET", "/v1/trips/"+id, k, nil).json(t), "driver_id")
	l := n.do("GET", "/v1/trips", k, nil)
	n.conforms("GET", "/v1/trips", l)
	isNull("list", l.json(t)["trips"].([]any)[0].(map[string]any), "driver_id")
	// 11 minutes of driving: enough for the safety analysis
	if r := n.batch(k, id, track(t0.Add(time.Second), 40, -83, constant(40, 660))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	s := n.do("POST", "/v1/trips/"+id+"/stop", k, nil)
	if s.Status != 200 {
		t.Fatalf("stop: %d %s", s.Status, s.Body)
	}
	n.conforms("POST", "/v1/trips/{trip_id}/stop", s)
	isNull("stop", s.json(t), "driver_id")
	h := n.do("GET", "/v1/organizations/org-a/trips/history", k, nil).json(t)["data"].(map[string]any)["trips"].([]any)
	if len(h) != 1 {
		t.Fatalf("history: %v", h)
	}
	isNull("history", h[0].(map[string]any), "user_id")
	isNull("history", h[0].(map[string]any), "purpose") // started without metadata
	sa := n.do("GET", "/v1/analytics/safety-score/"+id, k, nil)
	if sa.Status != 200 {
		t.Fatalf("safety score: %d %s", sa.Status, sa.Body)
	}
	isNull("safety score", sa.json(t)["benchmarks"].(map[string]any)["vs_driver_average"].(map[string]any), "driver_id")
}

// TestHistoryOfInterruptedTrips: an interrupted trip is reachable in the
// organization history through status=interrupted (and only there: it
// is neither completed nor cancelled), and the refusal of an unknown
// status lists every value the history takes.
func TestHistoryOfInterruptedTrips(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	ids := map[string]string{}
	for i, status := range []string{"completed", "cancelled", "interrupted"} {
		id := n.startTrip(k, "veh-"+status, time.Now().Add(-time.Duration(i+1)*time.Hour))
		if r := n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{"completion_status": status}); r.Status != 200 {
			t.Fatalf("stop %s: %d %s", status, r.Status, r.Body)
		}
		ids[status] = id
	}
	for status, id := range ids {
		r := n.do("GET", "/v1/organizations/org-a/trips/history?status="+status, k, nil)
		if r.Status != 200 {
			t.Errorf("history of %s trips: %d %s", status, r.Status, r.Body)
			continue
		}
		n.conforms("GET", "/v1/organizations/{org_id}/trips/history", r)
		d := r.json(t)["data"].(map[string]any)
		tr := d["trips"].([]any)
		if d["filter"] != status || len(tr) != 1 || tr[0].(map[string]any)["id"] != id || tr[0].(map[string]any)["status"] != status {
			t.Errorf("history of %s trips: %s, want only %s", status, r.Body, id)
		}
	}
	bad := n.do("GET", "/v1/organizations/org-a/trips/history?status=nope", k, nil)
	if bad.Status != 400 || !strings.Contains(string(bad.Body), "interrupted") {
		t.Errorf("unknown status: %d %s, want 400 listing interrupted among the values", bad.Status, bad.Body)
	}
}

// TestTripWithoutPointsHasNoScore: a trip with no accepted location has
// driven nothing to score: its safety_score and eco_score are null
// wherever the trip is shown (start, read, listing, stop, an upload whose
// every point was refused), never 100, and sorting by safety_score puts
// it below every scored trip. Its avg_speed_kmh and max_speed_kmh are
// null alike: nothing was measured, not a vehicle standing still.
func TestTripWithoutPointsHasNoScore(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Second)
	noScore := func(what string, a map[string]any, fields ...string) {
		t.Helper()
		for _, f := range fields {
			if v, ok := a[f]; !ok || v != nil {
				t.Errorf("%s: %s = %v (present %v), want null", what, f, v, ok)
			}
		}
	}
	r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-empty", "start_time": t0.Format(time.RFC3339)})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	n.conforms("POST", "/v1/trips", r)
	empty := r.json(t)["trip_id"].(string)
	noScore("start", r.json(t)["analytics"].(map[string]any), "safety_score", "eco_score", "avg_speed_kmh", "max_speed_kmh")
	noScore("read", n.do("GET", "/v1/trips/"+empty, k, nil).json(t)["analytics"].(map[string]any), "safety_score", "eco_score", "avg_speed_kmh", "max_speed_kmh")

	// every point before the trip's start: refused, still nothing to score
	b := n.batch(k, empty, track(t0.Add(-time.Minute), 40, -83, constant(50, 5)))
	if b.Status != 200 || b.json(t)["processed_count"] != 0.0 {
		t.Fatalf("batch of refused points: %d %s", b.Status, b.Body)
	}
	n.conforms("POST", "/v1/locations/batch", b)
	noScore("batch", b.json(t)["trip_analytics"].(map[string]any), "current_safety_score", "avg_speed_kmh")
	s := n.do("POST", "/v1/locations/single", k, map[string]any{"trip_id": empty, "latitude": 40.0, "longitude": -83.0,
		"timestamp": t0.Add(-time.Second).Format(time.RFC3339)})
	if s.Status != 200 || s.json(t)["accepted"] != false {
		t.Fatalf("single refused point: %d %s", s.Status, s.Body)
	}
	n.conforms("POST", "/v1/locations/single", s)
	noScore("single", s.json(t)["trip_analytics"].(map[string]any), "current_safety_score", "avg_speed_kmh", "max_speed_kmh")

	driven := n.startTrip(k, "veh-driven", t0)
	if r := n.batch(k, driven, track(t0.Add(time.Second), 40, -83, append(constant(50, 30), constant(150, 30)...))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	for _, order := range []string{"desc", "asc"} {
		l := n.do("GET", "/v1/trips?sort=safety_score&order="+order, k, nil)
		if l.Status != 200 {
			t.Fatalf("list: %d %s", l.Status, l.Body)
		}
		n.conforms("GET", "/v1/trips", l)
		items := l.json(t)["trips"].([]any)
		want := []string{driven, empty}
		if order == "asc" {
			want = []string{empty, driven}
		}
		var got []string
		for _, it := range items {
			m := it.(map[string]any)
			got = append(got, m["trip_id"].(string))
			a := m["analytics"].(map[string]any)
			if m["trip_id"] == empty {
				noScore("list", a, "safety_score", "eco_score", "avg_speed_kmh", "max_speed_kmh")
			} else if _, ok := a["safety_score"].(float64); !ok {
				t.Errorf("list: the driven trip's safety_score is %v", a["safety_score"])
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("sorted by safety_score %s: %v, want %v (the trip without a score below every score)", order, got, want)
		}
	}
	// a page boundary between the two: the cursor continues to the unscored trip
	p1 := n.do("GET", "/v1/trips?sort=safety_score&limit=1", k, nil).json(t)
	next, _ := p1["pagination"].(map[string]any)["next_cursor"].(string)
	p2 := n.do("GET", "/v1/trips?sort=safety_score&limit=1&cursor="+next, k, nil).json(t)
	if ts := p2["trips"].([]any); len(ts) != 1 || ts[0].(map[string]any)["trip_id"] != empty {
		t.Errorf("second page by safety_score: %v, want the trip without a score", p2["trips"])
	}

	st := n.do("POST", "/v1/trips/"+empty+"/stop", k, nil)
	if st.Status != 200 {
		t.Fatalf("stop: %d %s", st.Status, st.Body)
	}
	n.conforms("POST", "/v1/trips/{trip_id}/stop", st)
	noScore("stop", st.json(t)["analytics"].(map[string]any), "safety_score", "eco_score", "avg_speed_kmh", "max_speed_kmh")
	// the trip_completed event says the same: the feed's long poll waits
	// for it (wait, in seconds)
	p := n.pull(t, k, "types=events&event_type=trip_completed&trip_id="+empty+"&wait=10")
	if len(p.Entries) != 1 {
		t.Fatalf("no trip_completed event of the trip in the feed: %+v", p)
	}
	var ev struct {
		EventData map[string]any `json:"event_data"`
	}
	if err := json.Unmarshal(p.Entries[0].Message, &ev); err != nil {
		t.Fatal(err)
	}
	noScore("trip_completed", ev.EventData, "safety_score", "eco_score")
}

// TestAverageSpeedNeedsTime: a trip whose accepted points span no time (a
// single point) has no average speed: avg_speed_kmh is null in the
// upload's snapshot, the trip, its listing and its stop, not 0; a second
// point later gives it one.
func TestAverageSpeedNeedsTime(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-one-point", t0)
	s := n.do("POST", "/v1/locations/single", k, map[string]any{"trip_id": id, "latitude": 40.0, "longitude": -83.0,
		"timestamp": t0.Add(time.Second).Format(time.RFC3339), "speed_kmh": 30})
	if s.Status != 200 || s.json(t)["accepted"] != true {
		t.Fatalf("single: %d %s", s.Status, s.Body)
	}
	if v := s.json(t)["trip_analytics"].(map[string]any)["avg_speed_kmh"]; v != nil {
		t.Errorf("single point: avg_speed_kmh %v, want null", v)
	}
	if v := n.do("GET", "/v1/trips/"+id, k, nil).json(t)["analytics"].(map[string]any)["avg_speed_kmh"]; v != nil {
		t.Errorf("read after one point: avg_speed_kmh %v, want null", v)
	}
	for _, it := range n.do("GET", "/v1/trips?vehicle_id=veh-one-point", k, nil).json(t)["trips"].([]any) {
		if v := it.(map[string]any)["analytics"].(map[string]any)["avg_speed_kmh"]; v != nil {
			t.Errorf("listing after one point: avg_speed_kmh %v, want null", v)
		}
	}
	b := n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": id, "locations": []any{map[string]any{"latitude": 40.001, "longitude": -83.0,
		"timestamp": t0.Add(11 * time.Second).Format(time.RFC3339), "speed_kmh": 40}}})
	if b.Status != 200 {
		t.Fatalf("batch: %d %s", b.Status, b.Body)
	}
	if v, ok := b.json(t)["trip_analytics"].(map[string]any)["avg_speed_kmh"].(float64); !ok || v <= 0 {
		t.Errorf("two points 10 s apart: avg_speed_kmh %v, want a speed", b.json(t)["trip_analytics"].(map[string]any)["avg_speed_kmh"])
	}
	one := n.startTrip(k, "veh-stopped-at-one", t0)
	if r := n.do("POST", "/v1/locations/single", k, map[string]any{"trip_id": one, "latitude": 40.0, "longitude": -83.0,
		"timestamp": t0.Add(time.Second).Format(time.RFC3339)}); r.Status != 200 {
		t.Fatalf("single: %d %s", r.Status, r.Body)
	}
	st := n.do("POST", "/v1/trips/"+one+"/stop", k, nil)
	if v := st.json(t)["analytics"].(map[string]any)["avg_speed_kmh"]; st.Status != 200 || v != nil {
		t.Errorf("stopped after one point: %d, avg_speed_kmh %v, want null", st.Status, v)
	}
}
