package optimization_test

import (
	"slices"
	"strings"
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
			"raise max_route_duration"},
		{"route duration, windows ignored", func(b, _ map[string]any) {
			b["constraints"], b["time_windows"] = map[string]any{"max_route_duration": 20}, false
		}, "route_limits", "raise max_route_duration"},
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

// TestUnservableAloneUnassigned: a destination that no vehicle can serve
// even on a route of its own (over every capacity, a window closed
// before any vehicle can arrive, past every shift's end, over a route
// limit, a break that leaves it no time) is not a refused request: it
// is unassigned with the constraint that refuses it alone and what
// would help, and the others are planned and counted as the share
// served.
func TestUnservableAloneUnassigned(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	for _, tc := range []struct {
		name   string
		x      float64
		edit   func(body, d map[string]any)
		reason string
		advice string
	}{
		{"over every capacity", 4, func(_, d map[string]any) { d["delivery_requirements"] = map[string]any{"weight": 50} },
			"capacity", "split the delivery: its weight is over every vehicle's capacity"},
		{"window closed before any arrival", 5, func(_, d map[string]any) {
			d["time_window"] = map[string]any{"earliest": "08:00", "latest": "08:02"}
		}, "time_window", "start a shift earlier"},
		{"past every shift end", 400, func(_, _ map[string]any) {}, "shift_end", "extend a shift"},
		{"over max_route_distance", 15, func(b, _ map[string]any) { b["constraints"] = map[string]any{"max_route_distance": 20} },
			"route_limits", "raise max_route_distance"},
		{"over max_route_duration", 40, func(b, _ map[string]any) { b["constraints"] = map[string]any{"max_route_duration": 60} },
			"route_limits", "raise max_route_duration"},
		{"no time beside the break", 5, func(b, d map[string]any) {
			d["time_window"] = map[string]any{"earliest": "08:10", "latest": "08:20", "service_duration": 5}
			for _, v := range b["vehicles"].([]map[string]any) {
				v["break_windows"] = []map[string]any{{"start": "08:00", "end": "08:40", "duration": 30}}
			}
		}, "break_window", "move or widen the break window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 1, 2, 3, tc.x}, map[string]int{"a": 0, "b": 0})
			for _, v := range body["vehicles"].([]map[string]any) {
				v["capacity"] = map[string]any{"weight": 5}
			}
			tc.edit(body, byID(body, "destinations", "destination_id", "d4"))
			data := plan(t, url, body)
			un := data["unassigned_destinations"].([]any)
			if len(un) != 1 {
				t.Fatalf("unassigned %v", un)
			}
			m := un[0].(map[string]any)
			recs, _ := m["recommendations"].([]any)
			if m["destination_id"] != "d4" || m["reason"] != tc.reason || !slices.Contains(recs, any(tc.advice)) {
				t.Errorf("%v: want d4 for %s advising %q", m, tc.reason, tc.advice)
			}
			if slices.Contains(recs, any("add a vehicle")) {
				t.Errorf("%v: another vehicle like the fleet's would not serve it either", recs)
			}
			if got := data["performance_metrics"].(map[string]any)["delivery_efficiency"]; got != 0.75 {
				t.Errorf("delivery_efficiency %v, want 0.75 (3 of 4 served)", got)
			}
			ins := data["optimization_insights"].(map[string]any)
			if !slices.Contains(ins["bottlenecks"].([]any), any("1 destination(s) unassigned: "+tc.reason)) ||
				!slices.Contains(ins["recommendations"].([]any), any(tc.advice)) {
				t.Errorf("insights %v", ins)
			}
		})
	}
}

// TestCapacityAdvice: splitting a delivery is advised only when it is
// over the largest capacity; a delivery that one vehicle could carry on
// its own, crowded out by the others, is advised another vehicle or run.
func TestCapacityAdvice(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	body := line([]float64{0, 1, 2, 3}, map[string]int{"a": 0})
	byID(body, "vehicles", "vehicle_id", "a")["capacity"] = map[string]any{"weight": 5, "volume": 10}
	for _, id := range []string{"d1", "d2"} {
		byID(body, "destinations", "destination_id", id)["delivery_requirements"] = map[string]any{"weight": 3}
	}
	byID(body, "destinations", "destination_id", "d3")["delivery_requirements"] = map[string]any{"weight": 1, "volume": 12}
	data := plan(t, url, body)
	got := map[string][]any{}
	for _, u := range data["unassigned_destinations"].([]any) {
		m := u.(map[string]any)
		if m["reason"] != "capacity" {
			t.Errorf("%v", m)
		}
		got[m["destination_id"].(string)], _ = m["recommendations"].([]any)
	}
	if len(got) != 2 || got["d3"] == nil {
		t.Fatalf("unassigned %v: want d3 and one of d1, d2", got)
	}
	for id, recs := range got {
		split := slices.ContainsFunc(recs, func(r any) bool { return strings.HasPrefix(r.(string), "split") })
		if id == "d3" {
			if !split || !slices.Contains(recs, any("split the delivery: its volume is over every vehicle's capacity")) {
				t.Errorf("%s over the largest volume: %v", id, recs)
			}
			continue
		}
		if split || !slices.Contains(recs, any("add a vehicle or a second run")) {
			t.Errorf("%s fits a vehicle alone: %v", id, recs)
		}
	}
}

