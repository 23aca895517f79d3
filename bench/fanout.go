package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// FanoutConfig drives `fleethub bench fanout`: Subscribers websocket
// clients follow one event stream while Rate events per second are
// ingested through POST /v1/events for Duration.
type FanoutConfig struct {
	URL         string
	Key         string
	Subscribers int           // default 100
	Rate        int           // events per second ingested, default 1000
	Duration    time.Duration // default 10s
	Batch       int           // events per ingest request, default 50
	Drain       time.Duration // wait after the last ingest, default 3s
}

// FanoutResult is what the subscribers saw.
type FanoutResult struct {
	Sent, Expected, Delivered, Lost, Duplicates, OutOfOrder int64
	Elapsed                                                 time.Duration
	Latencies                                               []time.Duration
	ServerCPUSeconds                                        float64
	ServerRSSBytes                                          float64
	IngestErrors                                            int64
}

// Print writes a summary.
func (r *FanoutResult) Print(w io.Writer) {
	q := func(f float64) time.Duration {
		if len(r.Latencies) == 0 {
			return 0
		}
		i := int(f*float64(len(r.Latencies))) - 1
		return r.Latencies[max(0, min(i, len(r.Latencies)-1))]
	}
	secs := r.Elapsed.Seconds()
	fmt.Fprintf(w, "fanout: sent %d events, delivered %d of %d expected = %.0f deliveries/s\n", r.Sent, r.Delivered, r.Expected, float64(r.Delivered)/secs)
	fmt.Fprintf(w, "  latency ingest→receipt p50 %s  p99 %s  p99.9 %s  max %s\n", q(.5), q(.99), q(.999), q(1))
	fmt.Fprintf(w, "  lost %d  duplicates %d  out-of-order %d  ingest errors %d\n", r.Lost, r.Duplicates, r.OutOfOrder, r.IngestErrors)
	fmt.Fprintf(w, "  server CPU %.2f s (%.0f%% of one core)  RSS %.1f MiB\n", r.ServerCPUSeconds, 100*r.ServerCPUSeconds/secs, r.ServerRSSBytes/(1<<20))
}

func apiCall(ctx context.Context, method, url, key string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// serverProcess reads process_cpu_seconds_total and
// process_resident_memory_bytes from /metrics.
func serverProcess(ctx context.Context, base string) (cpu, rss float64) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			cpu, _ = strconv.ParseFloat(v, 64)
		}
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			rss, _ = strconv.ParseFloat(v, 64)
		}
	}
	return cpu, rss
}

type wrapper struct {
	Offset  int64 `json:"offset"`
	Message struct {
		EventData struct {
			Seq    int64 `json:"seq"`
			SentNS int64 `json:"sent_ns"`
		} `json:"event_data"`
	} `json:"message"`
}

// Fanout runs the fan-out benchmark.
func Fanout(ctx context.Context, cfg FanoutConfig) (*FanoutResult, error) {
	if cfg.Subscribers == 0 {
		cfg.Subscribers = 100
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
	vehicle := fmt.Sprintf("fanout-%d", time.Now().UnixNano())
	var st struct {
		StreamID string `json:"stream_id"`
	}
	if err := apiCall(ctx, "POST", cfg.URL+"/api/v1/streaming/events/start", cfg.Key, map[string]any{
		"event_filters": map[string]any{"vehicle_ids": []string{vehicle}}}, &st); err != nil {
		return nil, fmt.Errorf("bench: start stream: %w", err)
	}
	defer apiCall(context.Background(), "POST", cfg.URL+"/api/v1/streaming/events/stop", cfg.Key, map[string]any{"stream_id": st.StreamID}, nil)

	u, _ := url.Parse(cfg.URL)
	wsURL := "ws://" + u.Host + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(st.StreamID) + "&api_key=" + url.QueryEscape(cfg.Key)
	type sub struct {
		conn *websocket.Conn
		lat  []time.Duration
		seen map[int64]bool
		last int64
		dup  int64
		ooo  int64
	}
	subs := make([]*sub, cfg.Subscribers)
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	for i := range subs {
		c, _, err := dialer.DialContext(ctx, wsURL, nil)
		if err != nil {
			for _, s := range subs[:i] {
				s.conn.Close()
			}
			return nil, fmt.Errorf("bench: subscriber %d: %w", i, err)
		}
		subs[i] = &sub{conn: c, seen: map[int64]bool{}, lat: make([]time.Duration, 0, cfg.Rate*int(cfg.Duration.Seconds()+1))}
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func(s *sub) {
			defer wg.Done()
			for {
				_, data, err := s.conn.ReadMessage()
				if err != nil {
					return
				}
				now := time.Now().UnixNano()
				var ws []wrapper
				if len(data) > 0 && data[0] == '[' {
					_ = json.Unmarshal(data, &ws)
				} else {
					var w wrapper
					if json.Unmarshal(data, &w) == nil && w.Offset > 0 {
						ws = append(ws, w)
					}
				}
				for _, w := range ws {
					seq := w.Message.EventData.Seq
					if s.seen[seq] {
						s.dup++
						continue
					}
					s.seen[seq] = true
					if seq < s.last {
						s.ooo++
					}
					s.last = seq
					s.lat = append(s.lat, time.Duration(now-w.Message.EventData.SentNS))
				}
			}
		}(s)
	}
	cpu0, _ := serverProcess(ctx, cfg.URL)
	start := time.Now()
	var sent, ingestErr atomic.Int64
	interval := time.Duration(float64(time.Second) * float64(cfg.Batch) / float64(cfg.Rate))
	var seq int64
	ticker := time.NewTicker(interval)
	deadline := start.Add(cfg.Duration)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		<-ticker.C
		evs := make([]map[string]any, cfg.Batch)
		now := time.Now()
		for i := range evs {
			seq++
			evs[i] = map[string]any{"event_type": "bench_ping", "category": "operational_events", "timestamp": now.UTC().Format(time.RFC3339Nano),
				"severity": "low", "priority": "normal", "source": map[string]any{"vehicle_id": vehicle},
				"event_data": map[string]any{"seq": seq, "sent_ns": now.UnixNano()}}
		}
		if err := apiCall(ctx, "POST", cfg.URL+"/v1/events", cfg.Key, map[string]any{"events": evs}, nil); err != nil {
			ingestErr.Add(1)
			continue
		}
		sent.Add(int64(cfg.Batch))
	}
	ticker.Stop()
	elapsed := time.Since(start)
	time.Sleep(cfg.Drain)
	cpu1, rss := serverProcess(ctx, cfg.URL)
	for _, s := range subs {
		s.conn.Close()
	}
	wg.Wait()
	res := &FanoutResult{Sent: sent.Load(), Elapsed: elapsed, ServerCPUSeconds: cpu1 - cpu0, ServerRSSBytes: rss, IngestErrors: ingestErr.Load()}
	res.Expected = res.Sent * int64(cfg.Subscribers)
	for _, s := range subs {
		res.Delivered += int64(len(s.seen))
		res.Duplicates += s.dup
		res.OutOfOrder += s.ooo
		res.Latencies = append(res.Latencies, s.lat...)
	}
	res.Lost = res.Expected - res.Delivered
	sort.Slice(res.Latencies, func(i, j int) bool { return res.Latencies[i] < res.Latencies[j] })
	return res, nil
}
