package trips_test

import (
	"fmt"
	"testing"
)

// TestFuelEfficiencyNullWithoutFuel: fuel_efficiency_kmpl is null while
// the trip has burnt no fuel (just started, or a single point: no
// distance and no idling), in the trip and the stop's answer, and a
// number once it has (distance over liters).
func TestFuelEfficiencyNullWithoutFuel(t *testing.T) {
	call := serveJSON(t)
	fuel := func(where string, m map[string]any) map[string]any {
		t.Helper()
		a, _ := m["analytics"].(map[string]any)
		f, ok := a["fuel_efficiency"].(map[string]any)
		if !ok {
			t.Fatalf("%s: analytics %v without fuel_efficiency", where, m["analytics"])
		}
		return f
	}
	status, tr := call("POST", "/v1/trips", `{"vehicle_id":"veh-1","start_time":"2026-01-01T10:00:00Z"}`)
	if status != 201 {
		t.Fatalf("start: %d %v", status, tr)
	}
	if f := fuel("start", tr); f["fuel_efficiency_kmpl"] != nil || f["fuel_consumed_liters"] != 0.0 {
		t.Errorf("a new trip: %v, want 0 L and a null efficiency", f)
	}
	id := tr["trip_id"].(string)
	if status, m := call("POST", "/v1/locations/single", `{"trip_id":"`+id+`","latitude":40,"longitude":-83,"timestamp":"2026-01-01T10:01:00Z"}`); status != 200 {
		t.Fatalf("upload: %d %v", status, m)
	}
	status, m := call("POST", "/v1/trips/"+id+"/stop", `{}`)
	if status != 200 {
		t.Fatalf("stop: %d %v", status, m)
	}
	if f := fuel("stop", m); f["fuel_efficiency_kmpl"] != nil || f["fuel_consumed_liters"] != 0.0 {
		t.Errorf("a trip of one point: %v, want 0 L and a null efficiency", f)
	}

	status, tr = call("POST", "/v1/trips", `{"vehicle_id":"veh-2","start_time":"2026-01-01T10:00:00Z"}`)
	if status != 201 {
		t.Fatalf("start: %d %v", status, tr)
	}
	id = tr["trip_id"].(string)
	locs := ""
	for i := range 20 {
		locs += fmt.Sprintf(`%s{"latitude":%.4f,"longitude":-83,"timestamp":"2026-01-01T10:%02d:00Z","speed_kmh":60}`, map[bool]string{true: ",", false: ""}[i > 0], 40+0.01*float64(i), i+1)
	}
	if status, m := call("POST", "/v1/locations/batch", `{"trip_id":"`+id+`","locations":[`+locs+`]}`); status != 200 {
		t.Fatalf("batch: %d %v", status, m)
	}
	status, m = call("GET", "/v1/trips/"+id, "")
	if status != 200 {
		t.Fatalf("get: %d %v", status, m)
	}
	f := fuel("get", m)
	if k, ok := f["fuel_efficiency_kmpl"].(float64); !ok || !(k > 0) || !(f["fuel_consumed_liters"].(float64) > 0) {
		t.Errorf("a trip of 20 km: %v, want liters and a positive efficiency", f)
	}
}
