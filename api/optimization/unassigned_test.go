package optimization_test

import (
	"slices"
	"testing"
)

// TestUnassignedReasons: one vehicle with 20 minutes, three destinations
// without time windows, 5 or 6 km out either side of the depot, each 5
// minutes long: a route that serves one leaves the others out for the
// limit that ends the route, named with the advice that fits it, whether
// or not time windows are asked for.
func TestUnassignedReasons(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	for _, tc := range []struct {
		name   string
		edit   func(body, v map[string]any)
		reason string
		advice string
	}{
		{"shift end", func(_, v map[string]any) { v["shift_end"] = "08:20" }, "shift_end", "extend a shift"},
		{"shift end, windows ignored", func(b, v map[string]any) { v["shift_end"] = "08:20"; b["time_windows"] = false }, "shift_end", "extend a shift"},
		{"route duration", func(b, _ map[string]any) { b["constraints"] = map[string]any{"max_route_duration": 20} }, "route_limits",
			"raise max_route_duration or max_route_distance"},
		{"route duration, windows ignored", func(b, _ map[string]any) {
			b["constraints"], b["time_windows"] = map[string]any{"max_route_duration": 20}, false
		}, "route_limits", "raise max_route_duration or max_route_distance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 5, -5, 6}, map[string]int{"a": 0})
			tc.edit(body, byID(body, "vehicles", "vehicle_id", "a"))
			data := plan(t, url, body)
			un := data["unassigned_destinations"].([]any)
			if len(un) != 2 {
				t.Fatalf("unassigned %v", un)
			}
			for _, u := range un {
				m := u.(map[string]any)
				recs, _ := m["recommendations"].([]any)
				if m["reason"] != tc.reason || !slices.Contains(recs, any(tc.advice)) {
					t.Errorf("%v: want reason %s advising %q", m, tc.reason, tc.advice)
				}
			}
			ins := data["optimization_insights"].(map[string]any)["bottlenecks"].([]any)
			if !slices.Contains(ins, any("2 destination(s) unassigned: "+tc.reason)) {
				t.Errorf("bottlenecks %v", ins)
			}
		})
	}
}
