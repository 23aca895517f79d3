package main

import (
	"slices"
	"testing"
	"time"
)

// TestIdleCostsNoSafetyPoints: idling costs the eco score, not the
// safety score, so the safety analysis lists it as a risk factor that
// cost nothing: score_impact 0, a low-priority recommendation with no
// improvement, and never a primary focus area.
func TestIdleCostsNoSafetyPoints(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-idle", t0)
	// 5 minutes standing with the engine on, a gentle start, then 8
	// minutes at 36 km/h
	speeds := constant(0, 300)
	for v := 2.0; v < 36; v += 2 {
		speeds = append(speeds, v)
	}
	if r := n.batch(k, id, track(t0, 40, -83, append(speeds, constant(36, 480)...))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	s := n.do("GET", "/v1/analytics/safety-score/"+id, k, nil)
	if s.Status != 200 {
		t.Fatalf("safety: %d %s", s.Status, s.Body)
	}
	sa := s.json(t)
	if sa["overall_safety_score"] != 100.0 {
		t.Fatalf("overall_safety_score %v, want 100: idling costs no safety points", sa["overall_safety_score"])
	}
	rfs := sa["risk_factors"].([]any)
	if len(rfs) != 1 || rfs[0].(map[string]any)["factor_type"] != "idle" {
		t.Fatalf("risk factors %v", rfs)
	}
	if rf := rfs[0].(map[string]any); rf["score_impact"] != 0.0 {
		t.Errorf("idle score_impact %v, want 0", rf["score_impact"])
	}
	for _, r := range sa["recommendations"].([]any) {
		if r := r.(map[string]any); r["category"] == "idle" && (r["priority"] != "low" || r["potential_improvement"] != 0.0) {
			t.Errorf("idle recommendation: priority %v, potential_improvement %v", r["priority"], r["potential_improvement"])
		}
	}
	ip := sa["improvement_potential"].(map[string]any)
	if slices.Contains(ip["primary_focus_areas"].([]any), any("idle")) || ip["improvement_points_available"] != 0.0 {
		t.Errorf("improvement_potential %v", ip)
	}
}
