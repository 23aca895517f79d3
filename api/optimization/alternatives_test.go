package optimization_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
)

// TestAlternativeRoutes asks for three runner-up plans on a line of
// destinations: alternative_plans come cheapest first and none beats
// the plan kept; every route entry names a vehicle's route in one of
// them that differs from its chosen route, and its distance is the
// matrix's along its destinations; the routes are feasible (capacity,
// windows). Not asked, alternative_routes is null and there are no
// alternative_plans; a count out of 0 to 5 is refused by name.
func TestAlternativeRoutes(t *testing.T) {
	url := serveWork(t, nil, 3_000_000)
	body := grid(12, 3, 6)
	body["options"] = map[string]any{"time_limit_seconds": 60, "seed": 3, "alternatives": 3}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	dist := body["matrix"].(map[string]any)["distances"].([][]float64)
	index := map[string]int{}
	for _, d := range body["destinations"].([]map[string]any) {
		index[d["destination_id"].(string)] = d["location_index"].(int)
	}
	along := func(ids []string) (km float64, clock float64) {
		at, clock := 0, 8*60.0
		for _, id := range ids {
			km += dist[at][index[id]]
			clock += dist[at][index[id]] + 0.5 // 60 s a unit, half a minute's service
			at = index[id]
		}
		return km + dist[at][0], clock
	}
	plans, _ := data["alternative_plans"].([]any)
	if len(plans) == 0 || len(plans) > 3 {
		t.Fatalf("%d alternative plans, want 1 to 3: %v", len(plans), data["alternative_plans"])
	}
	chosen := metric(data, "total_distance")
	prev := chosen
	for k, p := range plans {
		pm := p.(map[string]any)
		if pm["plan"] != float64(k+1) {
			t.Errorf("plan %d numbered %v", k+1, pm["plan"])
		}
		d := toFloat(pm["total_distance"])
		if d < prev-0.01 {
			t.Errorf("plan %d: %.2f km after %.2f (the chosen plan %.2f)", k+1, d, prev, chosen)
		}
		prev = d
		// the plan's own routes: every destination once (or left out), and
		// their distances on the matrix add up to the plan's
		seen, sum := map[string]bool{}, 0.0
		for _, r := range pm["routes"].([]any) {
			var ids []string
			for _, id := range r.(map[string]any)["destination_ids"].([]any) {
				if seen[id.(string)] {
					t.Errorf("plan %d serves %s twice", k+1, id)
				}
				seen[id.(string)] = true
				ids = append(ids, id.(string))
			}
			km, _ := along(ids)
			sum += km
		}
		if len(seen)+int(pm["unassigned_destinations"].(float64)) != 12 || math.Abs(sum-d) > 0.05 {
			t.Errorf("plan %d: %d served, %v left out, %.2f km by its routes against %.2f", k+1, len(seen), pm["unassigned_destinations"], sum, d)
		}
	}
	entries := 0
	for _, r := range data["optimized_routes"].([]any) {
		rv := r.(map[string]any)
		alts := rv["route_optimization_details"].(map[string]any)["alternative_routes"]
		list, ok := alts.([]any)
		if !ok {
			t.Fatalf("%s: alternative_routes %v, want a list", rv["vehicle_id"], alts)
		}
		mine := fmt.Sprint(routeOf(data, rv["vehicle_id"].(string)))
		for _, a := range list {
			am := a.(map[string]any)
			entries++
			n := int(am["plan"].(float64))
			if n < 1 || n > len(plans) || am["route_id"] != fmt.Sprintf("plan-%d/%s", n, rv["vehicle_id"]) {
				t.Errorf("%s: entry %v", rv["vehicle_id"], am)
			}
			var ids []string
			for _, id := range am["destination_ids"].([]any) {
				ids = append(ids, id.(string))
			}
			if fmt.Sprint(ids) == mine {
				t.Errorf("%s: plan %d's route is the chosen one: %v", rv["vehicle_id"], n, ids)
			}
			km, back := along(ids)
			if len(ids) == 0 {
				km = 0
			}
			if math.Abs(km-toFloat(am["distance_km"])) > 0.01 || int(toFloat(am["total_stops"])) != len(ids) {
				t.Errorf("%s: plan %d's route %v: %v km, %v stops; the matrix gives %.2f", rv["vehicle_id"], n, ids, am["distance_km"], am["total_stops"], km)
			}
			if len(ids) > 6 || back > 12*60+0.02 {
				t.Errorf("%s: plan %d's route %v carries %d of 6 or returns at minute %.1f", rv["vehicle_id"], n, ids, len(ids), back)
			}
			chosenKm := metricOf(rv, "total_distance")
			if math.Abs(toFloat(am["trade_offs"].(map[string]any)["distance_difference_km"])-(toFloat(am["distance_km"])-chosenKm)) > 0.02 {
				t.Errorf("%s: trade-offs %v against %.2f km chosen", rv["vehicle_id"], am["trade_offs"], chosenKm)
			}
		}
	}
	if entries == 0 {
		t.Errorf("runner-up plans but no vehicle's route differs in them")
	}

	delete(body["options"].(map[string]any), "alternatives")
	st, res = post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data = res["data"].(map[string]any)
	if _, ok := data["alternative_plans"]; ok {
		t.Errorf("alternative_plans not asked for: %v", data["alternative_plans"])
	}
	for _, r := range data["optimized_routes"].([]any) {
		if a := r.(map[string]any)["route_optimization_details"].(map[string]any)["alternative_routes"]; a != nil {
			t.Errorf("alternative_routes not asked for: %v", a)
		}
	}
	for _, n := range []int{-1, 6} {
		body["options"].(map[string]any)["alternatives"] = n
		st, res = post(t, url, body)
		if st != 400 {
			t.Errorf("alternatives %d: %d %v", n, st, res)
			continue
		}
		if e := res["error"].(map[string]any); e["code"] != "validation_failed" || e["details"].(map[string]any)["options.alternatives"] == nil {
			t.Errorf("alternatives %d: error %v lacks options.alternatives", n, e)
		}
	}
}

func metricOf(rv map[string]any, name string) float64 {
	return toFloat(rv["route_summary"].(map[string]any)[name])
}

// TestApplyPlanWithoutRunnersUp: a plan number sent to an optimization
// made without runner-up plans is refused saying it has none (not "1 to
// 0"), and nothing is applied.
func TestApplyPlanWithoutRunnersUp(t *testing.T) {
	url := serve(t, nil)
	st, res := post(t, url, grid(2, 1, 10))
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	id := res["data"].(map[string]any)["optimization_id"].(string)
	req, _ := http.NewRequest("PUT", url+"/api/v1/fleet/optimization/"+id+"/apply", strings.NewReader(`{"plan": 1}`))
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var e struct {
		Error struct {
			Code    string            `json:"code"`
			Details map[string]string `json:"details"`
		} `json:"error"`
	}
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil || r.StatusCode != 400 || e.Error.Code != "validation_failed" ||
		!strings.Contains(e.Error.Details["plan"], "no runner-up plans") {
		t.Fatalf("%d %+v", r.StatusCode, e)
	}
	req, _ = http.NewRequest("PUT", url+"/api/v1/fleet/optimization/"+id+"/apply", nil)
	req.Header.Set("X-API-Key", key)
	if r, err = http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("the chosen plan after the refusal: %v %v", r.StatusCode, err)
	}
	r.Body.Close()
}
