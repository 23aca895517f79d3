package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// SSEConfig drives `fleethub-bench sse`: Clients Server-Sent Events
// clients follow the organization's feed (GET /api/v1/streaming/feed with
// Accept: text/event-stream, after=now, filtered to the run's vehicles)
// while Rate events a second are ingested through POST /v1/events for
// Duration.
type SSEConfig struct {
	URL      string
	Key      string
	Clients  int           // default 100
	Rate     int           // events a second, default 1000
	Duration time.Duration // default 10s
	Batch    int           // events per ingest request, default 50
	Drain    time.Duration // wait after the last ingest, default 3s
	Server   ServerConfig
	Meter    *Meter
}

// SSEResult is what the clients saw.
type SSEResult struct {
	Clients, Connected                                      int
	ConnectErrors                                           int
	FirstError                                              string
	Sent, Expected, Delivered, Lost, Duplicates, OutOfOrder int64
	IngestErrors                                            int64
	Elapsed, ConnectElapsed                                 time.Duration
	Latencies                                               []time.Duration `json:"-"`
	// The server's resident memory before the clients connected and
	// once they all had, and its CPU over the sending and the drain.
	RSSBefore, RSSConnected, ServerRSSBytes float64
	ServerCPUSeconds                        float64
	CPUSource                               string
}

// Report is the result's figures.
func (r *SSEResult) Report() *Report {
	secs := r.Elapsed.Seconds()
	rep := &Report{Mode: "sse"}
	rep.Add("clients", "clients connected", r.Connected, "")
	rep.Add("connect_errors", "connect errors", r.ConnectErrors, "")
	if r.FirstError != "" {
		rep.Add("first_error", "first error", r.FirstError, "")
	}
	rep.Add("connect_s", "connecting took", r.ConnectElapsed.Seconds(), "s")
	rep.Add("sent", "events sent", r.Sent, "")
	rep.Add("expected", "deliveries expected", r.Expected, "")
	rep.Add("delivered", "delivered", r.Delivered, "")
	rep.Add("deliveries_per_s", "delivery rate", float64(r.Delivered)/secs, "/s")
	rep.latencyRows("latency", "publish→receipt", r.Latencies)
	rep.Add("lost", "lost", r.Lost, "")
	rep.Add("duplicates", "duplicates", r.Duplicates, "")
	rep.Add("out_of_order", "out of order", r.OutOfOrder, "")
	rep.Add("ingest_errors", "ingest errors", r.IngestErrors, "")
	if r.CPUSource != "" {
		rep.Add("server_rss_before_mib", "server RSS before connecting", r.RSSBefore/(1<<20), "MiB")
		rep.Add("server_rss_connected_mib", "server RSS with the clients", r.RSSConnected/(1<<20), "MiB")
		rep.Add("server_rss_kib_per_client", "server RSS per client", (r.RSSConnected-r.RSSBefore)/1024/float64(max(1, r.Connected)), "KiB")
	}
	serverRows(rep, r.CPUSource, r.ServerCPUSeconds, secs, r.ServerRSSBytes)
	if r.ServerCPUSeconds > 0 && r.Delivered > 0 {
		rep.Add("server_cpu_us_per_delivery", "server CPU per delivery", r.ServerCPUSeconds*1e6/float64(r.Delivered), "µs")
	}
	return rep
}

// Print writes the report as a table.
func (r *SSEResult) Print(w io.Writer) { r.Report().WriteTable(w) }

func (cfg *SSEConfig) defaults() {
	if cfg.Clients == 0 {
		cfg.Clients = 100
	}
	if cfg.Rate == 0 {
		cfg.Rate = 1000
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Batch == 0 {
		cfg.Batch = 50
	}
	if cfg.Drain == 0 {
		cfg.Drain = 3 * time.Second
	}
}

// SSE runs the Server-Sent Events benchmark.
func SSE(ctx context.Context, cfg SSEConfig) (*SSEResult, error) {
	cfg.defaults()
	vehicles := runVehicles("sse", 1)
	q := url.Values{"after": {"now"}, "vehicle_id": vehicles[0]}
	feedURL := cfg.URL + "/api/v1/streaming/feed?" + q.Encode()
	res := &SSEResult{Clients: cfg.Clients}
	res.RSSBefore, _ = cfg.rss(ctx)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	client := cfg.client()
	var wg sync.WaitGroup
	subs := make([]*fanoutSub, 0, cfg.Clients)
	start := time.Now()
	for i := 0; i < cfg.Clients && ctx.Err() == nil; i++ {
		body, err := openSSE(cctx, client, feedURL, cfg.Key)
		if err != nil {
			res.ConnectErrors++
			if res.FirstError == "" {
				res.FirstError = err.Error()
			}
			continue
		}
		s := &fanoutSub{lat: make([]time.Duration, 0, cfg.Rate*int(cfg.Duration.Seconds()+1)), meter: cfg.Meter}
		subs = append(subs, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer body.Close()
			s.readSSE(body)
		}()
	}
	res.ConnectElapsed, res.Connected = time.Since(start), len(subs)
	if len(subs) == 0 {
		return nil, fmt.Errorf("bench: sse: no client connected: %s", res.FirstError)
	}
	res.RSSConnected, _ = cfg.rss(ctx)
	cpu0, _, _ := cfg.Server.usage(ctx, cfg.URL)
	start = time.Now()
	fc := FanoutConfig{URL: cfg.URL, Key: cfg.Key, Rate: cfg.Rate, Batch: cfg.Batch, Server: cfg.Server, Meter: cfg.Meter}
	sent, ingestErrs := sendFanout(ctx, fc, vehicles, streamNames(vehicles), start.Add(cfg.Duration))
	res.Sent, res.IngestErrors = sent[0], ingestErrs
	res.Elapsed = time.Since(start)
	sleepCtx(ctx, cfg.Drain)
	cpu1, rss, source := cfg.Server.usage(ctx, cfg.URL)
	res.ServerCPUSeconds, res.ServerRSSBytes, res.CPUSource = cpu1-cpu0, rss, source
	cancel()
	wg.Wait()
	res.Expected = res.Sent * int64(len(subs))
	for _, s := range subs {
		res.Delivered += s.got
		res.Duplicates += s.dup
		res.OutOfOrder += s.ooo
		res.Latencies = append(res.Latencies, s.lat...)
	}
	res.Lost = res.Expected - res.Delivered
	slices.Sort(res.Latencies)
	return res, nil
}

// rss is the server's resident memory ("" source: not read).
func (cfg *SSEConfig) rss(ctx context.Context) (float64, string) {
	_, rss, source := cfg.Server.usage(ctx, cfg.URL)
	return rss, source
}

// client is an HTTP client for many long-lived event streams: no limit
// of connections per host, no compression, the server's TLS settings.
func (cfg *SSEConfig) client() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost, t.DisableCompression = cfg.Clients, true
	if cfg.Server.Insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // --insecure: a self-signed certificate
	}
	return &http.Client{Transport: t}
}

// openSSE opens one event stream and returns its body once the server
// answered 200 with text/event-stream.
func openSSE(ctx context.Context, client *http.Client, feedURL, key string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", feedURL, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: sse: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench: sse: %w", err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("bench: sse: %d %s, its body unread: %w", resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		return nil, fmt.Errorf("bench: sse: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return resp.Body, nil
}

// readSSE reads an event stream until it ends, recording the generator's
// events of its data lines.
func (s *fanoutSub) readSSE(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line := sc.Bytes(); bytes.HasPrefix(line, []byte("data:")) {
			s.scan(line, time.Now().UnixNano())
		}
	}
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
