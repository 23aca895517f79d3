package main

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLogMetrics: /metrics counts what the embedded bus wrote: every
// event published, in rounds of one write and one fsync each, fewer
// rounds than records once requests come together.
func TestLogMetrics(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	event := func(id string) map[string]any {
		return map[string]any{"event_id": id, "event_type": "idling", "category": "vehicle_events",
			"timestamp": time.Now().UTC().Format(time.RFC3339), "severity": "low", "source": map[string]any{"vehicle_id": "veh-1"}}
	}
	before := logMetric(t, n, "fleethub_log_records_written_total", "bus")
	var evs []any
	for i := range 10 {
		evs = append(evs, event(fmt.Sprint("batch-", i)))
	}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{event(fmt.Sprint("one-", i))}}); r.Status != 202 {
				t.Errorf("event: %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	records := logMetric(t, n, "fleethub_log_records_written_total", "bus") - before
	rounds := logMetric(t, n, "fleethub_log_write_rounds_total", "bus")
	syncs := logMetric(t, n, "fleethub_log_syncs_total", "bus")
	t.Logf("bus: %v records in %v rounds since the first scrape, %v syncs in all", records, rounds, syncs)
	if records != 26 {
		t.Errorf("the bus wrote %v records for 26 events", records)
	}
	if rounds < 1 || syncs < rounds {
		t.Errorf("%v rounds and %v syncs: want a sync for every round", rounds, syncs)
	}
	if total := logMetric(t, n, "fleethub_log_records_written_total", "bus"); rounds >= total {
		t.Errorf("%v rounds for %v records: a request's events are written in one round", rounds, total)
	}
}

// logMetric is the value of metric{log="name"} on the node's /metrics.
func logMetric(t *testing.T, n *node, metric, name string) float64 {
	t.Helper()
	m := n.do("GET", "/metrics", "", nil)
	prefix := metric + `{log="` + name + `"} `
	for line := range strings.SplitSeq(string(m.Body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics lacks %s", prefix)
	return 0
}
