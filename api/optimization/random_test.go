package optimization_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// randomBody is a seeded request that combines the rules: destinations
// at random places (a matrix of Euclidean kilometres, a minute each),
// random windows, weights and priorities; two or three vehicles of
// random types and cost models, some with one to three break windows;
// random goals or priority weights, and strict or priced capacities.
// Distances are whole kilometres, so that every time is a whole minute.
func randomBody(rng *rand.Rand) map[string]any {
	n, k := 8+rng.IntN(8), 2+rng.IntN(2)
	size := n + k
	xs, ys := make([]float64, size), make([]float64, size)
	for i := range xs {
		xs[i], ys[i] = rng.Float64()*30, rng.Float64()*30
	}
	dur, dist := make([][]float64, size), make([][]float64, size)
	for i := range dur {
		dur[i], dist[i] = make([]float64, size), make([]float64, size)
		for j := range dur[i] {
			d := math.Round(math.Hypot(xs[i]-xs[j], ys[i]-ys[j])) // whole minutes: the answer gives HH:MM
			dur[i][j], dist[i][j] = 60*d, d
		}
	}
	hhmm := func(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
	prios := []string{"low", "normal", "high", "urgent"}
	var ds []map[string]any
	for i := 0; i < n; i++ {
		e := 8*60 + rng.IntN(6*60)
		ds = append(ds, map[string]any{"destination_id": fmt.Sprintf("d%d", i), "location_index": i, "priority": prios[rng.IntN(4)],
			"delivery_requirements": map[string]any{"weight": float64(1 + rng.IntN(5))},
			"time_window":           map[string]any{"earliest": hhmm(e), "latest": hhmm(e + 60 + rng.IntN(180)), "service_duration": float64(5 + rng.IntN(25))}})
	}
	types := []string{"van", "truck", "car", "electric", ""}
	breaks := [][]map[string]any{
		{{"start": "10:00", "end": "11:00", "duration": 15}},
		{{"start": "10:00", "end": "11:00", "duration": 15}, {"start": "12:00", "end": "13:30", "duration": 30}},
		{{"start": "09:30", "end": "10:30", "duration": 10}, {"start": "12:00", "end": "13:30", "duration": 30}, {"start": "15:00", "end": "16:00", "duration": 15}},
	}
	var vs []map[string]any
	for v := 0; v < k; v++ {
		ve := map[string]any{"vehicle_id": fmt.Sprintf("v%d", v), "start_index": n + v, "shift_start": "08:00", "shift_end": "18:00",
			"capacity": map[string]any{"weight": float64(8 + rng.IntN(10))}}
		if t := types[rng.IntN(len(types))]; t != "" {
			ve["vehicle_type"] = t
		}
		if rng.IntN(2) == 0 {
			ve["fuel_consumption_l_per_100km"], ve["cost_per_hour"], ve["cost_per_km"] = float64(rng.IntN(40)), float64(10+rng.IntN(40)), rng.Float64()/2
		}
		if b := rng.IntN(4); b > 0 {
			ve["break_windows"] = breaks[b-1]
		}
		vs = append(vs, ve)
	}
	body := map[string]any{"fleet_id": "f", "vehicles": vs, "destinations": ds, "matrix": map[string]any{"durations": dur, "distances": dist},
		"options": map[string]any{"time_limit_seconds": 60, "seed": rng.IntN(100)}}
	c := map[string]any{"vehicle_capacity_strict": rng.IntN(2) == 0}
	var goals []string
	if rng.IntN(3) == 0 {
		c["fuel_efficiency_priority"], c["delivery_time_priority"], c["cost_priority"] = rng.Float64(), rng.Float64(), rng.Float64()
	} else {
		travel := []string{"minimize_time", "minimize_distance", "minimize_fuel", "minimize_cost"}
		goals = append(goals, travel[rng.IntN(len(travel))])
	}
	for _, g := range []string{"balance_workload", "maximize_service_quality", "maximize_efficiency", "minimize_vehicles"} {
		if rng.IntN(3) == 0 {
			goals = append(goals, g)
		}
	}
	body["constraints"], body["optimization_goals"] = c, goals
	return body
}

// TestRandomRequestsChecked: seeded random requests that combine goals,
// weights, cost models, several breaks, priorities and priced overloads;
// every answer passes checkPlan (windows, breaks in order inside their
// windows, capacities and overloads, distances, fuel and cost by each
// vehicle's model). A failing seed is named by its subtest.
func TestRandomRequestsChecked(t *testing.T) {
	url := serveWork(t, nil, 300_000)
	n := uint64(16)
	if raceOn {
		n = 4 // the full count runs without the race detector (make test)
	}
	for seed := uint64(1); seed <= n; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			body := randomBody(rand.New(rand.NewPCG(seed, 99)))
			st, res := post(t, url, body)
			if st != 200 {
				t.Fatalf("%d %v\nconstraints %v goals %v", st, res["error"], body["constraints"], body["optimization_goals"])
			}
			checkPlan(t, body, res["data"].(map[string]any))
		})
	}
}
