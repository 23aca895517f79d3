package emergency_test

import (
	"encoding/json"
	"fmt"
	"net/http"
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

// TestIncidentOfAVehicleOnATrip: a report naming a vehicle and no trip
// happens on the vehicle's open trip: the incident names that trip and
// its driver, and its share link shows the vehicle's last position, as
// when the report names the trip; a report naming another driver than
// the trip's is not tied to it, and a vehicle without an open trip has
// none.
func TestIncidentOfAVehicleOnATrip(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.trip("trp_on", "veh_on", "drv_on", 40.05, -83.07)
	report := func(b map[string]any) map[string]any {
		t.Helper()
		b["event_type"], b["severity_level"] = "breakdown", "low"
		b["location"] = map[string]any{"latitude": 40.0, "longitude": -83.0}
		code, in := f.do("POST", "/v1/emergency/incidents", b)
		if code != 201 {
			t.Fatalf("report %v: %d %v", b, code, in)
		}
		return in
	}
	in := report(map[string]any{"vehicle_id": "veh_on"})
	if in["trip_id"] != "trp_on" || in["driver_id"] != "drv_on" {
		t.Errorf("a vehicle on a trip: trip_id %v, driver_id %v, want trp_on and drv_on", in["trip_id"], in["driver_id"])
	}
	url := in["live_tracking"].(map[string]any)["share_location_url"].(string)
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	var shared map[string]any
	if err := json.NewDecoder(res.Body).Decode(&shared); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if pos, _ := shared["vehicle_position"].(map[string]any); pos == nil || pos["latitude"] != 40.05 || pos["longitude"] != -83.07 {
		t.Errorf("share link of a vehicle on a trip: %v, want its last position", shared)
	}
	if in := report(map[string]any{"vehicle_id": "veh_on", "driver_id": "drv_other"}); in["trip_id"] != nil || in["driver_id"] != "drv_other" {
		t.Errorf("another driver than the trip's: trip_id %v, driver_id %v, want no trip and drv_other", in["trip_id"], in["driver_id"])
	}
	if in := report(map[string]any{"vehicle_id": "veh_parked"}); in["trip_id"] != nil || in["driver_id"] != nil {
		t.Errorf("a vehicle without a trip: trip_id %v, driver_id %v", in["trip_id"], in["driver_id"])
	}
}
