package main

import (
	"net/url"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

// TestOpenAPIDescribesRealAnswers sends real requests to the routes the
// corpus of TestNoComputedFieldIsConstant does not reach (route
// optimization with its options, a stored optimization and its apply,
// map matching, autocomplete, validation, tile metadata, vehicle profiles,
// health probes) and checks every answer, successes and refusals alike,
// against the schema the OpenAPI document gives for its status: a field
// the document does not describe, one it requires and the answer lacks, a
// value outside a documented set or of another type fails the test.
func TestOpenAPIDescribesRealAnswers(t *testing.T) {
	cfg := testConfig(t)
	cfg.Addresses = addressFixture(t)
	cfg.OSM = tinyOSM(t)
	cfg.Tiles = tilestest.Archive{Tiles: []tilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("tile")}}, Metadata: []byte(`{"name":"fixture","vector_layers":[{"id":"buildings"}]}`),
		Gzip: true, TileType: 1, TileCompression: 1, Bounds: [4]float64{11.15, 43.72, 11.33, 43.83}, Center: [2]float64{11.25, 43.78}, CenterZoom: 0}.File(t)
	n := startNode(t, cfg)
	c := newCorpus(t, n)
	k := n.key("org-a", "test", []string{"all"}, 1000000)

	// route optimization: a plain plan, one with every option (breaks,
	// soft capacities, alternatives, goals, a destination left out), one
	// on the caller's matrix
	place := func(lat, lon float64) map[string]any { return map[string]any{"latitude": lat, "longitude": lon} }
	plain := map[string]any{"fleet_id": "f1",
		"vehicles": []any{map[string]any{"vehicle_id": "v1", "driver_id": "d-1", "start_location": place(40.0, -83.0), "capacity": map[string]any{"packages": 10}}},
		"destinations": []any{
			map[string]any{"destination_id": "a", "location": place(40.002, -83.0), "delivery_requirements": map[string]any{"packages": 2}},
			map[string]any{"destination_id": "b", "location": place(40.001, -83.001)}}}
	opt := c.call("POST", "/api/v1/fleet/optimization/routes", k, plain, 200)
	id := opt["data"].(map[string]any)["optimization_id"].(string)
	c.call("GET", "/api/v1/fleet/optimization/"+id, k, nil, 200)
	c.call("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, nil, 200)
	c.call("GET", "/api/v1/fleet/optimization/"+id, k, nil, 200)
	c.call("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, nil, 409)
	c.call("GET", "/api/v1/fleet/optimization/opt_missing", k, nil, 404)

	full := map[string]any{"fleet_id": "f2", "real_time_traffic": false, "time_windows": true,
		"optimization_goals": []string{"minimize_distance", "balance_workload", "maximize_service_quality"},
		"constraints":        map[string]any{"vehicle_capacity_strict": false, "time_window_violations": "none", "max_route_duration": 600},
		"options":            map[string]any{"alternatives": 3, "seed": 7, "time_limit_seconds": 1},
		"vehicles": []any{
			map[string]any{"vehicle_id": "v1", "vehicle_type": "van", "start_location": place(40.0, -83.0), "capacity": map[string]any{"packages": 3, "weight": 100},
				"shift_start": "08:00", "shift_end": "17:00", "break_windows": []any{map[string]any{"start": "11:00", "end": "13:00", "duration": 30}}},
			map[string]any{"vehicle_id": "v2", "vehicle_type": "bicycle", "start_location": place(40.001, -83.0), "restrictions": []string{"refrigerated"}}},
		"destinations": []any{
			map[string]any{"destination_id": "a", "location": place(40.002, -83.0), "priority": "high", "delivery_requirements": map[string]any{"packages": 2},
				"time_window": map[string]any{"earliest": "09:00", "latest": "12:00", "service_duration": 10}, "customer_id": "c1", "delivery_notes": "back door"},
			map[string]any{"destination_id": "b", "location": place(40.001, -83.001), "delivery_requirements": map[string]any{"packages": 2}},
			map[string]any{"destination_id": "c", "location": place(40.0, -83.001), "delivery_requirements": map[string]any{"special_handling": []string{"hazmat"}}},
			map[string]any{"destination_id": "d", "location": place(40.0015, -83.0), "delivery_requirements": map[string]any{"weight": 50}}}}
	res := c.call("POST", "/api/v1/fleet/optimization/routes", k, full, 200)
	id = res["data"].(map[string]any)["optimization_id"].(string)
	c.call("PUT", "/api/v1/fleet/optimization/"+id+"/apply", k, map[string]any{"plan": 9}, 400)

	matrix := map[string]any{"fleet_id": "f3", "matrix": map[string]any{"durations": [][]float64{{0, 60, 90}, {60, 0, 30}, {90, 30, 0}}},
		"vehicles":     []any{map[string]any{"vehicle_id": "v1", "start_index": 0}},
		"destinations": []any{map[string]any{"destination_id": "a", "location_index": 1}, map[string]any{"destination_id": "b", "location_index": 2}}}
	c.call("POST", "/api/v1/fleet/optimization/routes", k, matrix, 200)
	c.call("POST", "/api/v1/fleet/optimization/routes", k, map[string]any{"fleet_id": "f4", "vehicles": []any{}, "destinations": []any{}}, 400)

	// the distance matrix: a location far from the roads, a duplicate
	c.call("POST", "/v1/routing/sources_to_targets", k, map[string]any{"sources": []any{map[string]any{"lat": 40.0, "lon": -83.0}, map[string]any{"lat": 41.0, "lon": -83.0}},
		"targets": []any{map[string]any{"lat": 40.0, "lon": -83.0}}, "costing": "pedestrian"}, 200)
	c.call("POST", "/v1/routing/sources_to_targets", k, map[string]any{"sources": []any{}, "targets": []any{}, "costing": "auto"}, 400)
	c.call("POST", "/api/v1/fleet/routing/match", k, map[string]any{"costing": "auto", "points": []any{
		map[string]any{"latitude": 40.0, "longitude": -83.0, "timestamp": "2026-01-01T00:00:00Z"}}}, 200)

	// geocoding and tiles, successes and their plain refusals
	for _, q := range []string{"240-16 Braddock", "Aplegate"} {
		c.call("GET", "/v1/autocomplete?limit=3&q="+url.QueryEscape(q), k, nil, 200)
		c.call("GET", "/v1/search?q="+url.QueryEscape(q), k, nil, 200)
		c.call("GET", "/v1/validate?q="+url.QueryEscape(q), k, nil, 200)
	}
	c.call("GET", "/v1/validate?q=zzzz+qqqq", k, nil, 200)
	c.call("GET", "/v1/autocomplete", k, nil, 400)
	c.call("GET", "/v1/search?q=braddock&limit=0", k, nil, 400)
	c.call("GET", "/v1/api/tiles/buildings/metadata", k, nil, 200)
	c.call("GET", "/v1/api/tiles/buildings/metadata", "", nil, 401)
	// the archive itself, whole, by one range, past its end: statuses
	// and bodies the document lists
	const archive = "/v1/api/tiles/buildings/archive.pmtiles"
	archiveOp := c.doc["paths"].(map[string]any)[archive].(map[string]any)["get"].(map[string]any)
	for _, a := range []struct {
		rng  string
		want int
	}{{"", 200}, {"bytes=0-126", 206}, {"bytes=99999999-", 416}} {
		r := n.do("GET", archive, k, nil, "Range", a.rng)
		if r.Status != a.want {
			t.Fatalf("GET %s Range %q: %d, want %d", archive, a.rng, r.Status, a.want)
		}
		checkResponse(t, c.doc, archiveOp, "GET", archive, r)
	}
	c.call("GET", archive, "", nil, 401)

	// vehicle profiles
	c.call("PUT", "/v1/vehicles/veh-1", k, map[string]any{"fleet_id": "f1", "name": "Van 1", "vehicle_type": "van", "fuel_type": "diesel",
		"fuel_consumption_l_per_100km": 9.5, "tank_capacity_liters": 70, "odometer_unit": "km"}, 200)
	c.call("PUT", "/v1/vehicles/veh-2", k, map[string]any{"fuel_type": "electric", "energy_consumption_kwh_per_100km": 18, "battery_capacity_kwh": 60}, 200)
	c.call("GET", "/v1/vehicles/veh-1", k, nil, 200)
	c.call("GET", "/v1/vehicles?limit=1", k, nil, 200)
	c.call("DELETE", "/v1/vehicles/veh-2", k, nil, 200)
	c.call("GET", "/v1/vehicles/veh-2", k, nil, 404)

	// health
	c.call("GET", "/healthz", "", nil, 200)
	c.call("GET", "/readyz", "", nil, 200)
	c.call("GET", "/v1/trips/health", k, nil, 200)
}
