package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// startKind starts a stream of kind and returns its id.
func startKind(t *testing.T, n *node, key, kind string, body map[string]any) string {
	t.Helper()
	r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
	if r.Status != 201 {
		t.Fatalf("start %s %v: %d %s", kind, body, r.Status, r.Body)
	}
	return r.json(t)["stream_id"].(string)
}

// messagesOf decodes the messages of delivered entries as objects.
func messagesOf(t *testing.T, ds []delivered) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(ds))
	for i, d := range ds {
		if err := json.Unmarshal(d.Message, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestFleetScopedEventStream: an event stream with fleet_id takes the
// events of its fleet, the fleet given by their sender or else their
// vehicle's (its profile), and nothing of another fleet or of none.
func TestFleetScopedEventStream(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for v, fleet := range map[string]string{"veh-p": "fleet-a", "veh-q": "fleet-b"} {
		if r := n.do("PUT", "/v1/vehicles/"+v, k, map[string]any{"fleet_id": fleet}); r.Status != 200 && r.Status != 201 {
			t.Fatalf("vehicle %s: %d %s", v, r.Status, r.Body)
		}
	}
	ws := map[string]any{"delivery_method": "websocket"}
	id := startKind(t, n, k, "events", map[string]any{"fleet_id": "fleet-a", "stream_config": ws})
	probe := startKind(t, n, k, "events", map[string]any{"stream_config": ws}) // takes everything
	c := n.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	pc := n.dial(t, k, "stream_id="+probe)
	expectSubscribed(t, pc)
	ev := func(id, vehicle, fleet string) map[string]any {
		src := map[string]any{"vehicle_id": vehicle}
		if fleet != "" {
			src["fleet_id"] = fleet
		}
		return map[string]any{"event_id": id, "event_type": "harsh_braking", "category": "safety_events", "timestamp": stamp(0),
			"severity": "high", "source": src}
	}
	body := map[string]any{"events": []any{ev("given-b", "veh-f", "fleet-b"), ev("given-a", "veh-f", "fleet-a"), ev("no-fleet", "veh-f", ""),
		ev("profile-a", "veh-p", ""), ev("profile-b", "veh-q", ""), ev("given-over-profile", "veh-p", "fleet-b")}}
	if r := n.do("POST", "/v1/events", k, body); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	// a service's event: the trip of a vehicle of fleet-a
	if r := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-p", "driver_id": "drv-p"}); r.Status != 201 {
		t.Fatalf("trip: %d %s", r.Status, r.Body)
	}
	// once the probe has every event, the pipeline has judged them all
	seen := map[string]bool{}
	all := func() bool {
		for _, k := range []string{"given-b", "given-a", "no-fleet", "profile-a", "profile-b", "given-over-profile", "trip_started"} {
			if !seen[k] {
				return false
			}
		}
		return true
	}
	for !all() {
		for _, m := range messagesOf(t, readEvents(t, pc, 1)) {
			if m["event_type"] == "trip_started" {
				seen["trip_started"] = true
			} else {
				seen[m["event_id"].(string)] = true
			}
		}
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if last := st["lag"].(map[string]any)["last_offset"]; last != 3.0 {
		t.Errorf("the fleet's stream holds %v messages, want 3", last)
	}
	got := map[string]bool{}
	for _, m := range messagesOf(t, readEvents(t, c, 3)) {
		if m["source"].(map[string]any)["fleet_id"] != "fleet-a" {
			t.Errorf("message of another fleet: %v", m)
		}
		if m["event_type"] == "trip_started" {
			got["trip_started"] = true
		} else {
			got[m["event_id"].(string)] = true
		}
	}
	if !got["given-a"] || !got["profile-a"] || !got["trip_started"] {
		t.Errorf("the fleet's stream got %v, want given-a, profile-a and trip_started", got)
	}
}

// telemetryMsg is an engine_diagnostics message of veh-s.
func telemetryMsg(seq int, rpm, coolant float64) map[string]any {
	return map[string]any{"timestamp": stamp(-time.Duration(10-seq) * time.Second), "vehicle_id": "veh-s", "data_type": "engine_diagnostics", "sequence": seq,
		"data":               map[string]any{"engine": map[string]any{"rpm": rpm, "coolant_temp": coolant, "load_percentage": 40}},
		"quality_indicators": map[string]any{"signal_strength": 87.654, "data_completeness": 100, "sensor_health": "good"}}
}

// TestTelemetryStreamSettings: include_metadata, precision, calculated
// metrics and alert integration, each on a stream of its own, over a
// real websocket.
func TestTelemetryStreamSettings(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	engine := func(sc map[string]any, filters map[string]any) map[string]any {
		b := map[string]any{"vehicles": []string{"veh-s"}, "data_types": []string{"engine_diagnostics"}, "stream_config": sc}
		if filters != nil {
			b["filters"] = filters
		}
		return b
	}
	ids := map[string]string{
		"no metadata": startKind(t, n, k, "telemetry", engine(map[string]any{"include_metadata": false}, nil)),
		"standard":    startKind(t, n, k, "telemetry", engine(map[string]any{"quality_settings": map[string]any{"precision": "standard"}}, nil)),
		"high":        startKind(t, n, k, "telemetry", engine(map[string]any{"quality_settings": map[string]any{"precision": "high"}}, nil)),
		"alerts": startKind(t, n, k, "telemetry", engine(map[string]any{"alert_integration": map[string]any{"real_time_alerts": true}},
			map[string]any{"alert_thresholds": map[string]any{"engine_rpm": 4000}})),
		"monitoring": startKind(t, n, k, "telemetry", engine(map[string]any{"alert_integration": map[string]any{"threshold_monitoring": true}},
			map[string]any{"alert_thresholds": map[string]any{"coolant_temp": 105}})),
		"throttled": startKind(t, n, k, "telemetry", engine(map[string]any{"frequency": "low", "alert_integration": map[string]any{"real_time_alerts": true}},
			map[string]any{"alert_thresholds": map[string]any{"engine_rpm": 2000}})),
		"calculated": startKind(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}, "data_types": []string{"vehicle_dynamics"},
			"stream_config": map[string]any{"quality_settings": map[string]any{"calculated_metrics": true}}}),
	}
	conns := map[string]*websocket.Conn{}
	for name, id := range ids {
		conns[name] = n.dial(t, k, "stream_id="+id)
		expectSubscribed(t, conns[name])
	}
	msgs := []any{telemetryMsg(1, 2150.37, 92.456), telemetryMsg(2, 4800.4, 108.9),
		map[string]any{"timestamp": stamp(-time.Second), "vehicle_id": "veh-s", "data_type": "vehicle_dynamics", "sequence": 3,
			"data": map[string]any{"motion": map[string]any{"speed_mph": 60}}}}
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": msgs}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	read := func(name string, count int) []map[string]any { return messagesOf(t, readEvents(t, conns[name], count)) }
	engineOf := func(m map[string]any) map[string]any { return m["data"].(map[string]any)["engine"].(map[string]any) }

	for _, m := range read("no metadata", 2) {
		_, seq := m["sequence"]
		_, quality := m["quality_indicators"]
		if seq || quality || m["vehicle_id"] != "veh-s" || m["timestamp"] == nil || m["data_type"] != "engine_diagnostics" {
			t.Errorf("include_metadata false: %v", m)
		}
	}
	std := read("standard", 2)
	if e := engineOf(std[0]); e["rpm"] != 2150.0 || e["coolant_temp"] != 92.46 || std[0]["quality_indicators"].(map[string]any)["signal_strength"] != 87.65 {
		t.Errorf("precision standard: %v", std[0])
	}
	high := read("high", 2)
	if e := engineOf(high[0]); e["rpm"] != 2150.37 || e["coolant_temp"] != 92.456 || high[0]["sequence"] != 1.0 {
		t.Errorf("precision high: %v", high[0])
	}

	// the filter keeps the message over 4000 rpm, its alert follows it
	al := read("alerts", 2)
	if al[0]["sequence"] != 2.0 || al[1]["event_type"] != "telemetry_threshold_exceeded" || al[1]["category"] != "maintenance_events" {
		t.Fatalf("real_time_alerts: %v", al)
	}
	if d := al[1]["event_data"].(map[string]any); d["threshold"] != "engine_rpm" || d["value"] != 4800.4 || d["limit"] != 4000.0 || d["field"] != "data.engine.rpm" {
		t.Errorf("alert event_data %v", d)
	}
	// monitored, the threshold filters nothing: both messages, then the alert
	mon := read("monitoring", 3)
	if mon[0]["sequence"] != 1.0 || mon[1]["sequence"] != 2.0 || mon[2]["event_data"].(map[string]any)["threshold"] != "coolant_temp" ||
		mon[2]["source"].(map[string]any)["vehicle_id"] != "veh-s" {
		t.Errorf("threshold_monitoring: %v", mon)
	}

	// frequency low keeps the first message of the minute; alerts are not held back
	th := read("throttled", 3)
	if th[0]["sequence"] != 1.0 || th[1]["event_type"] != "telemetry_threshold_exceeded" || th[2]["event_type"] != "telemetry_threshold_exceeded" ||
		th[1]["event_data"].(map[string]any)["value"] != 2150.37 || th[2]["event_data"].(map[string]any)["value"] != 4800.4 {
		t.Errorf("alerts of a throttled stream: %v", th)
	}
	st := n.do("GET", "/api/v1/streaming/telemetry/status/"+ids["throttled"], k, nil).json(t)
	if c := st["counters"].(map[string]any); c["throttled"] != 1.0 {
		t.Errorf("throttled stream's counters %v", c)
	}

	calc := read("calculated", 1)[0]
	cm, _ := calc["calculated_metrics"].(map[string]any)
	if v, _ := cm["speed_kmh"].(float64); math.Abs(v-96.56064) > 1e-9 {
		t.Errorf("calculated_metrics: %v", calc)
	}
}

