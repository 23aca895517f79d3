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
