package optimization_test

import (
	"slices"
	"testing"
)

// entries are vehicle id's route_sequence entries of activity kind.
func entries(data map[string]any, id, kind string) []map[string]any {
	var out []map[string]any
	for _, r := range data["optimized_routes"].([]any) {
		rv := r.(map[string]any)
		if rv["vehicle_id"] != id {
			continue
		}
		for _, s := range rv["route_sequence"].([]any) {
			if st := s.(map[string]any); st["activity_type"] == kind {
				out = append(out, st)
			}
		}
	}
	return out
}

// TestBreakWindowDelays: the break must end by 08:40 and the stop takes
// until 08:15, so the break comes first, at the depot, and the stop is
// reached at 08:40 rather than 08:10.
func TestBreakWindowDelays(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	body := line([]float64{0, 10}, map[string]int{"a": 0})
	byID(body, "vehicles", "vehicle_id", "a")["break_windows"] = []map[string]any{{"start": "08:00", "end": "08:40", "duration": 30}}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	br, del := entries(data, "a", "break"), entries(data, "a", "delivery")
	if len(br) != 1 || br[0]["arrival_time"] != "08:00" || br[0]["departure_time"] != "08:30" || br[0]["location"] != nil || br[0]["service_duration"] != 30.0 {
		t.Errorf("break %v, want 08:00–08:30 where the vehicle is", br)
	}
	if len(del) != 1 || del[0]["arrival_time"] != "08:40" {
		t.Errorf("delivery %v, want arrival 08:40", del)
	}
}

// TestBreakMovesStop: the near vehicle's break (08:00–08:30, 30
// minutes) leaves it no way to reach d1 by 08:20, so the far vehicle
// serves it, though the near one would drive less.
func TestBreakMovesStop(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	body := line([]float64{0, 5, 20}, map[string]int{"near": 0, "far": 2})
	byID(body, "vehicles", "vehicle_id", "near")["break_windows"] = []map[string]any{{"start": "08:00", "end": "08:30", "duration": 30}}
	byID(body, "destinations", "destination_id", "d1")["time_window"] = map[string]any{"latest": "08:20", "service_duration": 5}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	if got := routeOf(data, "far"); len(got) != 1 || got[0] != "d1" {
		t.Errorf("the far vehicle serves %v, want d1", got)
	}
}

// TestDefaultBreakRule: with driver_break_requirements and no windows, a
// 10-hour shift takes 30 minutes beginning at most 8 hours in (checked
// by checkPlan), even when the day leaves the driver waiting; a 6-hour
// shift takes none.
func TestDefaultBreakRule(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	body := line([]float64{0, 1, 2, 3}, map[string]int{"long": 0})
	body["constraints"] = map[string]any{"driver_break_requirements": true}
	byID(body, "destinations", "destination_id", "d3")["time_window"] = map[string]any{"earliest": "16:00", "latest": "16:10", "service_duration": 5}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	if len(entries(data, "long", "break")) != 1 {
		t.Errorf("a 10-hour shift without a break: %v", data["optimized_routes"])
	}
	short := line([]float64{0, 1, 2}, map[string]int{"short": 0})
	short["constraints"] = map[string]any{"driver_break_requirements": true}
	byID(short, "vehicles", "vehicle_id", "short")["shift_end"] = "14:00"
	st, res = post(t, url, short)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data = res["data"].(map[string]any)
	checkPlan(t, short, data)
	if n := len(entries(data, "short", "break")); n != 0 {
		t.Errorf("a 6-hour shift takes %d breaks", n)
	}
}

// TestBreakRefusals: break windows and the default rule refuse what they
// cannot honour, by name: more than six windows, windows out of order,
// and a break that the ones before it leave no room for.
func TestBreakRefusals(t *testing.T) {
	url := serve(t, nil)
	win := func(w ...map[string]any) func(b map[string]any) {
		return func(b map[string]any) { byID(b, "vehicles", "vehicle_id", "a")["break_windows"] = w }
	}
	for _, tc := range []struct {
		name  string
		edit  func(b map[string]any)
		field string
	}{
		{"seven windows", win(slices.Repeat([]map[string]any{{"start": "10:00", "end": "11:00", "duration": 5}}, 7)...), "vehicles[0].break_windows"},
		{"out of order", win(map[string]any{"start": "13:00", "end": "14:00", "duration": 30}, map[string]any{"start": "10:00", "end": "11:00", "duration": 30}),
			"vehicles[0].break_windows[1]"},
		{"no room after the first", win(map[string]any{"start": "10:00", "end": "11:00", "duration": 45}, map[string]any{"start": "10:00", "end": "11:00", "duration": 30}),
			"vehicles[0].break_windows[1]"},
		{"second too long", win(map[string]any{"start": "10:00", "end": "11:00", "duration": 30}, map[string]any{"start": "12:00", "end": "12:20", "duration": 30}),
			"vehicles[0].break_windows[1].duration"},
		{"backwards", win(map[string]any{"start": "11:00", "end": "10:00", "duration": 30}), "vehicles[0].break_windows[0].end"},
		{"bad clock", win(map[string]any{"start": "25:00", "end": "10:00", "duration": 30}), "vehicles[0].break_windows[0].start"},
		{"bad end clock", win(map[string]any{"start": "10:00", "end": "10:60", "duration": 30}), "vehicles[0].break_windows[0].end"},
		{"no start", win(map[string]any{"end": "11:00", "duration": 30}), "vehicles[0].break_windows[0].start"},
		{"empty end", win(map[string]any{"start": "10:00", "end": "", "duration": 30}), "vehicles[0].break_windows[0].end"},
		{"too long", win(map[string]any{"start": "10:00", "end": "10:20", "duration": 30}), "vehicles[0].break_windows[0].duration"},
		{"no duration", win(map[string]any{"start": "10:00", "end": "10:20"}), "vehicles[0].break_windows[0].duration"},
		{"zero duration", win(map[string]any{"start": "10:00", "end": "10:20", "duration": 0}), "vehicles[0].break_windows[0].duration"},
		{"after the shift", win(map[string]any{"start": "17:50", "end": "19:00", "duration": 30}), "vehicles[0].break_windows[0]"},
		{"default rule, long shift", func(b map[string]any) {
			b["constraints"] = map[string]any{"driver_break_requirements": true}
			v := byID(b, "vehicles", "vehicle_id", "a")
			v["shift_start"], v["shift_end"] = "05:00", "22:00"
		}, "vehicles[0].shift_end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 1, 2}, map[string]int{"a": 0})
			tc.edit(body)
			st, res := post(t, url, body)
			if st != 400 {
				t.Fatalf("status %d: %v", st, res)
			}
			if e := res["error"].(map[string]any); e["code"] != "validation_failed" || e["details"].(map[string]any)[tc.field] == nil {
				t.Errorf("error %v lacks %s", e, tc.field)
			}
		})
	}
}

