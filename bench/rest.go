package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/valyala/fasthttp"
)

// post drives one fixed JSON body against a path.
func post(ctx context.Context, name string, cfg Config, path string, body []byte) (*Result, error) {
	url := cfg.URL + path
	return run(ctx, name, cfg, func(w, i int, req *fasthttp.Request) int {
		jsonPOST(req, url, body)
		return 1
	}, func(st int) bool { return st == 200 })
}

// Matrix drives 50×50 auto matrices of random locations within 5 km of a
// center point (the server needs --osm with roads there): 64 different
// requests, taken in turn, so that no answer is the last one again.
func Matrix(ctx context.Context, cfg Config, lat, lon float64) (*Result, error) {
	rng := rand.New(rand.NewPCG(uint64(cfg.Conns), 64))
	bodies := make([][]byte, 64)
	for k := range bodies {
		var src, dst []map[string]float64
		for i := 0; i < 50; i++ {
			src = append(src, map[string]float64{"lat": lat + (rng.Float64()-0.5)*0.09, "lon": lon + (rng.Float64()-0.5)*0.12})
			dst = append(dst, map[string]float64{"lat": lat + (rng.Float64()-0.5)*0.09, "lon": lon + (rng.Float64()-0.5)*0.12})
		}
		var err error
		if bodies[k], err = json.Marshal(map[string]any{"sources": src, "targets": dst, "costing": "auto"}); err != nil {
			return nil, fmt.Errorf("bench: matrix body: %w", err)
		}
	}
	url := cfg.URL + "/v1/routing/sources_to_targets"
	return run(ctx, "matrix", cfg, func(w, i int, req *fasthttp.Request) int {
		jsonPOST(req, url, bodies[(w*7+i)%len(bodies)])
		return 1
	}, func(st int) bool { return st == 200 })
}

// Optimize drives route optimizations of 4 vehicles and 100 destinations
// with time windows.
func Optimize(ctx context.Context, cfg Config) (*Result, error) {
	depot := map[string]float64{"latitude": 39.96, "longitude": -83.0}
	var vs, ds []map[string]any
	for i := 0; i < 4; i++ {
		vs = append(vs, map[string]any{"vehicle_id": fmt.Sprintf("v%d", i), "start_location": depot, "capacity": map[string]any{"weight": 3000}})
	}
	for i := 0; i < 100; i++ {
		ds = append(ds, map[string]any{"destination_id": fmt.Sprintf("d%d", i),
			"location":              map[string]float64{"latitude": 39.9 + float64(i%10)*0.012, "longitude": -83.06 + float64(i/10)*0.012},
			"delivery_requirements": map[string]any{"weight": 100},
			"time_window":           map[string]any{"earliest": fmt.Sprintf("%02d:00", 8+i%4), "latest": fmt.Sprintf("%02d:00", 12+i%6), "service_duration": 5}})
	}
	b, err := json.Marshal(map[string]any{"fleet_id": "bench", "vehicles": vs, "destinations": ds})
	if err != nil {
		return nil, fmt.Errorf("bench: optimization body: %w", err)
	}
	return post(ctx, "optimize", cfg, "/api/v1/fleet/optimization/routes", b)
}
