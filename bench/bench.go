// Package bench holds Fleethub's end-to-end load generators: they drive a
// running server over real connections and report throughput and
// latency. `fleethub-bench <name>` (cmd/fleethub-bench) runs them; docs/performance.md records
// their figures with the commands.
//
// A generator owns its goroutines: each opens Conns workers (one
// connection each) that stop when its run's context ends, and it returns
// only after all of them did, so two generators may run one after the
// other in one process but a run's Result is complete when it returns.
// Results are merged under a mutex; nothing is shared between runs.
package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Config is common to every generator.
type Config struct {
	URL      string        // base address, e.g. http://127.0.0.1:8080
	Key      string        // API key
	Duration time.Duration // how long to run (default 10s)
	Conns    int           // concurrent connections (default 64)
	Rate     float64       // requests per second in total; 0 = as fast as possible
	// Meter, when set, counts requests and errors as they happen (a live
	// progress line reads it).
	Meter *Meter
	// HTTPS: skip the verification of the server's certificate (a
	// self-signed one).
	Insecure bool
}

func (c *Config) defaults() {
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Conns == 0 {
		c.Conns = 64
	}
}

// Result of a run.
type Result struct {
	Name       string
	Requests   int64
	Errors     int64
	Statuses   map[int]int64
	Elapsed    time.Duration
	Items      int64           // items carried (points, messages), when relevant
	Latencies  []time.Duration `json:"-"`
	FirstError string
}

// Quantile returns the q-quantile latency.
func (r *Result) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(r.Latencies)))) - 1
	return r.Latencies[max(0, min(i, len(r.Latencies)-1))]
}

// Report is the result's figures.
func (r *Result) Report() *Report {
	secs := r.Elapsed.Seconds()
	rep := &Report{Mode: r.Name}
	rep.Add("requests", "requests", r.Requests, "")
	rep.Add("elapsed_s", "elapsed", secs, "s")
	rep.Add("requests_per_s", "rate", float64(r.Requests)/secs, "req/s")
	if r.Items > 0 {
		rep.Add("items", "items", r.Items, "")
		rep.Add("items_per_s", "item rate", float64(r.Items)/secs, "items/s")
	}
	rep.latencyRows("latency", "latency", r.Latencies)
	rep.Add("statuses", "statuses", StatusCounts(r.Statuses), "")
	rep.Add("errors", "errors", r.Errors, "")
	if r.FirstError != "" {
		rep.Add("first_error", "first error", r.FirstError, "")
	}
	return rep
}

// Print writes the report as a table.
func (r *Result) Print(w io.Writer) { r.Report().WriteTable(w) }

// request builds one request for worker w, iteration i, into req; it
// returns the items it carries.
type request func(w, i int, req *fasthttp.Request) int

// run drives requests from cfg.Conns workers and gathers the result. ok
// decides whether a status counts as success.
func run(ctx context.Context, name string, cfg Config, build request, ok func(int) bool) (*Result, error) {
	cfg.defaults()
	client, err := newHostClient(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	res := &Result{Name: name, Statuses: map[int]int64{}}
	var mu sync.Mutex
	var reqs, errs, items atomic.Int64
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Conns) / cfg.Rate)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < cfg.Conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			lat := make([]time.Duration, 0, 1<<16)
			statuses := map[int]int64{}
			next := time.Now().Add(time.Duration(w) * interval / time.Duration(cfg.Conns))
			for i := 0; ctx.Err() == nil; i++ {
				if interval > 0 {
					if d := time.Until(next); d > 0 {
						select {
						case <-ctx.Done():
						case <-time.After(d):
						}
						if ctx.Err() != nil {
							break
						}
					}
					next = next.Add(interval)
				}
				req.Reset()
				req.SetRequestURI(cfg.URL)
				req.Header.Set("X-API-Key", cfg.Key)
				n := build(w, i, req)
				t0 := time.Now()
				err := client.Do(req, resp)
				el := time.Since(t0)
				if interval > 0 {
					// latency from the scheduled start: coordinated omission
					if late := t0.Sub(next.Add(-interval)); late > 0 {
						el += late
					}
				}
				reqs.Add(1)
				if err != nil {
					errs.Add(1)
					cfg.Meter.Fail()
					mu.Lock()
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
					mu.Unlock()
					continue
				}
				st := resp.StatusCode()
				statuses[st]++
				if !ok(st) {
					errs.Add(1)
					cfg.Meter.Fail()
					mu.Lock()
					if res.FirstError == "" {
						res.FirstError = fmt.Sprintf("status %d: %.200s", st, resp.Body())
					}
					mu.Unlock()
					continue
				}
				items.Add(int64(n))
				lat = append(lat, el)
				cfg.Meter.Observe(el)
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			for k, v := range statuses {
				res.Statuses[k] += v
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests, res.Errors, res.Items = reqs.Load(), errs.Load(), items.Load()
	slices.Sort(res.Latencies)
	return res, nil
}

// jsonPOST makes req a POST of the JSON body to url; the body is the
// caller's and must not change until the request is sent.
func jsonPOST(req *fasthttp.Request, url string, body []byte) {
	req.SetRequestURI(url)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.SetBodyRaw(body)
}

// newHostClient is the client of cfg.Conns connections to cfg.URL.
func newHostClient(cfg Config) (*fasthttp.HostClient, error) {
	uri := fasthttp.AcquireURI()
	defer fasthttp.ReleaseURI(uri)
	if err := uri.Parse(nil, []byte(cfg.URL)); err != nil {
		return nil, fmt.Errorf("bench: url: %w", err)
	}
	return hostClient(uri, cfg), nil
}

// hostClient is the client of run's workers: HTTPS for an https:// URL.
func hostClient(uri *fasthttp.URI, cfg Config) *fasthttp.HostClient {
	client := &fasthttp.HostClient{Addr: string(uri.Host()), MaxConns: cfg.Conns, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		MaxIdleConnDuration: time.Minute}
	if string(uri.Scheme()) == "https" {
		client.IsTLS = true
		client.TLSConfig = &tls.Config{InsecureSkipVerify: cfg.Insecure} // --insecure: a self-signed certificate
		if !strings.Contains(client.Addr, ":") {
			client.Addr += ":443"
		}
	}
	return client
}

// Health drives authenticated GET /v1/trips/health.
func Health(ctx context.Context, cfg Config) (*Result, error) {
	url := cfg.URL + "/v1/trips/health"
	return run(ctx, "health", cfg, func(w, i int, req *fasthttp.Request) int {
		req.SetRequestURI(url)
		return 0
	}, func(st int) bool { return st == 200 })
}