// TestTelemetryBufferSize: a subscriber more than buffer_size messages
// behind is told so; one of a stream without it is told only past the
// server's 1,000.
func TestTelemetryBufferSize(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	small := startKind(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}, "stream_config": map[string]any{"buffer_size": 5}})
	plain := startKind(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}})
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = telemetryMsg(i+1, 2000, 90)
	}
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": msgs}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{small, plain} {
		waitFor(t, "20 messages in "+id, func() bool {
			return n.do("GET", "/api/v1/streaming/telemetry/status/"+id, k, nil).json(t)["lag"].(map[string]any)["last_offset"] == 20.0
		})
	}
	for _, c := range []struct {
		id  string
		lag bool
	}{{small, true}, {plain, false}} {
		conn := n.dial(t, k, "stream_id="+c.id+"&last_offset=0")
		expectSubscribed(t, conn)
		var notices []map[string]any
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		for got := 0; got < 20; {
			_, data, err := conn.ReadMessage()
			if err != nil {
				t.Fatalf("after %d messages: %v", got, err)
			}
			var f map[string]any
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			if f["type"] != nil {
				notices = append(notices, f)
				continue
			}
			got++
		}
		switch {
		case c.lag && (len(notices) != 1 || notices[0]["type"] != "lag" || notices[0]["behind"] != 20.0):
			t.Errorf("buffer_size 5, 20 behind: notices %v, want one lag notice of 20", notices)
		case !c.lag && len(notices) != 0:
			t.Errorf("no buffer_size, 20 behind: notices %v, want none", notices)
		}
	}
}

