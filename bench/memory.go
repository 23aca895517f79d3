package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// MemoryConfig says what Memory sends.
type MemoryConfig struct {
	URL, Key string
	Streams  int // websocket event streams matching every event
	Events   int // events ingested
	Size     int // bytes of each event's payload
	Batch    int // events per request
}

// MemoryResult is the server's memory while its stream logs fill.
type MemoryResult struct {
	Streams, Events, Size int
	Matched               int64 // entries appended over all streams
	Elapsed               time.Duration
	RSSBefore, RSSMax     float64
	RSSAfter              float64
}

// Print writes a summary.
func (r *MemoryResult) Print(w io.Writer) { r.Report().WriteTable(w) }

// Report is the result's figures.
func (r *MemoryResult) Report() *Report {
	rep := &Report{Mode: "memory"}
	rep.Add("events", "events ingested", r.Events, "")
	rep.Add("size", "bytes each", r.Size, "")
	rep.Add("streams", "streams", r.Streams, "")
	rep.Add("entries", "stream-log entries", r.Matched, "")
	rep.Add("written_gib", "written", float64(r.Matched)*float64(r.Size)/(1<<30), "GiB")
	rep.Add("elapsed_s", "took", r.Elapsed.Seconds(), "s")
	rep.Add("server_rss_before_mib", "server RSS before", r.RSSBefore/(1<<20), "MiB")
	rep.Add("server_rss_max_mib", "server RSS at most", r.RSSMax/(1<<20), "MiB")
	rep.Add("server_rss_after_mib", "server RSS after", r.RSSAfter/(1<<20), "MiB")
	return rep
}

// Memory starts cfg.Streams event streams, ingests cfg.Events events of
// cfg.Size bytes that every stream matches, waits until each stream's
// log holds them all, and samples the server's resident memory (from
// /metrics) every 200 ms meanwhile.
func Memory(ctx context.Context, cfg MemoryConfig) (*MemoryResult, error) {
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	vehicle := fmt.Sprintf("mem-bench-%d", time.Now().UnixNano())
	ids := make([]string, 0, cfg.Streams)
	defer func() {
		for _, id := range ids {
			apiCall(context.Background(), "POST", cfg.URL+"/api/v1/streaming/events/stop", cfg.Key, map[string]any{"stream_id": id}, nil)
		}
	}()
	for range cfg.Streams {
		var st struct {
			StreamID string `json:"stream_id"`
		}
		if err := apiCall(ctx, "POST", cfg.URL+"/api/v1/streaming/events/start", cfg.Key, map[string]any{
			"event_filters": map[string]any{"vehicle_ids": []string{vehicle}}}, &st); err != nil {
			return nil, fmt.Errorf("bench: start stream: %w", err)
		}
		ids = append(ids, st.StreamID)
	}
	res := &MemoryResult{Streams: cfg.Streams, Events: cfg.Events, Size: cfg.Size}
	_, res.RSSBefore = serverProcess(ctx, cfg.URL)
	sctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
				_, rss := serverProcess(sctx, cfg.URL)
				mu.Lock()
				res.RSSMax = max(res.RSSMax, rss)
				mu.Unlock()
			}
		}
	})
	start := time.Now()
	pad := strings.Repeat("x", max(0, cfg.Size-200))
	err := func() error {
		for sent := 0; sent < cfg.Events; sent += cfg.Batch {
			evs := make([]map[string]any, 0, cfg.Batch)
			for i := sent; i < min(cfg.Events, sent+cfg.Batch); i++ {
				evs = append(evs, map[string]any{"event_type": "door_open", "category": "vehicle_events", "severity": "low",
					"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "source": map[string]any{"vehicle_id": vehicle},
					"event_data": map[string]any{"n": i, "pad": pad}})
			}
			if err := apiCall(ctx, "POST", cfg.URL+"/v1/events", cfg.Key, map[string]any{"events": evs}, nil); err != nil {
				return fmt.Errorf("bench: ingest: %w", err)
			}
		}
		// wait for every stream's log to hold every event
		for _, id := range ids {
			for {
				var st struct {
					Lag struct {
						LastOffset int64 `json:"last_offset"`
					} `json:"lag"`
				}
				if err := apiCall(ctx, "GET", cfg.URL+"/api/v1/streaming/events/status/"+id, cfg.Key, nil, &st); err != nil {
					return fmt.Errorf("bench: status: %w", err)
				}
				if st.Lag.LastOffset >= int64(cfg.Events) {
					res.Matched += st.Lag.LastOffset
					break
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		return nil
	}()
	res.Elapsed = time.Since(start)
	stop()
	wg.Wait()
	_, res.RSSAfter = serverProcess(ctx, cfg.URL)
	if err != nil {
		return nil, err
	}
	return res, nil
}
