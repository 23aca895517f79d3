package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/waitfor"
)

func (n *node) publishEvent(org, env string, ev *event.Event) {
	n.t.Helper()
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: time.Now()})
	if err != nil {
		n.t.Fatal(err)
	}
	if err := n.app.bus.Publish(context.Background(), hub.Message{Topic: hub.TopicEvents, Key: []byte(ev.Source.VehicleID), Value: b}); err != nil {
		n.t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	waitfor.Until(t, 10*time.Second, what, f)
}

func TestStreamLifecycle(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	other := n.key("org-b", "test", []string{"streams:manage", "streams:read"}, 100000)
	body := map[string]any{"fleet_id": "f1", "event_filters": map[string]any{"categories": []string{"safety_events"}, "severity_levels": []string{"high", "critical"},
		"custom_conditions": []map[string]any{{"field": "event_data.deceleration_g", "operator": ">", "value": 0.5}}},
		"stream_config": map[string]any{"delivery_method": "websocket", "reliability": "at_least_once"}, "processing_rules": map[string]any{"deduplication": true}}
	r := n.do("POST", "/api/v1/streaming/events/start", k, body)
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	s := r.json(t)
	id := s["stream_id"].(string)
	if s["status"] != "active" || s["websocket_url"] == nil || s["stream_type"] != "events" {
		t.Fatalf("start: %s", r.Body)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
		code  string
	}{
		{map[string]any{"event_filters": map[string]any{"categories": []string{"gossip"}}}, "event_filters.categories[0]", "invalid_request"},
		{map[string]any{"event_filters": map[string]any{"severity_levels": []string{"meh"}}}, "event_filters.severity_levels[0]", "invalid_request"},
		{map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"timezone": "Mars/Olympus"}}}, "event_filters.time_filters.timezone", "validation_failed"},
		{map[string]any{"event_filters": map[string]any{"custom_conditions": []map[string]any{{"field": "severity", "operator": "~", "value": 1}}}}, "event_filters.custom_conditions[0].operator", "invalid_request"},
		{map[string]any{"stream_config": map[string]any{"reliability": "sometimes"}}, "stream_config.reliability", "invalid_request"},
		{map[string]any{"bogus": 1}, "bogus", "validation_failed"},
	} {
		r := n.do("POST", "/api/v1/streaming/events/start", k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%v: details %v lack %s", c.body, d, c.field)
		}
	}
	if r := n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"data_types": []string{"warp_drive"}}); r.Status != 400 {
		t.Errorf("bad data type: %d", r.Status)
	}
	// matching: one message passes, one fails the condition, a duplicate is suppressed
	ev := &event.Event{EventID: "e1", EventType: "harsh_braking", Category: "safety_events", Timestamp: time.Now().UTC(), Severity: "high", Priority: "urgent",
		Source: event.Source{VehicleID: "v1", FleetID: "f1"}, EventData: map[string]any{"deceleration_g": 0.7}}
	n.publishEvent("org-a", "test", ev)
	n.publishEvent("org-a", "test", ev)
	weak := *ev
	weak.EventID, weak.EventData = "e2", map[string]any{"deceleration_g": 0.2}
	n.publishEvent("org-a", "test", &weak)
	n.publishEvent("org-b", "test", &event.Event{EventID: "e3", EventType: "harsh_braking", Category: "safety_events", Timestamp: time.Now(), Severity: "high", Priority: "urgent",
		Source: event.Source{VehicleID: "v1", FleetID: "f1"}, EventData: map[string]any{"deceleration_g": 0.9}})
	var st map[string]any
	waitFor(t, "matched counters", func() bool {
		st = n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
		c := st["counters"].(map[string]any)
		return c["matched"].(float64) == 2 && c["duplicates_suppressed"].(float64) == 1
	})
	if st["lag"].(map[string]any)["last_offset"].(float64) != 1 {
		t.Errorf("log offset %v", st["lag"])
	}
	// another organization cannot see it
	if r := n.do("GET", "/api/v1/streaming/events/status/"+id, other, nil); r.Status != 404 || r.errCode(t) != "stream_not_found" {
		t.Errorf("foreign status: %d", r.Status)
	}
	if r := n.do("GET", "/api/v1/streaming/telemetry/status/"+id, k, nil); r.Status != 404 {
		t.Errorf("event stream under telemetry: %d", r.Status)
	}
	// configure: pause, then change filters
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"state": "paused"})
	if r.Status != 200 || r.json(t)["status"] != "paused" {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"state": "active", "event_filters": map[string]any{"severity_levels": []string{"low"}}})
	cfg := r.json(t)["configuration"].(map[string]any)["event_filters"].(map[string]any)
	if r.Status != 200 || cfg["severity_levels"].([]any)[0] != "low" || cfg["categories"].([]any)[0] != "safety_events" {
		t.Fatalf("configure merge: %d %s", r.Status, r.Body)
	}
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"state": "deleted"}); r.Status != 400 {
		t.Errorf("bad state: %d", r.Status)
	}
	if r := n.do("POST", "/api/v1/streaming/events/stop", other, map[string]any{"stream_id": id}); r.Status != 404 {
		t.Errorf("foreign stop: %d", r.Status)
	}
	// a stream id holding a control character is refused naming it, as in
	// the status and configure paths, not looked up
	for _, path := range []string{"/api/v1/streaming/events/stop", "/api/v1/streaming/telemetry/stop"} {
		r := n.do("POST", path, k, map[string]any{"stream_id": id + "\n"})
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); r.Status != 400 || r.errCode(t) != "validation_failed" || d["stream_id"] != "must not contain a control character" {
			t.Errorf("%s with a control character in stream_id: %d %s", path, r.Status, r.Body)
		}
	}
	r = n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": id})
	if r.Status != 200 || r.json(t)["status"] != "stopped" {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	// refused changes of a stopped stream say so in the user's words
	for _, c := range []struct {
		method, path string
		body         map[string]any
		msg          string
	}{
		{"POST", "/api/v1/streaming/events/stop", map[string]any{"stream_id": id}, "the stream is stopped already"},
		{"PUT", "/api/v1/streaming/events/configure/" + id, map[string]any{"state": "active"}, "the stream is stopped: a stopped stream cannot be configured"},
	} {
		r := n.do(c.method, c.path, k, c.body)
		if r.Status != 409 || r.errCode(t) != "invalid_state_transition" {
			t.Errorf("%s %s on a stopped stream: %d %s", c.method, c.path, r.Status, r.Body)
			continue
		}
		e := r.json(t)["error"].(map[string]any)
		if e["message"] != c.msg || e["details"].(map[string]any)["status"] != "stopped" {
			t.Errorf("%s %s on a stopped stream: %v; want message %q, details.status stopped", c.method, c.path, e, c.msg)
		}
	}
	if r := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil); r.Status != 200 || r.json(t)["stopped_at"] == nil {
		t.Errorf("stopped status readable: %d", r.Status)
	}
}

