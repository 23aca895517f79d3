package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/telemetry"
)

// Every request the events generator builds is valid, its events have new
// ids and each vehicle's sequence numbers count up from 1; the mix of
// filters gives each vehicle one group stream and each event the number
// of streams matches says.
func TestEventRequestsAreValid(t *testing.T) {
	cfg := EventsConfig{URL: "http://127.0.0.1:1", Rules: "dedup,ordering"}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	r := newEventRun(cfg)
	groups := map[string]int{}
	for i := range r.groups {
		for _, v := range r.filter(i)["vehicle_ids"].([]string) {
			groups[v]++
		}
	}
	if len(groups) != cfg.Vehicles {
		t.Fatalf("group streams follow %d vehicles, want %d", len(groups), cfg.Vehicles)
	}
	for v, n := range groups {
		if n != 1 {
			t.Fatalf("vehicle %s in %d groups", v, n)
		}
	}
	bus := &countingBus{}
	svc, err := telemetry.New(telemetry.Config{}, bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	snd := &eventSender{vehicles: []int{0, 8, 16}, seq: make([]int64, 3)}
	ids := map[string]bool{}
	seqs := map[string][]int64{}
	var first int64
	for range 4 {
		body, appends := r.body(snd, first, time.Now())
		if want := int64(3 * cfg.Batch); appends != want {
			t.Fatalf("request owes %d appends, want %d (3 streams an event)", appends, want)
		}
		first += int64(cfg.Batch)
		var req struct {
			Events []map[string]any `json:"events"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		if _, err := svc.IngestEvents(context.Background(), "o", "test", req.Events); err != nil {
			t.Fatalf("generated request rejected: %v", err)
		}
		for _, e := range req.Events {
			id := e["event_id"].(string)
			if ids[id] {
				t.Fatalf("event_id %s twice", id)
			}
			ids[id] = true
			v := e["source"].(map[string]any)["vehicle_id"].(string)
			n, _ := e["metadata"].(map[string]any)["sequence_number"].(json.Number).Int64()
			seqs[v] = append(seqs[v], n)
		}
	}
	if bus.msgs != 4*cfg.Batch {
		t.Fatalf("%d events published, want %d", bus.msgs, 4*cfg.Batch)
	}
	for v, s := range seqs {
		for i, n := range s {
			if n != int64(i+1) {
				t.Fatalf("vehicle %s: sequence numbers %v, want 1, 2, …", v, s[:min(len(s), 10)])
			}
		}
	}
	if len(seqs) != 3 {
		t.Fatalf("%d vehicles, want 3", len(seqs))
	}
}