// TestStreamSettingsRefused: what the hub does not do, or what cannot
// work, is refused by name, at start and at configure.
func TestStreamSettingsRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	messages := map[string]string{}
	for _, c := range []struct {
		kind  string
		body  map[string]any
		field string
		rng   bool // a range: one message for the field whatever else the body holds
	}{
		{"telemetry", map[string]any{"stream_config": map[string]any{"quality_settings": map[string]any{"include_raw_data": true}}}, "stream_config.quality_settings.include_raw_data", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"alert_integration": map[string]any{"predictive_warnings": true}},
			"filters": map[string]any{"max_fuel_level": 20}}, "stream_config.alert_integration.predictive_warnings", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"alert_integration": map[string]any{"real_time_alerts": true}}}, "stream_config.alert_integration.real_time_alerts", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"alert_integration": map[string]any{"threshold_monitoring": true}}}, "stream_config.alert_integration.threshold_monitoring", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"buffer_size": 100_001}}, "stream_config.buffer_size", true},
		{"telemetry", map[string]any{"stream_config": map[string]any{"buffer_size": -1}}, "stream_config.buffer_size", true},
		{"telemetry", map[string]any{"stream_config": map[string]any{"buffer_size": 50}, "delivery_method": "webhook", "webhook_url": "https://hooks.example.com/t"}, "stream_config.buffer_size", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"quality_settings": map[string]any{"precision": "extreme"}}}, "stream_config.quality_settings.precision", false},
		{"events", map[string]any{"fleet_id": "   "}, "fleet_id", true},
		{"events", map[string]any{"fleet_id": ""}, "fleet_id", true},
		{"events", map[string]any{"fleet_id": strings.Repeat("f", 201)}, "fleet_id", true},
		// ranges hold whether or not batching is on, 0 included
		{"events", map[string]any{"stream_config": map[string]any{"batch_size": -5}}, "stream_config.batch_size", true},
		{"events", map[string]any{"stream_config": map[string]any{"batch_size": 99999}}, "stream_config.batch_size", true},
		{"events", map[string]any{"stream_config": map[string]any{"batch_events": true, "batch_size": 0}}, "stream_config.batch_size", true},
		{"events", map[string]any{"stream_config": map[string]any{"batch_events": true, "batch_size": -5}}, "stream_config.batch_size", true},
		{"events", map[string]any{"stream_config": map[string]any{"max_wait_time": -7}}, "stream_config.max_wait_time", true},
		{"events", map[string]any{"stream_config": map[string]any{"batch_events": true, "max_wait_time": 0}}, "stream_config.max_wait_time", true},
		{"telemetry", map[string]any{"stream_config": map[string]any{"buffer_size": 0}}, "stream_config.buffer_size", true},
		{"telemetry", map[string]any{"stream_config": map[string]any{"batch_processing": map[string]any{"batch_size": 0}}}, "stream_config.batch_processing.batch_size", true},
		{"telemetry", map[string]any{"stream_config": map[string]any{"batch_processing": map[string]any{"enabled": true, "max_wait_time": 60_001}}}, "stream_config.batch_processing.max_wait_time", true},
		// settings without an effect there
		{"events", map[string]any{"stream_config": map[string]any{"delivery_method": "webhook", "compression": true}, "webhook_url": "https://hooks.example.com/e"}, "stream_config.compression", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"compression": true}, "delivery_method": "webhook", "webhook_url": "https://hooks.example.com/t"}, "stream_config.compression", false},
		{"events", map[string]any{"stream_config": map[string]any{"delivery_method": "webhook", "reliability": "at_most_once"}, "webhook_url": "https://hooks.example.com/e"}, "stream_config.reliability", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"custom_interval": 60}}, "stream_config.custom_interval", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"frequency": "high", "custom_interval": 60}}, "stream_config.custom_interval", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"frequency": "custom", "custom_interval": 0}}, "stream_config.custom_interval", false},
		{"telemetry", map[string]any{"stream_config": map[string]any{"frequency": "custom"}}, "stream_config.custom_interval", false},
		// a webhook_url beside websocket delivery would be kept and never used
		{"telemetry", map[string]any{"delivery_method": "websocket", "webhook_url": "https://hooks.example.com/t"}, "webhook_url", false},
		{"events", map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}, "webhook_url": "https://hooks.example.com/e"}, "webhook_url", false},
	} {
		r := n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, c.body)
		want := "validation_failed"
		if c.field == "stream_config.quality_settings.precision" { // a value outside the set
			want = "invalid_request"
		}
		if r.Status != 400 || r.errCode(t) != want {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		d := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if d[c.field] == nil {
			t.Errorf("%v: details %v lack %s", c.body, d, c.field)
			continue
		}
		// one rule, one message
		msg := d[c.field].(string)
		if prev, ok := messages[c.field]; ok && c.rng && prev != msg {
			t.Errorf("%v: %s %q, elsewhere %q", c.body, c.field, msg, prev)
		}
		if c.rng {
			messages[c.field] = msg
		}
		if strings.Contains(msg, "between 0") {
			t.Errorf("%v: %s %q names 0 as allowed", c.body, c.field, msg)
		}
	}
	if l := n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any); len(l) != 0 {
		t.Errorf("refused starts made %d streams", len(l))
	}
	// a custom interval with frequency custom, and compression on websocket, are taken
	startKind(t, n, k, "telemetry", map[string]any{"stream_config": map[string]any{"frequency": "custom", "custom_interval": 30, "compression": true}})
	ev := startKind(t, n, k, "events", map[string]any{"stream_config": map[string]any{"batch_events": true, "batch_size": 5}})
	// configure checks the same rules, and keeps the stream as it was
	for _, body := range []map[string]any{
		{"stream_config": map[string]any{"batch_size": 0}},
		{"stream_config": map[string]any{"max_wait_time": -7}},
		{"fleet_id": ""},
	} {
		r := n.do("PUT", "/api/v1/streaming/events/configure/"+ev, k, body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("configure %v: %d %s", body, r.Status, r.Body)
		}
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+ev, k, nil).json(t)
	if sc := st["configuration"].(map[string]any)["stream_config"].(map[string]any); sc["batch_size"] != 5.0 || sc["max_wait_time"] != nil {
		t.Errorf("configuration after refused configures %v", sc)
	}
	if _, ok := st["configuration"].(map[string]any)["fleet_id"]; ok {
		t.Errorf("configuration after refused configures %v", st["configuration"])
	}
	id := startKind(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}})
	r := n.do("PUT", "/api/v1/streaming/telemetry/configure/"+id, k, map[string]any{"stream_config": map[string]any{"alert_integration": map[string]any{"predictive_warnings": true}}})
	if r.Status != 400 || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["stream_config.alert_integration.predictive_warnings"] == nil {
		t.Errorf("configure with predictive_warnings: %d %s", r.Status, r.Body)
	}
	r = n.do("PUT", "/api/v1/streaming/telemetry/configure/"+id, k, map[string]any{"stream_config": map[string]any{"include_metadata": false, "buffer_size": 10}})
	if r.Status != 200 {
		t.Errorf("configure include_metadata and buffer_size: %d %s", r.Status, r.Body)
	}
	sc := r.json(t)["configuration"].(map[string]any)["stream_config"].(map[string]any)
	if fmt.Sprint(sc["include_metadata"], sc["buffer_size"]) != "false 10" {
		t.Errorf("configuration %v", sc)
	}
}

