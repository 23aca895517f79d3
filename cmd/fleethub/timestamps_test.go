package main

import (
	"strings"
	"testing"
	"time"
)

// TestTimestampsHeldToRFC3339: a date-time with an offset past 23:59
// (+24:00, +05:60) or a comma before its fractional seconds is not RFC
// 3339, though Go's parser takes it: every route that reads a date-time
// refuses it with a 400 naming the field, and stores or publishes
// nothing; the same request with the offset written right goes through.
func TestTimestampsHeldToRFC3339(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 1_000_000)
	trip := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-ts"}).json(t)["trip_id"].(string)
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	for _, c := range []struct {
		name, method, path string
		body               func(ts string) any
		field              string
	}{
		{"trip start", "POST", "/v1/trips", func(ts string) any { return map[string]any{"vehicle_id": "veh-ts2", "start_time": ts} }, "start_time"},
		{"batch upload", "POST", "/v1/locations/batch", func(ts string) any {
			return map[string]any{"trip_id": trip, "locations": []any{map[string]any{"latitude": 40.0, "longitude": -83.0, "timestamp": ts}}}
		}, "locations[0].timestamp"},
		{"single upload", "POST", "/v1/locations/single", func(ts string) any {
			return map[string]any{"trip_id": trip, "latitude": 40.0, "longitude": -83.0, "timestamp": ts}
		}, "timestamp"},
		{"telemetry", "POST", "/v1/telemetry", func(ts string) any {
			return map[string]any{"messages": []any{map[string]any{"timestamp": ts, "vehicle_id": "veh-ts", "data_type": "environmental", "data": map[string]any{"cabin": map[string]any{"temp": 21}}}}}
		}, "messages[0].timestamp"},
		{"events", "POST", "/v1/events", func(ts string) any {
			return map[string]any{"events": []any{map[string]any{"event_type": "harsh_braking", "category": "safety_events", "timestamp": ts, "severity": "high", "source": map[string]any{"vehicle_id": "veh-ts"}}}}
		}, "events[0].timestamp"},
	} {
		for _, bad := range []string{
			base.Format("2006-01-02T15:04:05") + "+24:00",
			base.Format("2006-01-02T15:04:05") + "-05:60",
			base.Format("2006-01-02T15:04:05") + ",5Z",
		} {
			r := n.do(c.method, c.path, k, c.body(bad))
			if r.Status != 400 || !strings.Contains(string(r.Body), c.field) {
				t.Errorf("%s with %s: %d %s, want 400 naming %s", c.name, bad, r.Status, r.Body, c.field)
			}
		}
	}
	if a := n.do("GET", "/v1/trips/"+trip, k, nil).json(t)["analytics"].(map[string]any); a["locations_count"] != 0.0 {
		t.Errorf("refused uploads stored %v points", a["locations_count"])
	}
	if l := n.do("GET", "/v1/trips", k, nil).json(t)["trips"].([]any); len(l) != 1 {
		t.Errorf("refused starts left %d trips, want the one started", len(l))
	}
	// the offset written right goes through
	good := base.Add(-5*time.Hour-30*time.Minute).Format("2006-01-02T15:04:05") + "-05:30"
	if r := n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": trip, "locations": []any{map[string]any{"latitude": 40.0, "longitude": -83.0, "timestamp": good}}}); r.Status != 200 {
		t.Errorf("upload with %s: %d %s", good, r.Status, r.Body)
	}
}
