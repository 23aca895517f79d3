package trips_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestShortDataSaysWhy: the route of a trip of one point and the safety
// analysis of a trip short of 50 points or 10 minutes answer the
// interface's 404 trip_not_found, with a message and details that say
// what the trip lacks (its count or span and the minimum), so that a
// client can tell an existing trip short of data from a wrong id, which
// answers details {}.
func TestShortDataSaysWhy(t *testing.T) {
	call := serveJSON(t)
	trip := func(vehicle string, n int, stepS int) string {
		t.Helper()
		status, tr := call("POST", "/v1/trips", `{"vehicle_id":"`+vehicle+`","start_time":"2026-01-01T10:00:00Z"}`)
		if status != 201 {
			t.Fatalf("start: %d %v", status, tr)
		}
		id := tr["trip_id"].(string)
		var locs []string
		for i := range n {
			locs = append(locs, fmt.Sprintf(`{"latitude":%.4f,"longitude":-83,"timestamp":"2026-01-01T10:%02d:%02dZ","speed_kmh":30}`,
				40+0.001*float64(i), (i*stepS)/60, (i*stepS)%60))
		}
		if status, m := call("POST", "/v1/locations/batch", `{"trip_id":"`+id+`","locations":[`+strings.Join(locs, ",")+`]}`); status != 200 {
			t.Fatalf("batch: %d %v", status, m)
		}
		return id
	}
	refusal := func(path string) (string, map[string]any) {
		t.Helper()
		status, m := call("GET", path, "")
		e, _ := m["error"].(map[string]any)
		if status != 404 || e["code"] != "trip_not_found" {
			t.Fatalf("%s: %d %v, want 404 trip_not_found", path, status, m)
		}
		d, _ := e["details"].(map[string]any)
		return e["message"].(string), d
	}

	one := trip("veh-one", 1, 0)
	msg, d := refusal("/v1/trips/" + one + "/route")
	if d["locations_count"] != "is 1; at least 2 are needed" || !strings.Contains(msg, "at least 2") {
		t.Errorf("route of one point: %q %v, want locations_count named", msg, d)
	}

	few := trip("veh-few", 49, 15) // 49 points over 12 minutes
	msg, d = refusal("/v1/analytics/safety-score/" + few)
	if d["locations_count"] != "is 49; at least 50 are needed" || d["duration_minutes"] != nil || !strings.Contains(msg, "has 49 over 12 minutes") {
		t.Errorf("49 points over 12 minutes: %q %v, want locations_count alone named", msg, d)
	}
	short := trip("veh-short", 50, 12) // 50 points over 9.8 minutes
	msg, d = refusal("/v1/analytics/safety-score/" + short)
	if d["duration_minutes"] != "is 9.8; at least 10 are needed" || d["locations_count"] != nil || !strings.Contains(msg, "over 9.8 minutes") {
		t.Errorf("50 points over 9.8 minutes: %q %v, want duration_minutes alone named", msg, d)
	}

	if _, d := refusal("/v1/analytics/safety-score/trip_missing"); len(d) != 0 {
		t.Errorf("a missing trip: details %v, want none", d)
	}
}