func TestStreamsSurviveRestart(t *testing.T) {
	cfg := testConfig(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"vehicles": []string{"v1"}, "data_types": []string{"engine_diagnostics"},
		"stream_config": map[string]any{"frequency": "high", "compression": true}})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	n.stop()
	n2 := startNode(t, cfg)
	if r := n2.do("GET", "/api/v1/streaming/telemetry/status/"+id, k, nil); r.Status != 200 || r.json(t)["status"] != "active" {
		t.Fatalf("after restart: %d %s", r.Status, r.Body)
	}
}

func TestCorrelatedEvents(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"veh-c"}},
		"processing_rules": map[string]any{"correlation_enabled": true}})
	id := r.json(t)["stream_id"].(string)
	var evs []map[string]any
	for i, corr := range []string{"trip-1", "trip-2", "trip-1", "trip-1", "trip-2"} {
		evs = append(evs, map[string]any{"event_type": "waypoint_reached", "category": "operational_events", "timestamp": time.Now().UTC().Format(time.RFC3339),
			"severity": "low", "priority": "normal", "source": map[string]any{"vehicle_id": "veh-c"},
			"metadata": map[string]any{"correlation_id": corr, "sequence_number": i + 1}})
	}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	var got map[string]any
	waitFor(t, "correlated messages", func() bool {
		got = n.do("GET", "/api/v1/streaming/events/correlations/"+id+"?correlation_id=trip-1", k, nil).json(t)
		return got["count"] == 3.0
	})
	msgs := got["messages"].([]any)
	last := msgs[2].(map[string]any)["message"].(map[string]any)
	tag := last["enrichment"].(map[string]any)["correlation"].(map[string]any)
	if tag["correlation_id"] != "trip-1" || tag["position"] != 3.0 || tag["related_events"] != 2.0 {
		t.Errorf("correlation tag %v", tag)
	}
	if r := n.do("GET", "/api/v1/streaming/events/correlations/"+id, k, nil); r.Status != 400 {
		t.Errorf("without correlation_id: %d", r.Status)
	}
	// only white space names no correlation: refused as missing, never
	// answered as a search for a blank id that finds nothing
	for _, q := range []string{"correlation_id=", "correlation_id=%20", "correlation_id=%09%20"} {
		r := n.do("GET", "/api/v1/streaming/events/correlations/"+id+"?"+q, k, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", q, r.Status, r.Body)
			continue
		}
		if msg, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["correlation_id"].(string); !strings.Contains(msg, "required") {
			t.Errorf("%s: details.correlation_id %q, want is required", q, msg)
		}
	}
	// a correlation_id too long is refused for its length, beside a bad
	// limit: both named at once
	r = n.do("GET", "/api/v1/streaming/events/correlations/"+id+"?limit=0&correlation_id="+strings.Repeat("c", 201), k, nil)
	if r.Status != 400 || r.errCode(t) != "invalid_request" {
		t.Fatalf("long correlation_id and limit 0: %d %s", r.Status, r.Body)
	}
	d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	if msg, _ := d["correlation_id"].(string); strings.Contains(msg, "required") || !strings.Contains(msg, "200") || d["limit"] == nil {
		t.Errorf("long correlation_id and limit 0: details %v; want correlation_id refused for its length and limit named", d)
	}
}

