package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// topicReader collects what one bus topic carries, from the earliest
// offset, until the test ends.
type topicReader struct {
	t    *testing.T
	mu   sync.Mutex
	msgs []hub.Message
}

func readTopic(t *testing.T, b hub.Bus, topic string) *topicReader {
	t.Helper()
	r := &topicReader{t: t}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Subscribe(ctx, hub.Subscription{Topic: topic, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
			r.mu.Lock()
			r.msgs = append(r.msgs, msgs...)
			r.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// busMsg is a message read from the bus with its envelope.
type busMsg struct {
	hub.Message
	env *event.Envelope
}

// wait returns the first n messages once they arrived, sorted by
// partition and offset.
func (r *topicReader) wait(n int) []busMsg {
	r.t.Helper()
	var got []hub.Message
	waitFor(r.t, fmt.Sprintf("%d bus messages", n), func() bool {
		r.mu.Lock()
		got = append([]hub.Message(nil), r.msgs...)
		r.mu.Unlock()
		return len(got) >= n
	})
	out := make([]busMsg, 0, len(got))
	for _, m := range got {
		env, err := event.Unmarshal(m.Value)
		if err != nil {
			r.t.Fatalf("bus message does not decode: %v", err)
		}
		out = append(out, busMsg{m, env})
	}
	return out
}

func stamp(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }

func engineMsg(vehicle string, ago time.Duration, seq, dtc int, codes ...string) map[string]any {
	if codes == nil {
		codes = []string{}
	}
	return map[string]any{"timestamp": stamp(-ago), "vehicle_id": vehicle, "data_type": "engine_diagnostics", "sequence": seq,
		"data": map[string]any{
			"engine":       map[string]any{"rpm": 2150, "coolant_temp": 92.5, "load_percentage": 40},
			"status_codes": map[string]any{"dtc_count": dtc, "pending_codes": codes, "mil_status": false},
		},
		"quality_indicators": map[string]any{"signal_strength": 90, "data_completeness": 100, "sensor_health": "good"}}
}

// conforms checks a response against the operation's OpenAPI document.
func (n *node) conforms(method, path string, res resp) {
	n.t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		n.t.Fatal(err)
	}
	op := doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	checkResponse(n.t, doc, op, method, path, res)
}

func TestIngestTelemetryReachesTheBus(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"telemetry:write"}, 100000)
	tel := readTopic(t, n.app.bus, hub.TopicTelemetry)
	evs := readTopic(t, n.app.bus, hub.TopicEvents)

	r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{
		engineMsg("veh-1", 20*time.Second, 1, 1, "P0301"),
		map[string]any{"timestamp": stamp(-19 * time.Second), "vehicle_id": "veh-1", "data_type": "fuel_system", "sequence": 2,
			"data": map[string]any{"fuel_level": map[string]any{"percentage": 61.5, "liters": 40}}},
		map[string]any{"timestamp": stamp(-19 * time.Second), "vehicle_id": "veh-2", "data_type": "gps_enhanced", "sequence": 9,
			"data": map[string]any{"position": map[string]any{"hdop": 0.8, "satellites": 11}}},
	}})
	if r.Status != 202 {
		t.Fatalf("telemetry: %d %s", r.Status, r.Body)
	}
	b := r.json(t)
	if b["accepted"] != 3.0 || fmt.Sprint(b["sequence"]) != "[1 2 9]" || b["ingested_at"] == nil {
		t.Fatalf("answer %s", r.Body)
	}
	n.conforms("POST", "/v1/telemetry", r)

	// the dtc_count rises: a diagnostic_alert goes out with the telemetry
	r = n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("veh-1", 10*time.Second, 3, 3, "P0301", "P0420", "P0171")}})
	if r.Status != 202 {
		t.Fatalf("second telemetry: %d %s", r.Status, r.Body)
	}
	gen, _ := r.json(t)["generated_event_ids"].([]any)
	if len(gen) != 1 {
		t.Fatalf("generated events %s", r.Body)
	}
	n.conforms("POST", "/v1/telemetry", r)

	got := tel.wait(4)
	if len(got) != 4 {
		t.Fatalf("%d telemetry messages on the bus", len(got))
	}
	seqs := map[int64]bool{}
	for _, m := range got {
		env := m.env
		if env.Kind != event.KindTelemetry || env.Org != "org-a" || env.Env != "test" || env.Telemetry == nil || env.IngestedAt.IsZero() {
			t.Fatalf("envelope %+v", env)
		}
		if string(m.Key) != env.Telemetry.VehicleID {
			t.Errorf("key %s for vehicle %s", m.Key, env.Telemetry.VehicleID)
		}
		seqs[env.Telemetry.Sequence] = true
		if env.Telemetry.DataType == "engine_diagnostics" && env.Telemetry.Data["engine"].(map[string]any)["rpm"] != 2150.0 {
			t.Errorf("rpm %#v", env.Telemetry.Data["engine"])
		}
	}
	if len(seqs) != 4 {
		t.Errorf("sequences %v", seqs)
	}
	alerts := evs.wait(1)
	if len(alerts) != 1 {
		t.Fatalf("%d events on the bus", len(alerts))
	}
	a := alerts[0].env
	e := a.Event
	if a.Kind != event.KindEvent || a.Org != "org-a" || e == nil || e.EventType != "diagnostic_alert" || e.Category != "maintenance_events" ||
		e.Severity != "high" || e.EventID != gen[0] || e.Source.VehicleID != "veh-1" || string(alerts[0].Key) != "veh-1" ||
		e.Metadata.CorrelationID != "veh-1" || e.Metadata.SourceSystem != "fleethub.rules" {
		t.Fatalf("alert %+v %+v", a, e)
	}
	if fmt.Sprint(e.EventData["previous_dtc_count"]) != "1" || fmt.Sprint(e.EventData["current_dtc_count"]) != "3" ||
		fmt.Sprint(e.EventData["pending_codes"]) != "[P0301 P0420 P0171]" {
		t.Errorf("event_data %v", e.EventData)
	}
}

