package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestConsoleUnderLoad measures the console while 1,000 vehicles report a
// position every second (gps_enhanced telemetry, one request of 1,000
// messages) and 100 events arrive every second: the frame times the page
// sees (requestAnimationFrame intervals, through performance.now()) and its
// JavaScript heap after a forced collection, sampled every 30 s. It runs
// only when FLEETHUB_CONSOLE_LOAD names a duration (e.g. 10m) and reports
// the figures; docs/console.md has the measured ones.
func TestConsoleUnderLoad(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("FLEETHUB_CONSOLE_LOAD"))
	if err != nil || d <= 0 {
		t.Skip("set FLEETHUB_CONSOLE_LOAD to a duration (e.g. 10m) to measure the console under load")
	}
	ctx := browser(t)
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 10000000)
	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/#key="+k))
	eventually(t, ctx, "connected", `document.getElementById('conn').textContent === 'live'`)
	chrome(t, ctx, "frame recorder", chromedp.Evaluate[chromedp.Void](`window.__frames = []; window.__longtasks = 0;
(function tick(last) { requestAnimationFrame(now => { window.__frames.push(now - last); tick(now); }); })(performance.now());
new PerformanceObserver(l => { window.__longtasks += l.getEntries().length; }).observe({entryTypes: ['longtask']});`))

	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- feed(n.url, k, stop) }()
	heap := func() float64 {
		v, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (float64, error) {
			if _, err := cdp.Call(ctx, tg, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
				return 0, err
			}
			r, err := cdp.Call(ctx, tg, runtime.GetHeapUsage, cdp.Empty{})
			return r.UsedSize, err
		})
		if err != nil {
			t.Fatalf("heap: %v", err)
		}
		return v / (1 << 20)
	}
	var heaps []float64
	var frames []float64
	// a sample every 30 s until d has passed (the last one at or past d)
	sample := time.NewTicker(30 * time.Second)
	defer sample.Stop()
	for start := time.Now(); time.Since(start) < d; {
		<-sample.C
		heaps = append(heaps, heap())
		// drain the recorded frames so the page's own array stays small
		f, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`window.__frames.splice(0)`))
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, f...)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stats, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({stats: window.fleethubConsole.stats, vehicles: document.querySelectorAll('path.vehicle').length,
  feed: document.querySelectorAll('#feed li').length, longtasks: window.__longtasks})`))
	if err != nil {
		t.Fatal(err)
	}
	sort.Float64s(frames)
	pct := func(p float64) float64 {
		if len(frames) == 0 {
			return math.NaN()
		}
		return frames[int(p*float64(len(frames)-1))]
	}
	t.Logf("console under load for %v: %d frames, frame interval p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms",
		d, len(frames), pct(.5), pct(.95), pct(.99), pct(1))
	t.Logf("JS heap after collection every 30 s (MiB): %s", fmtFloats(heaps))
	t.Logf("page: %v", stats)
	if len(heaps) >= 4 && heaps[len(heaps)-1] > 2*heaps[1]+8 {
		t.Errorf("the heap grows: %s", fmtFloats(heaps))
	}
}

// feed sends, every second, a position for each of 1,000 vehicles and 100
// events, until stop is closed.
func feed(url, key string, stop chan struct{}) error {
	post := func(path string, body any) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", url+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != 202 {
			return fmt.Errorf("%s: %d", path, res.StatusCode)
		}
		return nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	sevs := []string{"low", "medium", "high", "critical"}
	cats := []struct{ cat, typ string }{{"safety_events", "harsh_braking"}, {"vehicle_events", "idling"}, {"driver_events", "break_start"}, {"operational_events", "delivery_completed"}}
	for s := 0; ; s++ {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		now := time.Now().UTC()
		msgs := make([]any, 1000)
		for i := range msgs {
			a := float64(i)/1000*2*math.Pi + float64(s)*0.002
			msgs[i] = map[string]any{"timestamp": now.Format(time.RFC3339Nano), "vehicle_id": fmt.Sprintf("v%04d", i), "data_type": "gps_enhanced", "sequence": s,
				"data": map[string]any{"position": map[string]any{"latitude": 40 + 0.05*math.Sin(a), "longitude": -83 + 0.07*math.Cos(a)}}}
		}
		if err := post("/v1/telemetry", map[string]any{"messages": msgs}); err != nil {
			return err
		}
		evs := make([]any, 100)
		for i := range evs {
			c := cats[i%len(cats)]
			evs[i] = map[string]any{"event_type": c.typ, "category": c.cat, "timestamp": now.Format(time.RFC3339Nano), "severity": sevs[(i/4)%4],
				"source": map[string]any{"vehicle_id": fmt.Sprintf("v%04d", (s*100+i)%1000)}, "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		}
		if err := post("/v1/events", map[string]any{"events": evs}); err != nil {
			return err
		}
	}
}

func fmtFloats(v []float64) string {
	var b bytes.Buffer
	for i, f := range v {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%.1f", f)
	}
	return b.String()
}