// Every streaming endpoint answers an unknown or bad query parameter the
// same way: 400 invalid_request, details naming it.
func TestStreamingQueryParameters(t *testing.T) {
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	ws := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}})
	hook := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": "http://127.0.0.1:1/h"})
	for path, param := range map[string]string{
		"/api/v1/streaming/streams?bogus=1":                                         "bogus",
		"/api/v1/streaming/events/status/" + ws + "?bogus=1":                        "bogus",
		"/api/v1/streaming/events/correlations/" + ws + "?correlation_id=x&bogus=1": "bogus",
		"/api/v1/streaming/events/deliveries/" + hook + "?bogus=1":                  "bogus",
		"/api/v1/streaming/sse?stream_id=" + ws + "&bogus=1":                        "bogus",
		"/api/v1/streaming/sse?stream_id=" + hook:                                   "stream_id",
		"/api/v1/streaming/feed?foo=1":                                              "foo",
		"/api/v1/streaming/feed?limit=0":                                            "limit",
		"/api/v1/streaming/streams?limit=0":                                         "limit",
	} {
		r := n.do("GET", path, k, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %s, want 400 invalid_request", path, r.Status, r.Body)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[param] == nil {
			t.Errorf("%s: details %v do not name %s", path, d, param)
		}
	}
	for _, q := range []string{"stream_id=" + ws + "&bogus=1", "stream_id=" + hook} {
		u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?" + q
		_, res, err := websocket.DefaultDialer.Dial(u, http.Header{"X-Api-Key": {k}})
		if err == nil || res == nil || res.StatusCode != 400 {
			t.Errorf("ws %s: %v %v, want 400", q, err, res)
			continue
		}
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if e, _ := body["error"].(map[string]any); e == nil || e["code"] != "invalid_request" {
			t.Errorf("ws %s: %v", q, body)
		}
	}
	// declared parameters still work
	if r := n.do("GET", "/api/v1/streaming/streams?limit=5&kind=events", k, nil); r.Status != 200 {
		t.Errorf("listing: %d %s", r.Status, r.Body)
	}
}

// TestStreamEventStreamIDRefusals: the registered stream's event stream
// follows one stream; a list of ids, or an id too long, is refused for
// what it is (400 invalid_request naming stream_id), not answered as a
// missing stream or a missing parameter.
func TestStreamEventStreamIDRefusals(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-sse-ids", "test", []string{"streams:manage", "streams:read"}, 100000)
	a := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}})
	b := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}})
	for id, want := range map[string]string{a + "," + b: "one stream", strings.Repeat("s", 201): "200", "": "required", "%20%09": "required"} {
		r := n.do("GET", "/api/v1/streaming/sse?stream_id="+id, k, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("stream_id %.20q: %d %s; want 400 invalid_request", id, r.Status, r.Body)
			continue
		}
		msg, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["stream_id"].(string)
		if !strings.Contains(msg, want) {
			t.Errorf("stream_id %.20q: details.stream_id %q; want it to say %q", id, msg, want)
		}
	}
}

// TestStreamEventStreamEpochRefusals: a registered stream's event stream
// takes epoch by the websocket's rule: 1-64 characters of A-Z a-z 0-9 _ -,
// and only as the history of last_offset (or Last-Event-ID). An epoch that
// breaks it is refused naming it (400 invalid_request), not answered with
// history_lost and a replay from the oldest retained offset.
func TestStreamEventStreamEpochRefusals(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-sse-epoch", "test", []string{"streams:manage", "streams:read"}, 100000)
	id := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}})
	for _, q := range []string{"epoch=9f2c41d07a1be3c5", "epoch=a%2Fb&last_offset=1", "epoch=&last_offset=1", "epoch=%20&last_offset=1",
		"epoch=" + strings.Repeat("e", 65) + "&last_offset=1"} {
		r := n.do("GET", "/api/v1/streaming/sse?stream_id="+id+"&"+q, k, nil)
		if r.Status != 400 || r.errCode(t) != "invalid_request" {
			t.Errorf("%s: %d %.300s; want 400 invalid_request", q, r.Status, r.Body)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["epoch"] == nil {
			t.Errorf("%s: details %v do not name epoch", q, d)
		}
	}
}
