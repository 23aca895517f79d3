package emergency_test

import (
	"fmt"
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

// TestIncidentStatesEveryField: every field of the interface's incident
// is in the answer, null where the service does not know it: a
// breakdown's crash_analysis and insurance_claim, a party's driver_id and
// contact_info without a driver or a directory entry, a status update's
// notes when the change gave none.
func TestIncidentStatesEveryField(t *testing.T) {
	f := start(t, testdb.SQLite)
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_7"})
	if code != 201 {
		t.Fatalf("report: %d %v", code, in)
	}
	code, moved := f.do("PUT", "/v1/emergency/incidents/"+in["incident_id"].(string)+"/status", map[string]any{"status": "escalated"})
	if code != 200 {
		t.Fatalf("status: %d %v", code, moved)
	}
	for what, in := range map[string]map[string]any{"reported": in, "moved": moved} {
		for _, k := range []string{"crash_analysis", "insurance_claim"} {
			if v, ok := in[k]; !ok || v != nil {
				t.Errorf("%s breakdown: %s %v (given: %v), want null", what, k, v, ok)
			}
		}
		p := in["involved_parties"].([]any)[0].(map[string]any)
		ci, _ := p["contact_info"].(map[string]any)
		if p["device_id"] != "veh_7" || p["type"] != "vehicle" || fmt.Sprint(p["driver_id"]) != "<nil>" || len(ci) != 3 ||
			ci["name"] != nil || ci["phone"] != nil || ci["emergency_contact"] != nil {
			t.Errorf("%s: involved party %v, want device_id veh_7 and driver_id and contact_info's name, phone and emergency_contact null", what, p)
		}
		if _, ok := p["driver_id"]; !ok {
			t.Errorf("%s: involved party %v without driver_id", what, p)
		}
	}
	ups := moved["status_updates"].([]any)
	if u := ups[len(ups)-1].(map[string]any); u["status"] != "escalated" {
		t.Errorf("last status update %v", u)
	} else if v, ok := u["notes"]; !ok || v != nil {
		t.Errorf("a status change without notes: status update %v, want notes null", u)
	}
}