// TestFleetScopedGeofenceEvents: geofence events, which the hub raises
// itself from location points, carry the vehicle's fleet and reach the
// fleet's stream.
func TestFleetScopedGeofenceEvents(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	if r := n.do("PUT", "/v1/vehicles/veh-gf", k, map[string]any{"fleet_id": "fleet-a"}); r.Status != 200 && r.Status != 201 {
		t.Fatalf("vehicle: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/geofences", k, map[string]any{"name": "Depot", "type": "circle", "center": map[string]any{"latitude": 40.009, "longitude": -83.0}, "radius_m": 300}); r.Status != 201 {
		t.Fatalf("geofence: %d %s", r.Status, r.Body)
	}
	id := startKind(t, n, k, "events", map[string]any{"fleet_id": "fleet-a", "event_filters": map[string]any{"categories": []string{"geofence_events"}}})
	c := n.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	t0 := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Second)
	trip := n.startTrip(k, "veh-gf", t0)
	n.batch(k, trip, track(t0, 40, -83, constant(36, 200))) // through the circle
	for _, m := range messagesOf(t, readEvents(t, c, 2)) {
		if src := m["source"].(map[string]any); src["fleet_id"] != "fleet-a" || src["vehicle_id"] != "veh-gf" {
			t.Errorf("geofence event %v", m)
		}
	}
}

