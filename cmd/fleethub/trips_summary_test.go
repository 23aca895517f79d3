package main

import (
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
