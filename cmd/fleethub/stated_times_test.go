package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// statedTime is a time the service states itself: UTC, RFC 3339, to the
// millisecond at most.
var statedTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$`)

// TestStatedTimesToTheMillisecond: the times the service states itself,
// in answers and in the event messages it publishes, are UTC to the
// millisecond, as created_at and updated_at are: a single upload's
// processed_at, the route's estimated_arrival_time, the safety analysis'
// analysis_timestamp, the health report's timestamp, an ingest answer's
// ingested_at and an event's
// metadata.processing_time.
func TestStatedTimesToTheMillisecond(t *testing.T) {
	clk := &clock{}
	clk.advance(123456789 * time.Nanosecond)
	cfg := testConfig(t)
	cfg.Now = clk.now
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	check := func(what string, v any) {
		t.Helper()
		if s, ok := v.(string); !ok || !statedTime.MatchString(s) {
			t.Errorf("%s: %v, want an RFC 3339 UTC time to the millisecond", what, v)
		}
	}

	t0 := time.Now().Add(-40 * time.Minute).UTC().Truncate(time.Second)
	id := n.startTrip(k, "veh-times", t0)
	speeds := append(append(constant(50, 400), 30, 10, 0), constant(0, 20)...)
	for v := 2.0; v < 50; v += 2 {
		speeds = append(speeds, v)
	}
	speeds = append(speeds, constant(50, 900-len(speeds))...)
	if r := n.batch(k, id, track(t0, 40, -83, speeds)); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	one := n.do("POST", "/v1/locations/single", k, map[string]any{"trip_id": id, "latitude": 40.2, "longitude": -83.0,
		"timestamp": t0.Add(901 * time.Second).Format(time.RFC3339Nano), "speed_kmh": 50.0})
	if one.Status != 200 {
		t.Fatalf("single upload: %d %s", one.Status, one.Body)
	}
	check("processed_at", one.json(t)["processed_at"])

	r := n.do("GET", "/v1/trips/"+id+"/route", k, nil)
	if r.Status != 200 {
		t.Fatalf("route: %d %s", r.Status, r.Body)
	}
	wps := r.json(t)["waypoints"].([]any)
	if len(wps) < 2 {
		t.Fatalf("waypoints %v", wps)
	}
	for _, w := range wps {
		check("waypoint estimated_arrival_time", w.(map[string]any)["estimated_arrival_time"])
	}
	s := n.do("GET", "/v1/analytics/safety-score/"+id, k, nil)
	if s.Status != 200 {
		t.Fatalf("safety: %d %s", s.Status, s.Body)
	}
	check("analysis_timestamp", s.json(t)["analysis_timestamp"])
	h := n.do("GET", "/v1/trips/health", k, nil)
	if h.Status != 200 && h.Status != 503 {
		t.Fatalf("health: %d %s", h.Status, h.Body)
	}
	check("health timestamp", h.json(t)["timestamp"])
	tm := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{map[string]any{"timestamp": time.Now().UTC().Format(time.RFC3339),
		"vehicle_id": "veh-times", "data_type": "environmental", "data": map[string]any{"cabin": map[string]any{"temp": 21}}}}})
	if tm.Status != 202 {
		t.Fatalf("telemetry: %d %s", tm.Status, tm.Body)
	}
	check("telemetry ingested_at", tm.json(t)["ingested_at"])

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []*event.Envelope
	go n.app.bus.Subscribe(ctx, hub.Subscription{Topic: hub.TopicEvents, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if env, err := event.Unmarshal(m.Value); err == nil && env.Event.Source.TripID == id {
				got = append(got, env)
			}
		}
		return nil
	})
	waitFor(t, "the trip's events on the bus", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	for _, e := range got {
		check(e.Event.EventType+" metadata.processing_time", e.Event.Metadata.ProcessingTime)
	}
}

// TestEveryAnswerStatesTimesToTheMillisecond: across the corpus of
// TestNoComputedFieldIsConstant (trips, uploads, routes and safety
// analyses, incidents, alerts, devices, streams, health, search,
// matrices and matching), which sends its own times in whole seconds
// and UTC, every date-time of every answer is UTC to the millisecond:
// one with more digits or another zone was made by the service without
// internal/apitime.
func TestEveryAnswerStatesTimesToTheMillisecond(t *testing.T) {
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	defer gw.Close()
	cfg := testConfig(t)
	cfg.NotifyURL = gw.URL
	cfg.Addresses = addressFixture(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	c := newCorpus(t, n)
	k := n.key("org-a", "test", []string{"all"}, 1000000)
	trips := corpusTrips(c, k)
	corpusEmergency(c, k, trips)
	corpusFinishTrips(c, k, trips)
	corpusDevices(c, k)
	corpusRest(c, k)
	if c.answers < 50 {
		t.Fatalf("only %d answers: the corpus no longer reaches what it should", c.answers)
	}
	slices.Sort(c.times)
	for _, s := range slices.Compact(c.times) {
		t.Errorf("not UTC to the millisecond: %s", s)
	}
}