// TestCustomIntervalRefusals: a custom_interval sent out of its range is
// refused for its value, not as missing; one left out with frequency
// custom is refused as missing; either at start and at configure.
func TestCustomIntervalRefusals(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-interval", "test", []string{"all"}, 100000)
	refusal := func(r resp) string {
		t.Helper()
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Fatalf("%d %s; want 400 validation_failed", r.Status, r.Body)
		}
		msg, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)["stream_config.custom_interval"].(string)
		return msg
	}
	for _, v := range []any{0, -1, 86400.5, 1e9} {
		body := map[string]any{"stream_config": map[string]any{"frequency": "custom", "custom_interval": v}}
		if msg := refusal(n.do("POST", "/api/v1/streaming/telemetry/start", k, body)); strings.Contains(msg, "required") || !strings.Contains(msg, "86400") {
			t.Errorf("custom_interval %v: %q; want its range, not a missing field", v, msg)
		}
	}
	if msg := refusal(n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"stream_config": map[string]any{"frequency": "custom"}})); !strings.Contains(msg, "required") {
		t.Errorf("custom_interval left out: %q; want it named as required", msg)
	}
	id := startKind(t, n, k, "telemetry", map[string]any{"stream_config": map[string]any{"frequency": "custom", "custom_interval": 30}})
	if msg := refusal(n.do("PUT", "/api/v1/streaming/telemetry/configure/"+id, k, map[string]any{"stream_config": map[string]any{"custom_interval": 90000}})); strings.Contains(msg, "required") {
		t.Errorf("configure custom_interval 90000: %q; want its range, not a missing field", msg)
	}
}