// TestDefaultBreakRuleDriving: four stops two hours from the depot and
// from each other, a 12-hour shift: with driver_break_requirements the
// plan serves them all and never drives more than 8 hours without a
// 30-minute break, by the answer's own times (every leg from a
// departure to the next arrival counts as driving, up to the next
// break).
func TestDefaultBreakRuleDriving(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	body := line([]float64{0, 1, 2, 3, 4}, map[string]int{"a": 0})
	m := body["matrix"].(map[string]any)
	dur, dist := m["durations"].([][]float64), m["distances"].([][]float64)
	for i := range dur {
		for j := range dur[i] {
			if i != j {
				dur[i][j], dist[i][j] = 7200, 100
			}
		}
	}
	v := byID(body, "vehicles", "vehicle_id", "a")
	v["shift_start"], v["shift_end"] = "06:00", "18:00"
	for _, d := range body["destinations"].([]map[string]any) {
		d["time_window"] = map[string]any{"service_duration": 1}
	}
	body["constraints"] = map[string]any{"driver_break_requirements": true}
	data := plan(t, url, body)
	if n := len(routeOf(data, "a")); n != 4 {
		t.Fatalf("%d stops served, want 4: %v", n, data["unassigned_destinations"])
	}
	var driving, last float64
	breaks := 0
	for _, e := range data["optimized_routes"].([]any)[0].(map[string]any)["route_sequence"].([]any) {
		s := e.(map[string]any)
		arrive, depart := minutesOf(t, s["arrival_time"].(string)), minutesOf(t, s["departure_time"].(string))
		switch s["activity_type"] {
		case "depot_start":
		case "break":
			if depart-arrive < 30 {
				t.Errorf("break %v–%v, shorter than 30 minutes", s["arrival_time"], s["departure_time"])
			}
			breaks++
			driving = 0
		default:
			driving += arrive - last
			if driving > 8*60 {
				t.Errorf("%.0f minutes of driving without a break by %v at %v", driving, s["activity_type"], s["arrival_time"])
			}
		}
		last = depart
	}
	if breaks != 1 {
		t.Errorf("%d breaks, want 1", breaks)
	}
	// A route held to 8 hours by max_route_duration cannot drive more
	// and takes no break: two stops, back at 14:02.
	body["constraints"] = map[string]any{"driver_break_requirements": true, "max_route_duration": 480}
	data = plan(t, url, body)
	if n := len(routeOf(data, "a")); n != 2 || len(entries(data, "a", "break")) != 0 {
		t.Errorf("within 8 hours: %d stops, breaks %v", n, entries(data, "a", "break"))
	}
}

// TestBreakRefusalsNameEveryProblem: one answer names every problem of
// every break window, and a window's own problems beside a shift that
// cannot be read, so that a client fixes its request in one go.
func TestBreakRefusalsNameEveryProblem(t *testing.T) {
	url := serve(t, nil)
	for _, tc := range []struct {
		name   string
		edit   func(v map[string]any)
		fields []string
	}{
		{"backwards with a negative duration", func(v map[string]any) {
			v["break_windows"] = []map[string]any{{"start": "11:00", "end": "10:00", "duration": -1}}
		}, []string{"vehicles[0].break_windows[0].end", "vehicles[0].break_windows[0].duration"}},
		{"two bad windows", func(v map[string]any) {
			v["break_windows"] = []map[string]any{{"start": "25:00", "end": "10:00", "duration": 30}, {"start": "12:00", "end": "12:20", "duration": 0}}
		}, []string{"vehicles[0].break_windows[0].start", "vehicles[0].break_windows[1].duration"}},
		{"a bad window beside a bad shift", func(v map[string]any) {
			v["shift_start"] = "08:61"
			v["break_windows"] = []map[string]any{{"start": "10:00", "duration": 30}}
		}, []string{"vehicles[0].shift_start", "vehicles[0].break_windows[0].end"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 1, 2}, map[string]int{"a": 0})
			tc.edit(byID(body, "vehicles", "vehicle_id", "a"))
			st, res := post(t, url, body)
			if st != 400 {
				t.Fatalf("status %d: %v", st, res)
			}
			e := res["error"].(map[string]any)
			for _, f := range tc.fields {
				if e["code"] != "validation_failed" || e["details"].(map[string]any)[f] == nil {
					t.Errorf("error %v lacks %s", e, f)
				}
			}
		})
	}
}
