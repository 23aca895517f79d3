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

// TestMaxSpeedNullWhenNoSpeedMeasured: a trip whose one point reported
// no speed_kmh measured no speed: max_speed_kmh is null in the upload's
// snapshot, the trip, the stop's answer and the listing, never 0 km/h;
// a point reporting 0 km/h states 0 in each.
func TestMaxSpeedNullWhenNoSpeedMeasured(t *testing.T) {
	call := serveJSON(t)
	for _, c := range []struct {
		vehicle, speed string
		want           any
	}{{"veh-none", "", nil}, {"veh-still", `,"speed_kmh":0`, 0.0}} {
		status, tr := call("POST", "/v1/trips", `{"vehicle_id":"`+c.vehicle+`","start_time":"2026-01-01T10:00:00Z"}`)
		if status != 201 {
			t.Fatalf("start: %d %v", status, tr)
		}
		id := tr["trip_id"].(string)
		status, m := call("POST", "/v1/locations/single", `{"trip_id":"`+id+`","latitude":40,"longitude":-83,"timestamp":"2026-01-01T10:01:00Z"`+c.speed+`}`)
		if status != 200 {
			t.Fatalf("upload: %d %v", status, m)
		}
		check := func(where string, a any) {
			t.Helper()
			am, _ := a.(map[string]any)
			if got, ok := am["max_speed_kmh"]; !ok || got != c.want {
				t.Errorf("%s, %s: max_speed_kmh %v (present %v), want %v", c.vehicle, where, got, ok, c.want)
			}
		}
		check("upload", m["trip_analytics"])
		if status, m = call("GET", "/v1/trips/"+id, ""); status != 200 {
			t.Fatalf("get: %d %v", status, m)
		}
		check("get", m["analytics"])
		if status, m = call("POST", "/v1/trips/"+id+"/stop", `{}`); status != 200 {
			t.Fatalf("stop: %d %v", status, m)
		}
		check("stop", m["analytics"])
		if status, m = call("GET", "/v1/trips?vehicle_id="+c.vehicle, ""); status != 200 {
			t.Fatalf("list: %d %v", status, m)
		}
		items, _ := m["trips"].([]any)
		if len(items) != 1 {
			t.Fatalf("list: %v, want the trip", m["trips"])
		}
		check("list", items[0].(map[string]any)["analytics"])
	}
}

// TestAlreadyActiveNamesTheTrip: starting a trip for a vehicle whose
// trip is open answers 409 trip_already_active naming that trip and its
// status (active, then paused) in details, and starts nothing.
func TestAlreadyActiveNamesTheTrip(t *testing.T) {
	call := serveJSON(t)
	status, tr := call("POST", "/v1/trips", `{"vehicle_id":"veh-1"}`)
	if status != 201 {
		t.Fatalf("start: %d %v", status, tr)
	}
	id := tr["trip_id"].(string)
	for _, want := range []string{"active", "paused"} {
		if want == "paused" {
			if status, m := call("POST", "/v1/trips/"+id+"/pause", `{}`); status != 200 {
				t.Fatalf("pause: %d %v", status, m)
			}
		}
		status, m := call("POST", "/v1/trips", `{"vehicle_id":"veh-1"}`)
		e, _ := m["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		if status != 409 || e["code"] != "trip_already_active" || d["trip_id"] != id || d["status"] != want || d["vehicle_id"] != "veh-1" {
			t.Errorf("second start beside a %s trip: %d %v, want 409 naming %s", want, status, m, id)
		}
	}
	if status, m := call("GET", "/v1/trips?vehicle_id=veh-1", ""); status != 200 || len(m["trips"].([]any)) != 1 {
		t.Errorf("trips of the vehicle: %d %v, want the one", status, m)
	}
}