func TestIngestEventsReachTheBus(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-b", "live", []string{"events:write"}, 100000)
	evs := readTopic(t, n.app.bus, hub.TopicEvents)
	r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{
		map[string]any{"event_id": "cam-7781", "event_type": "harsh_braking", "category": "safety_events", "timestamp": stamp(-time.Minute),
			"severity": "high", "priority": "urgent", "source": map[string]any{"vehicle_id": "veh-9", "driver_id": "drv-3"},
			"location":   map[string]any{"latitude": 40.0, "longitude": -83.0, "address": "High St"},
			"event_data": map[string]any{"deceleration_g": 0.61, "initial_speed": 70, "final_speed": 20},
			"metadata":   map[string]any{"correlation_id": "cam-batch-1", "source_system": "dashcam"}},
		map[string]any{"event_type": "break_start", "category": "driver_events", "timestamp": stamp(-30 * time.Second),
			"severity": "low", "source": map[string]any{"driver_id": "drv-4"}},
	}})
	if r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	n.conforms("POST", "/v1/events", r)
	ids, _ := r.json(t)["event_ids"].([]any)
	if len(ids) != 2 || ids[0] != "cam-7781" || !strings.HasPrefix(ids[1].(string), "evt_") {
		t.Fatalf("event_ids %s", r.Body)
	}
	got := evs.wait(2)
	byID := map[string]busMsg{}
	for _, m := range got {
		if m.env.Org != "org-b" || m.env.Env != "live" || m.env.Kind != event.KindEvent {
			t.Fatalf("envelope %+v", m.env)
		}
		byID[m.env.Event.EventID] = m
	}
	cam, gen := byID["cam-7781"], byID[ids[1].(string)]
	if cam.env == nil || gen.env == nil {
		t.Fatalf("events on the bus: %v", byID)
	}
	if string(cam.Key) != "veh-9" || cam.env.Event.Metadata.SourceSystem != "dashcam" || cam.env.Event.Metadata.ProcessingTime == "" ||
		cam.env.Event.Location.Address != "High St" || cam.env.Event.EventData["deceleration_g"] != 0.61 {
		t.Errorf("camera event %+v", cam.env.Event)
	}
	if string(gen.Key) != "drv-4" || gen.env.Event.Priority != "normal" || gen.env.Event.Metadata.SourceSystem != "external" {
		t.Errorf("defaults %+v", gen.env.Event)
	}
}

