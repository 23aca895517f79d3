package optimization_test

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestAvoidOnRoads: on the routing engine's own avoid network
// (internal/routing/testdata/avoid.osm.pbf: a motorway, a toll road and
// a residential detour between the depot's and the destination's
// spurs), avoid_highways and avoid_toll_roads send the route round the
// detour: the plan's distance is the graph's own distance of the round
// trip without those roads, longer than the one on the motorway.
func TestAvoidOnRoads(t *testing.T) {
	g, err := routing.Load("../../internal/routing/testdata/avoid.osm.pbf", routing.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	depot, dest := [2]float64{40, -83.0005}, [2]float64{40, -82.9895}
	url := serveWork(t, g, 200_000)
	round := func(avoid routing.Avoid) float64 {
		pts := [][2]float64{depot, dest}
		m := g.MatrixAvoiding(pts, pts, routing.Auto, avoid)
		if !m[0][1].OK || !m[1][0].OK {
			t.Fatalf("no road round trip avoiding %v: %+v", avoid, m)
		}
		return (m[0][1].Meters + m[1][0].Meters) / 1000
	}
	plan := func(restrictions map[string]any) float64 {
		body := map[string]any{"fleet_id": "f", "options": map[string]any{"time_limit_seconds": 1},
			"constraints": map[string]any{"traffic_restrictions": restrictions},
			"vehicles":    []map[string]any{{"vehicle_id": "v", "start_location": map[string]any{"latitude": depot[0], "longitude": depot[1]}}},
			"destinations": []map[string]any{{"destination_id": "d",
				"location": map[string]any{"latitude": dest[0], "longitude": dest[1]}}}}
		st, res := post(t, url, body)
		if st != 200 {
			t.Fatalf("%d %v", st, res)
		}
		data := res["data"].(map[string]any)
		if src := data["optimization_summary"].(map[string]any)["cost_source"]; src != "road_network" {
			t.Fatalf("cost source %v", src)
		}
		return metric(data, "total_distance")
	}
	plain := plan(map[string]any{"avoid_highways": false})
	detour := plan(map[string]any{"avoid_highways": true, "avoid_toll_roads": true})
	t.Logf("round trip %.2f km on the motorway, %.2f km avoiding highways and tolls", plain, detour)
	if want := round(0); math.Abs(plain-want) > 0.006 {
		t.Errorf("plain plan %v km, the graph %v", plain, want)
	}
	if want := round(routing.AvoidHighways | routing.AvoidTolls); math.Abs(detour-want) > 0.006 || detour <= plain {
		t.Errorf("avoiding plan %v km, the graph %v, the motorway %v", detour, want, plain)
	}
}
