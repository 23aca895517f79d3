package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestRealTimeTraffic: with --osm, a trip driven at 15 km/h north up Main
// Street of the tiny extract (free flow 25 km/h) makes an optimization
// asked with real_time_traffic time that street at what the fleet drove:
// cost_source road_network_traffic, a longer route time than free flow
// (which the same request without it keeps), and the insight naming the
// speeds' source; another organization, whose fleet drove nothing, gets
// free flow and an insight that says so. Absent, real_time_traffic is
// true: the observed speeds where there are, the matrix or great-circle
// travel where the request or the node gives no roads to time, with an
// insight saying so. Sent true beside the request's matrix, or on a
// node without --osm, it is refused by name.
func TestRealTimeTraffic(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id, t0 := driveMainStreet(t, n, k)
	body := func(traffic bool) map[string]any { return mainStreetPlan(t0, traffic) }
	plan := func(key string, traffic bool) map[string]any {
		t.Helper()
		r := n.do("POST", "/api/v1/fleet/optimization/routes", key, body(traffic))
		if r.Status != 200 {
			t.Fatalf("real_time_traffic %v: %d %s", traffic, r.Status, r.Body)
		}
		return r.json(t)["data"].(map[string]any)
	}
	source := func(d map[string]any) any { return d["optimization_summary"].(map[string]any)["cost_source"] }
	minutes := func(d map[string]any) float64 {
		return d["performance_metrics"].(map[string]any)["total_time"].(float64)
	}
	free := plan(k, false)
	if source(free) != "road_network" {
		t.Fatalf("without real_time_traffic: cost_source %v", source(free))
	}
	var busy map[string]any
	waitfor.Until(t, 10*time.Second, "the trip's speeds matched to Main Street", func() bool {
		busy = plan(k, true)
		return source(busy) == "road_network_traffic"
	})
	// the car drives 222 m north on the two edges the trip drove (to the
	// destination, then on round the block, since it turns round only at
	// dead ends), at 15 km/h instead of the car's 25 km/h on residential
	// streets: 21 s more; the rest of the block, not observed, at free flow
	if d := minutes(busy) - minutes(free); d < 0.3 || d > 0.42 {
		t.Errorf("route time %.2f min with the observed speeds, %.2f at free flow: want about 0.36 more", minutes(busy), minutes(free))
	}
	if recs := fmt.Sprint(busy["optimization_insights"].(map[string]any)["recommendations"]); !strings.Contains(recs, "speeds observed on") {
		t.Errorf("insights %s", recs)
	}
	// absent, real_time_traffic is true, as the interface's default
	dflt := n.do("POST", "/api/v1/fleet/optimization/routes", k, unasked(body(true)))
	if dflt.Status != 200 {
		t.Fatalf("real_time_traffic absent: %d %s", dflt.Status, dflt.Body)
	}
	if d := dflt.json(t)["data"].(map[string]any); source(d) != "road_network_traffic" || minutes(d) != minutes(busy) {
		t.Errorf("real_time_traffic absent: %v, %.2f min; want road_network_traffic, %.2f min", source(d), minutes(d), minutes(busy))
	}
	if m := n.do("GET", "/metrics", "", nil); !strings.Contains(string(m.Body), "fleethub_road_speed_cells 2") {
		t.Errorf("/metrics lacks the two cells of speeds observed")
	}
	if again := plan(k, false); minutes(again) != minutes(free) || source(again) != "road_network" {
		t.Errorf("without real_time_traffic after the trip: %.2f min, %v", minutes(again), source(again))
	}
	kb := n.key("org-b", "test", []string{"all"}, 100000)
	other := plan(kb, true)
	if source(other) != "road_network" || minutes(other) != minutes(free) ||
		!strings.Contains(fmt.Sprint(other["optimization_insights"].(map[string]any)["recommendations"]), "no speeds observed") {
		t.Errorf("another organization: %v, %.2f min, insights %v", source(other), minutes(other), other["optimization_insights"])
	}

	bikes := body(true)
	bikes["vehicles"].([]map[string]any)[0]["vehicle_type"] = "bicycle"
	if r := n.do("POST", "/api/v1/fleet/optimization/routes", k, bikes); r.Status != 200 ||
		r.json(t)["data"].(map[string]any)["optimization_summary"].(map[string]any)["cost_source"] != "road_network" ||
		!strings.Contains(string(r.Body), "only cars") {
		t.Errorf("a bicycle with real_time_traffic: %d %s", r.Status, r.Body)
	}

	// the trip's route data: the quickest way from its first point to its
	// last, at free flow and at the speeds the fleet drove (this trip's)
	rt := n.do("GET", "/v1/trips/"+id+"/route?include_alternatives=true", k, nil)
	if rt.Status != 200 {
		t.Fatalf("route: %d %s", rt.Status, rt.Body)
	}
	alts, _ := rt.json(t)["alternative_routes"].([]any)
	if len(alts) != 2 {
		t.Fatalf("alternative routes %s", rt.Body)
	}
	fast, slow := alts[0].(map[string]any), alts[1].(map[string]any)
	// 49 s of driving cover 204 m up Main Street: the car's 25 km/h there
	// take 29 s, the fleet's own 15 km/h 49 s
	if fast["route_id"] != "quickest_free_flow" || slow["route_id"] != "quickest_observed" ||
		math.Abs(fast["distance_km"].(float64)-0.204) > 0.01 || math.Abs(slow["distance_km"].(float64)-0.204) > 0.01 ||
		math.Abs(fast["estimated_duration_minutes"].(float64)-0.49) > 0.03 || math.Abs(slow["estimated_duration_minutes"].(float64)-0.82) > 0.03 ||
		slow["trade_offs"].(map[string]any)["observed_road_segments"] != 2.0 {
		t.Errorf("alternatives %v", alts)
	}

	withMatrix := body(true)
	withMatrix["matrix"] = map[string]any{"durations": [][]float64{{0, 60}, {60, 0}}}
	withMatrix["vehicles"].([]map[string]any)[0]["start_index"] = 0
	withMatrix["destinations"].([]map[string]any)[0]["location_index"] = 1
	if r := n.do("POST", "/api/v1/fleet/optimization/routes", k, withMatrix); r.Status != 400 || !strings.Contains(string(r.Body), `"real_time_traffic"`) {
		t.Errorf("real_time_traffic with a matrix: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/api/v1/fleet/optimization/routes", k, unasked(withMatrix)); r.Status != 200 ||
		source(r.json(t)["data"].(map[string]any)) != "matrix" {
		t.Errorf("real_time_traffic absent, with a matrix: %d %s", r.Status, r.Body)
	}
	plain := startNode(t, testConfig(t))
	kp := plain.key("org-a", "test", []string{"all"}, 100000)
	if r := plain.do("POST", "/api/v1/fleet/optimization/routes", kp, body(true)); r.Status != 400 || !strings.Contains(string(r.Body), "--osm") {
		t.Errorf("real_time_traffic without --osm: %d %s", r.Status, r.Body)
	}
	if r := plain.do("POST", "/api/v1/fleet/optimization/routes", kp, unasked(body(true))); r.Status != 200 ||
		source(r.json(t)["data"].(map[string]any)) != "great_circle" || !strings.Contains(string(r.Body), "without --osm") {
		t.Errorf("real_time_traffic absent, without --osm: %d %s", r.Status, r.Body)
	}
}

// unasked is body without real_time_traffic.
func unasked(body map[string]any) map[string]any {
	delete(body, "real_time_traffic")
	return body
}

// TestRealTimeTrafficAcrossNodes: two nodes on one store and one Redis,
// both with --osm. A trip uploaded to node A is matched there; node B's
// optimization with real_time_traffic reads the speeds A's fleet drove
// once A has shared them (every few seconds).
func TestRealTimeTrafficAcrossNodes(t *testing.T) {
	redisURL := requireService(t, "FLEETHUB_TEST_REDIS_URL")
	org := fmt.Sprintf("org-speeds-%d", time.Now().UnixNano()) // Redis outlives the test
	cfgA := testConfig(t)
	cfgA.OSM, cfgA.RedisURL = tinyOSM(t), redisURL
	a := startNode(t, cfgA)
	cfgB := testConfig(t)
	cfgB.Data, cfgB.OSM, cfgB.RedisURL = cfgA.Data, tinyOSM(t), redisURL
	b := startNode(t, cfgB)
	k := a.key(org, "test", []string{"all"}, 100000)
	_, t0 := driveMainStreet(t, a, k)
	body := mainStreetPlan(t0, true)
	waitfor.Until(t, 20*time.Second, "node B timing Main Street at node A's observed speeds", func() bool {
		r := b.do("POST", "/api/v1/fleet/optimization/routes", k, body)
		if r.Status != 200 {
			t.Fatalf("node B: %d %s", r.Status, r.Body)
		}
		return r.json(t)["data"].(map[string]any)["optimization_summary"].(map[string]any)["cost_source"] == "road_network_traffic"
	})
}

// driveMainStreet is a trip of vehicle veh-1 driven at 15 km/h for 50
// s north up Main Street of the tiny extract, from 2 minutes ago, then
// stopped: its id and start.
func driveMainStreet(t *testing.T, n *node, key string) (string, time.Time) {
	t.Helper()
	t0 := today(time.Now().Add(-2 * time.Minute))
	// the trip's minute of points lies in one hour of the week, so that
	// each edge it drove holds one cell of speeds
	if end := t0.Add(time.Minute); end.Hour() != t0.Hour() {
		t0 = t0.Truncate(time.Hour).Add(58 * time.Minute)
	}
	id := n.startTrip(key, "veh-1", t0)
	if r := n.do("POST", "/v1/locations/batch", key, map[string]any{"trip_id": id, "locations": track(t0.Add(time.Second), 40, -83, constant(15, 50))}); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/trips/"+id+"/stop", key, map[string]any{"completion_status": "completed"}); r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	return id, t0
}

// mainStreetPlan asks for a car from the south end of Main Street to a
// destination 89 m up it and back, its shift the hour t0 lies in.
func mainStreetPlan(t0 time.Time, traffic bool) map[string]any {
	return map[string]any{"fleet_id": "f1", "real_time_traffic": traffic, "options": map[string]any{"time_limit_seconds": 0.2},
		"vehicles": []map[string]any{{"vehicle_id": "car", "start_location": map[string]any{"latitude": 40.0001, "longitude": -83.0},
			"shift_start": fmt.Sprintf("%02d:00", t0.Hour()), "shift_end": fmt.Sprintf("%02d:59", t0.Hour())}},
		"destinations": []map[string]any{{"destination_id": "d1", "location": map[string]any{"latitude": 40.0009, "longitude": -83.0},
			"time_window": map[string]any{"service_duration": 0}}}}
}

// today is t in UTC, or the start of today when t was yesterday: the
// trip's hour and the plan's day (the server's today) must meet. A trip
// started just after midnight lies up to 2 minutes ahead of the clock,
// within what the server takes.
func today(t time.Time) time.Time {
	t, now := t.UTC(), time.Now().UTC()
	if t.YearDay() != now.YearDay() {
		return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	}
	return t
}
