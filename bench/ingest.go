package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// IngestConfig drives POST /v1/locations/batch.
type IngestConfig struct {
	Config
	Trips int // trips in parallel (default 256)
	Batch int // points per batch (default 1000)
}

// Ingest starts Trips trips and uploads batches of Batch points round
// robin, each trip's points moving forward in time at 1 Hz.
func Ingest(ctx context.Context, cfg IngestConfig) (*Result, error) {
	cfg.defaults()
	if cfg.Trips == 0 {
		cfg.Trips = 256
	}
	if cfg.Batch == 0 {
		cfg.Batch = 1000
	}
	if cfg.Trips < cfg.Conns {
		cfg.Trips = cfg.Conns
	}
	run0 := time.Now().UnixNano()
	// points start far enough back that a run never passes the server clock
	start := time.Now().Add(-time.Duration(cfg.Trips) * 0).Add(-48 * time.Hour).UTC()
	ids, err := startTrips(ctx, cfg.Config, cfg.Trips, fmt.Sprintf("bench-%d", run0), start)
	if err != nil {
		return nil, err
	}
	perWorker := cfg.Trips / cfg.Conns
	// each worker owns trips [w*perWorker, (w+1)*perWorker)
	next := make([]int, cfg.Trips) // batches sent per trip
	url := cfg.URL + "/v1/locations/batch"
	bufs := make([][]byte, cfg.Conns)
	return run(ctx, "ingest", cfg.Config, func(w, i int, req *fasthttp.Request) int {
		trip := w*perWorker + i%perWorker
		k := next[trip]
		next[trip]++
		b := bufs[w][:0]
		b = append(b, `{"trip_id":"`...)
		b = append(b, ids[trip]...)
		b = append(b, `","locations":[`...)
		base := start.Add(time.Duration(k*cfg.Batch) * time.Second)
		lat := 40.0 + float64(trip%100)*0.01
		for j := 0; j < cfg.Batch; j++ {
			if j > 0 {
				b = append(b, ',')
			}
			sec := k*cfg.Batch + j
			b = append(b, `{"latitude":`...)
			b = strconv.AppendFloat(b, lat+float64(sec)*0.0001, 'f', 6, 64)
			b = append(b, `,"longitude":`...)
			b = strconv.AppendFloat(b, -83.0+0.001*math.Sin(float64(sec)/60), 'f', 6, 64)
			b = append(b, `,"timestamp":"`...)
			b = base.Add(time.Duration(j)*time.Second).AppendFormat(b, time.RFC3339)
			b = append(b, `","speed_kmh":40,"heading":0,"accuracy_meters":5}`...)
		}
		b = append(b, "]}"...)
		bufs[w] = b
		jsonPOST(req, url, b)
		return cfg.Batch
	}, func(st int) bool { return st == 200 })
}

// startTrips starts n trips (POST /v1/trips), of vehicles prefix-0 to
// prefix-(n-1), from cfg.Conns connections at once, and returns their
// ids in that order.
func startTrips(ctx context.Context, cfg Config, n int, prefix string, start time.Time) ([]string, error) {
	ids := make([]string, n)
	err := onConns(ctx, cfg, n, "start trip", func(req *fasthttp.Request, resp *fasthttp.Response, do func() error, i int) error {
		body, err := json.Marshal(map[string]any{"vehicle_id": fmt.Sprintf("%s-%d", prefix, i), "start_time": start.Format(time.RFC3339Nano)})
		if err != nil {
			return err
		}
		jsonPOST(req, cfg.URL+"/v1/trips", body)
		if err := do(); err != nil {
			return err
		}
		if resp.StatusCode() != 201 {
			return fmt.Errorf("status %d: %s", resp.StatusCode(), resp.Body())
		}
		var t struct {
			TripID string `json:"trip_id"`
		}
		if err := json.Unmarshal(resp.Body(), &t); err != nil {
			return err
		}
		ids[i] = t.TripID
		return nil
	})
	return ids, err
}

// stopTrips stops the trips of ids (POST /v1/trips/{id}/stop) from
// cfg.Conns connections at once.
func stopTrips(ctx context.Context, cfg Config, ids []string) error {
	return onConns(ctx, cfg, len(ids), "stop trip", func(req *fasthttp.Request, resp *fasthttp.Response, do func() error, i int) error {
		jsonPOST(req, cfg.URL+"/v1/trips/"+ids[i]+"/stop", []byte("{}"))
		if err := do(); err != nil {
			return err
		}
		if resp.StatusCode() != 200 {
			return fmt.Errorf("status %d: %s", resp.StatusCode(), resp.Body())
		}
		return nil
	})
}

// onConns runs each(i) for i from 0 to n-1 from cfg.Conns connections
// at once, each with a request and a response of its own (reset, with
// the key, before each) and do sending the request; a connection stops
// at its first error, and the errors are named by what.
func onConns(ctx context.Context, cfg Config, n int, what string,
	each func(req *fasthttp.Request, resp *fasthttp.Response, do func() error, i int) error) error {
	cfg.defaults()
	client, err := newHostClient(cfg)
	if err != nil {
		return err
	}
	errs := make([]error, min(cfg.Conns, n))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			do := func() error {
				req.Header.Set("X-API-Key", cfg.Key)
				return client.DoTimeout(req, resp, 30*time.Second)
			}
			for i := w; i < n && ctx.Err() == nil; i += len(errs) {
				req.Reset()
				if err := each(req, resp, do, i); err != nil {
					errs[w] = fmt.Errorf("bench: %s: %w", what, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: %s: %w", what, err)
	}
	return nil
}
