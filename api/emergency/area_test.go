package emergency_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// areaBody is an alert to active drivers in area.
func areaBody(area map[string]any) map[string]any {
	b := alertBody([]string{"active_drivers"}, nil, "in_app_alert")
	b["affected_area"] = area
	return b
}

func TestAreasFromData(t *testing.T) {
	ix, err := geocode.Load("../../internal/geocode/testdata/addresses.csv")
	if err != nil {
		t.Fatal(err)
	}
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		st := open(t)
		f := startWith(t, st, &gateway{}, emergency.AlertsConfig{Places: ix}, nil)
		bare := startWith(t, st, &gateway{}, emergency.AlertsConfig{}, nil)
		f.trip("trp_w", "veh_w", "drv_westerville", 40.125, -82.93) // among the Westerville addresses
		f.trip("trp_g", "veh_g", "drv_glen_oaks", 40.745, -73.715)  // among the Glen Oaks addresses
		f.trip("trp_c", "veh_c", "drv_columbus", 39.96, -83.0)      // 20 km from Westerville
		f.trip("trp_r", "veh_r", "drv_on_route", 40.0505, -83.1)    // beside the route's first leg
		f.trip("trp_x", "veh_x", "drv_off_route", 40.2, -83.2)      // 15 km off it
		now := time.Now().UTC()
		doc, _ := json.Marshal(map[string]any{"optimization_id": "opt_1", "optimized_routes": []any{
			map[string]any{"vehicle_id": "veh_9", "route_sequence": []any{
				map[string]any{"location": map[string]any{"latitude": 40.05, "longitude": -83.2}},
				map[string]any{"location": map[string]any{"latitude": 40.05, "longitude": -83.0}},
			}},
		}})
		if err := st.CreateOptimization(t.Context(), store.Optimization{ID: "opt_1", Org: "org-a", Env: "test", Status: "completed", Doc: doc, Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		// an optimization still running has no routes yet: its ground is
		// not known
		if err := st.CreateOptimization(t.Context(), store.Optimization{ID: "opt_q", Org: "org-a", Env: "test", Status: "running", Doc: []byte(`{"optimization_id":"opt_q"}`), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			f      *fixture
			area   map[string]any
			method string
			want   []string
		}{
			{"city", f, map[string]any{"type": "city", "city": "Westerville"}, "address_data", []string{"drv_westerville"}},
			{"city with a wide buffer", f, map[string]any{"type": "city", "city": "westerville", "state": "OH", "buffer_km": 20}, "address_data",
				[]string{"drv_columbus", "drv_on_route", "drv_westerville"}},
			{"state", f, map[string]any{"type": "state", "state": "NY"}, "address_data", []string{"drv_glen_oaks"}},
			{"unknown city", f, map[string]any{"type": "city", "city": "Atlantis"}, "approximated", nil},
			{"no address data", bare, map[string]any{"type": "city", "city": "Westerville"}, "approximated", nil},
			{"route", f, map[string]any{"type": "route", "route_id": "opt_1"}, "route", []string{"drv_on_route"}},
			{"route of a vehicle", f, map[string]any{"type": "route", "route_id": "opt_1:veh_9", "buffer_km": 0.5}, "route", []string{"drv_on_route"}},
			{"route of an optimization still running", f, map[string]any{"type": "route", "route_id": "opt_q"}, "approximated", nil},
		} {
			code, al := c.f.do("POST", "/v1/emergency/alerts", areaBody(c.area))
			if code != 201 {
				t.Fatalf("%s: %d %v", c.name, code, al)
			}
			res := al["area_resolution"].(map[string]any)
			if res["method"] != c.method || (c.method == "approximated") != (res["approximated"] == true) {
				t.Errorf("%s: area_resolution %v", c.name, res)
			}
			// an approximated area's extent is not known: no radius
			if r := al["affected_area_analysis"].(map[string]any)["estimated_impact_radius_km"]; (c.method == "approximated") != (r == nil) {
				t.Errorf("%s: estimated_impact_radius_km %v", c.name, r)
			}
			want := c.want
			if c.method == "approximated" {
				// Approximated: every active driver, and the answer says so.
				want = []string{"drv_columbus", "drv_glen_oaks", "drv_off_route", "drv_on_route", "drv_westerville"}
			}
			if got := recipientIDs(al); !slices.Equal(got, want) {
				t.Errorf("%s: recipients %v, want %v", c.name, got, want)
			}
		}
		// a route_id that names no optimization, or a vehicle its plan has
		// no route for, is refused naming it: approximated, the alert would
		// reach every active driver of the organization
		_, before := f.do("GET", "/v1/emergency/alerts?limit=200", nil)
		for _, id := range []string{"opt_none", "opt_1:veh_none", ":veh_9"} {
			code, out := f.do("POST", "/v1/emergency/alerts", areaBody(map[string]any{"type": "route", "route_id": id}))
			if code != 400 || out["error"].(map[string]any)["details"].(map[string]any)["affected_area.route_id"] == nil {
				t.Errorf("route_id %q: %d %v, want 400 naming affected_area.route_id", id, code, out)
			}
		}
		if _, after := f.do("GET", "/v1/emergency/alerts?limit=200", nil); len(after["alerts"].([]any)) != len(before["alerts"].([]any)) {
			t.Errorf("refused route alerts were stored: %d alerts, %d before", len(after["alerts"].([]any)), len(before["alerts"].([]any)))
		}
		if code, out := f.do("POST", "/v1/emergency/alerts", areaBody(map[string]any{"type": "city", "city": "Westerville", "buffer_km": -1})); code != 400 ||
			out["error"].(map[string]any)["details"].(map[string]any)["affected_area.buffer_km"] == nil {
			t.Errorf("a negative buffer: %d %v", code, out)
		}
	})
}
