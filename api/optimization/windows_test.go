package optimization_test

import "testing"

// TestComplianceAgainstWindows: d1 is open 14:00–15:00, d2 all day. With
// time_windows false the plan ignores d1's window and serves it in the
// morning, outside it: half the stops are within their windows, not
// all; with the windows kept it waits for 14:00 and both are.
func TestComplianceAgainstWindows(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	for _, tc := range []struct {
		windows bool
		want    float64
	}{{false, 50}, {true, 100}} {
		body := line([]float64{0, 1, 2}, map[string]int{"a": 0})
		byID(body, "destinations", "destination_id", "d1")["time_window"] = map[string]any{"earliest": "14:00", "latest": "15:00", "service_duration": 5}
		body["time_windows"] = tc.windows
		st, res := post(t, url, body)
		if st != 200 {
			t.Fatalf("%d %v", st, res)
		}
		data := res["data"].(map[string]any)
		if got := metric(data, "time_window_compliance"); got != tc.want {
			t.Errorf("time_windows %v: compliance %v, want %v (route %v)", tc.windows, got, tc.want, entries(data, "a", "delivery"))
		}
	}
}

// TestNoShareOfNothing: a plan that serves no destination (one heavier
// than the only vehicle can carry) has no share of its served
// destinations on time, and a first plan that drove nothing has no
// percent of its distance saved: time_window_compliance and
// improvement_percentage are null, not 0; a plan that serves one states
// both.
func TestNoShareOfNothing(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	for _, tc := range []struct {
		weight float64
		null   bool
	}{{10, true}, {1, false}} {
		body := line([]float64{0, 1}, map[string]int{"a": 0})
		body["vehicles"].([]map[string]any)[0]["capacity"] = map[string]any{"weight": 5}
		byID(body, "destinations", "destination_id", "d1")["delivery_requirements"] = map[string]any{"weight": tc.weight}
		st, res := post(t, url, body)
		if st != 200 {
			t.Fatalf("%d %v", st, res)
		}
		data := res["data"].(map[string]any)
		pm, im := data["performance_metrics"].(map[string]any), data["improvement_summary"].(map[string]any)
		compliance, cok := pm["time_window_compliance"]
		pct, pok := im["improvement_percentage"]
		if !cok || !pok || (compliance == nil) != tc.null || (pct == nil) != tc.null {
			t.Errorf("a delivery of %v kg on a 5 kg vehicle (%d unassigned): time_window_compliance %v, improvement_percentage %v; want null: %v",
				tc.weight, len(data["unassigned_destinations"].([]any)), compliance, pct, tc.null)
		}
	}
}