// TestCapacityAdviceWithNeeds: a delivery over the capacity of every
// vehicle that provides its special_handling, while a larger vehicle
// without it has room, is advised to be split over those vehicles'
// capacity, not every vehicle's.
func TestCapacityAdviceWithNeeds(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	body := line([]float64{0, 1, 2}, map[string]int{"a": 0, "b": 0})
	a := byID(body, "vehicles", "vehicle_id", "a")
	a["capacity"], a["restrictions"] = map[string]any{"weight": 5}, []string{"refrigerated"}
	byID(body, "vehicles", "vehicle_id", "b")["capacity"] = map[string]any{"weight": 50}
	byID(body, "destinations", "destination_id", "d2")["delivery_requirements"] = map[string]any{"weight": 8, "special_handling": []string{"refrigerated"}}
	data := plan(t, url, body)
	un := data["unassigned_destinations"].([]any)
	if len(un) != 1 {
		t.Fatalf("unassigned %v", un)
	}
	m := un[0].(map[string]any)
	recs, _ := m["recommendations"].([]any)
	if m["destination_id"] != "d2" || m["reason"] != "capacity" ||
		!slices.Contains(recs, any("split the delivery: its weight is over the capacity of every vehicle that provides its special_handling")) ||
		!slices.Contains(recs, any("add a vehicle that provides its special_handling with the capacity for its weight")) {
		t.Errorf("%v", m)
	}
}

// TestUnservableReasonNamesEachCause: a destination that no vehicle can
// serve even on a route of its own is refused for what most vehicles
// refuse it with, not for whichever vehicle came last, and its
// reason_detail names every distinct cause with its vehicles; one some
// vehicle could serve alone says it was crowded out.
func TestUnservableReasonNamesEachCause(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	for _, tc := range []struct {
		name   string
		edit   func(body map[string]any)
		reason string
		detail string
		advice []string // among the recommendations
	}{
		{"two causes, the last vehicle's the rarer", func(body map[string]any) {
			byID(body, "vehicles", "vehicle_id", "c")["shift_end"] = "08:01"
		}, "capacity", "no vehicle can serve it on a route of its own: vehicles a, b cannot carry its weight; " +
			"vehicle c cannot serve it and be back before the shift ends",
			[]string{"add a vehicle with the capacity for its weight, volume and packages together", "extend a shift"}},
		{"capabilities and capacity", func(body map[string]any) {
			byID(body, "destinations", "destination_id", "d3")["delivery_requirements"] = map[string]any{"weight": 8, "special_handling": []string{"refrigerated"}}
			byID(body, "vehicles", "vehicle_id", "c")["restrictions"] = []string{"refrigerated"}
			byID(body, "vehicles", "vehicle_id", "c")["capacity"] = map[string]any{"weight": 5}
			byID(body, "vehicles", "vehicle_id", "a")["capacity"] = map[string]any{"weight": 50}
		}, "capacity", "no vehicle can serve it on a route of its own: vehicles a, b lack refrigerated; vehicle c cannot carry its weight",
			[]string{"split the delivery: its weight is over the capacity of every vehicle that provides its special_handling"}},
		{"every vehicle alike", func(body map[string]any) {
			byID(body, "vehicles", "vehicle_id", "c")["capacity"] = map[string]any{"weight": 5}
		}, "capacity", "no vehicle can serve it on a route of its own: vehicles a, b, c cannot carry its weight",
			[]string{"split the delivery: its weight is over every vehicle's capacity"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 1, 2, 3}, map[string]int{"a": 0, "b": 0, "c": 0})
			for _, id := range []string{"a", "b"} {
				byID(body, "vehicles", "vehicle_id", id)["capacity"] = map[string]any{"weight": 5}
			}
			byID(body, "vehicles", "vehicle_id", "c")["capacity"] = map[string]any{"weight": 50}
			byID(body, "destinations", "destination_id", "d3")["delivery_requirements"] = map[string]any{"weight": 8}
			tc.edit(body)
			data := plan(t, url, body)
			un := data["unassigned_destinations"].([]any)
			if len(un) != 1 {
				t.Fatalf("unassigned %v", un)
			}
			m := un[0].(map[string]any)
			if m["destination_id"] != "d3" || m["reason"] != tc.reason || m["reason_detail"] != tc.detail {
				t.Errorf("%v\nwant d3 for %s: %q", m, tc.reason, tc.detail)
			}
			recs, _ := m["recommendations"].([]any)
			for _, a := range tc.advice {
				if !slices.Contains(recs, any(a)) {
					t.Errorf("recommendations %v lack %q", recs, a)
				}
			}
			if slices.Contains(recs, any("add a vehicle")) {
				t.Errorf("recommendations %v: another vehicle like the fleet's would not serve it either", recs)
			}
		})
	}
	// crowded out: one vehicle of 20 minutes, three destinations
	body := line([]float64{0, 5, -5, 6}, map[string]int{"a": 0})
	byID(body, "vehicles", "vehicle_id", "a")["shift_end"] = "08:20"
	for _, u := range plan(t, url, body)["unassigned_destinations"].([]any) {
		m := u.(map[string]any)
		if d, _ := m["reason_detail"].(string); !strings.HasPrefix(d, "crowded out by the other destinations: vehicle a could serve it on a route of its own") {
			t.Errorf("%v: want it said crowded out", m)
		}
	}
}
