package emergency_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/store/testdb"
)

// TestIncidentLocationStatesEveryField: an incident's location carries
// every field of the interface (latitude, longitude, address, accuracy,
// landmark) in every answer, null where the report gave none, never left
// out; those reported come back as reported.
func TestIncidentLocationStatesEveryField(t *testing.T) {
	f := start(t, testdb.SQLite)
	code, bare := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}})
	if code != 201 {
		t.Fatalf("report: %d %v", code, bare)
	}
	code, full := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.1, "longitude": -83.1, "address": "I-70 mile 100", "accuracy": 12.5, "landmark": "rest area"}})
	if code != 201 {
		t.Fatalf("report: %d %v", code, full)
	}
	_, read := f.do("GET", "/v1/emergency/incidents/"+bare["incident_id"].(string), nil)
	_, listed := f.do("GET", "/v1/emergency/incidents", nil)
	byID := map[string]map[string]any{}
	for _, in := range listed["incidents"].([]any) {
		in := in.(map[string]any)
		byID[in["incident_id"].(string)] = in
	}
	for what, in := range map[string]map[string]any{"reported": bare, "read": read, "listed": byID[bare["incident_id"].(string)]} {
		loc := in["location"].(map[string]any)
		for _, k := range []string{"address", "accuracy", "landmark"} {
			if v, ok := loc[k]; !ok || v != nil {
				t.Errorf("%s, reported without %s: location %v, want %s null", what, k, loc, k)
			}
		}
	}
	for what, in := range map[string]map[string]any{"reported": full, "listed": byID[full["incident_id"].(string)]} {
		loc := in["location"].(map[string]any)
		if loc["address"] != "I-70 mile 100" || loc["accuracy"] != 12.5 || loc["landmark"] != "rest area" || loc["latitude"] != 40.1 {
			t.Errorf("%s: location %v, want it as reported", what, loc)
		}
	}
}
