package bench

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/valyala/fasthttp"
)

// post drives one fixed JSON body against a path.
func post(ctx context.Context, name string, cfg Config, path string, body []byte) (*Result, error) {
	url := cfg.URL + path
	return run(ctx, name, cfg, func(w, i int, req *fasthttp.Request) int {
		req.SetRequestURI(url)
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
		return 1
	}, func(st int) bool { return st == 200 })
}

// Matrix drives 50×50 auto matrices around a center point (the server
// needs --osm with roads there).
func Matrix(ctx context.Context, cfg Config, lat, lon float64) (*Result, error) {
	var pts []map[string]float64
	for i := 0; i < 50; i++ {
		pts = append(pts, map[string]float64{"lat": lat - 0.02 + float64(i%10)*0.005, "lon": lon - 0.02 + float64(i/10)*0.008})
	}
	b, _ := json.Marshal(map[string]any{"sources": pts, "targets": pts, "costing": "auto"})
	return post(ctx, "matrix", cfg, "/v1/routing/sources_to_targets", b)
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
	b, _ := json.Marshal(map[string]any{"fleet_id": "bench", "vehicles": vs, "destinations": ds})
	return post(ctx, "optimize", cfg, "/api/v1/fleet/optimization/routes", b)
}