// Bad input is answered 400 with details keyed by field path, and nothing
// of the request reaches the bus.
func TestIngestRejectsBadInput(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"telemetry:write", "events:write"}, 100000)
	tel := readTopic(t, n.app.bus, hub.TopicTelemetry)
	evs := readTopic(t, n.app.bus, hub.TopicEvents)

	good := engineMsg("veh-x", 5*time.Second, 1, 0)
	badRPM := engineMsg("veh-x", 4*time.Second, 2, 5)
	badRPM["data"].(map[string]any)["engine"].(map[string]any)["rpm"] = "fast"
	badTime := engineMsg("veh-x", 3*time.Second, 3, 6)
	badTime["timestamp"] = "yesterday"
	badType := engineMsg("veh-x", 2*time.Second, 4, 7)
	badType["data_type"] = "engine"
	unknown := engineMsg("veh-x", time.Second, 5, 8)
	unknown["data"].(map[string]any)["engine"].(map[string]any)["warp_factor"] = 9
	r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{good, badRPM, badTime, badType, unknown}})
	if r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Fatalf("bad telemetry: %d %s", r.Status, r.Body)
	}
	n.conforms("POST", "/v1/telemetry", r)
	d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for _, f := range []string{"messages[1].data.engine.rpm", "messages[2].timestamp", "messages[3].data_type", "messages[4].data.engine.warp_factor"} {
		if _, ok := d[f]; !ok {
			t.Errorf("details lack %s: %v", f, d)
		}
	}
	if len(d) != 4 {
		t.Errorf("details %v", d)
	}

	many := make([]any, 1001)
	for i := range many {
		many[i] = good
	}
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": many}); r.Status != 400 || r.errCode(t) != "batch_too_large" {
		t.Errorf("1001 messages: %d %.200s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{}}); r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Errorf("no messages: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/telemetry", k, `{"messages": [`); r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Errorf("malformed JSON: %d %s", r.Status, r.Body)
	}

	ev := func(over map[string]any) map[string]any {
		e := map[string]any{"event_type": "door_open", "category": "vehicle_events", "timestamp": stamp(-time.Second), "severity": "low",
			"source": map[string]any{"vehicle_id": "veh-x"}}
		for k, v := range over {
			e[k] = v
		}
		return e
	}
	r = n.do("POST", "/v1/events", k, map[string]any{"events": []any{
		ev(map[string]any{"category": "doors"}),
		ev(map[string]any{"source": map[string]any{}}),
		ev(map[string]any{"location": map[string]any{"latitude": 95, "longitude": 0}}),
		ev(nil),
	}})
	if r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Fatalf("bad events: %d %s", r.Status, r.Body)
	}
	d = r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	for _, f := range []string{"events[0].category", "events[1].source", "events[2].location.latitude"} {
		if _, ok := d[f]; !ok {
			t.Errorf("details lack %s: %v", f, d)
		}
	}

	// a good request for the same vehicle (so the same partition) comes
	// first on both topics: the rejected ones, sent before it, published
	// nothing
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("veh-x", 0, 42, 0)}}); r.Status != 202 {
		t.Fatalf("good telemetry: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{ev(map[string]any{"event_id": "the-good-one"})}}); r.Status != 202 {
		t.Fatalf("good event: %d %s", r.Status, r.Body)
	}
	tg := tel.wait(1)
	if len(tg) != 1 || tg[0].Offset != 1 || tg[0].env.Telemetry.Sequence != 42 {
		t.Fatalf("telemetry topic carries %d messages; first %+v", len(tg), tg[0].Message)
	}
	eg := evs.wait(1)
	if len(eg) != 1 || eg[0].Offset != 1 || eg[0].env.Event.EventID != "the-good-one" {
		t.Fatalf("events topic carries %d messages", len(eg))
	}
}

func TestIngestPermissions(t *testing.T) {
	n := startNode(t, testConfig(t))
	trips := n.key("org-a", "test", []string{"trips:read", "trips:write"}, 100000)
	tel := n.key("org-a", "test", []string{"telemetry:write"}, 100000)
	evk := n.key("org-a", "test", []string{"events:write"}, 100000)
	body := map[string]any{"messages": []any{engineMsg("v", 0, 1, 0)}}
	events := map[string]any{"events": []any{map[string]any{"event_type": "x", "category": "system_events", "timestamp": stamp(0), "severity": "low",
		"source": map[string]any{"vehicle_id": "v"}}}}
	for _, c := range []struct {
		path, key string
		body      any
		status    int
		code      string
	}{
		{"/v1/telemetry", trips, body, 403, "insufficient_permissions"},
		{"/v1/events", trips, events, 403, "insufficient_permissions"},
		{"/v1/events", tel, events, 403, "insufficient_permissions"},
		{"/v1/telemetry", evk, body, 403, "insufficient_permissions"},
		{"/v1/telemetry", "", body, 401, "invalid_api_key"},
		{"/v1/telemetry", tel, body, 202, ""},
		{"/v1/events", evk, events, 202, ""},
	} {
		r := n.do("POST", c.path, c.key, c.body)
		if r.Status != c.status || (c.code != "" && r.errCode(t) != c.code) {
			t.Errorf("%s with %s: %d %s", c.path, c.key, r.Status, r.Body)
		}
		if c.status == 403 {
			if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["required_permission"] == nil {
				t.Errorf("403 does not name the permission: %s", r.Body)
			}
		}
	}
}

// When the bus refuses a request, the answer is 503 and says nothing was
// accepted.
func TestIngestBusDown(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	if err := n.app.bus.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("v", 0, 1, 0)}})
	if r.Status != 503 || r.errCode(t) != "service_unavailable" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("bus closed: %d %v %s", r.Status, r.Header, r.Body)
	}
	n.conforms("POST", "/v1/telemetry", r)
	if !strings.Contains(r.json(t)["error"].(map[string]any)["message"].(string), "nothing was accepted") {
		t.Errorf("message: %s", r.Body)
	}
}
