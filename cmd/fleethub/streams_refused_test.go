package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestStreamEncryptionStartAnswers: a stream of either kind started with
// encryption true is started, its start answer carrying the algorithm,
// the key id and the key (shown this once); with encryption false it is
// started without an encryption block.
func TestStreamEncryptionStartAnswers(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 100000)
	var keys []string
	for kind, body := range map[string]map[string]any{
		"telemetry": {"data_types": []string{"gps_enhanced"}, "delivery_method": "websocket", "stream_config": map[string]any{"encryption": true}},
		"events":    {"stream_config": map[string]any{"delivery_method": "websocket", "encryption": true}},
	} {
		_, k := startEncrypted(t, n, key, kind, body)
		keys = append(keys, k)
		body["stream_config"].(map[string]any)["encryption"] = false
		r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
		if r.Status != 201 || r.json(t)["encryption"] != nil {
			t.Errorf("%s stream with encryption false: %d %s", kind, r.Status, r.Body)
		}
	}
	if keys[0] == keys[1] {
		t.Error("two streams got one key")
	}
	r := n.do("GET", "/api/v1/streaming/streams", key, nil)
	if got := len(r.json(t)["streams"].([]any)); got != 4 {
		t.Errorf("%d streams listed, want 4", got)
	}
	for _, k := range keys {
		if strings.Contains(string(r.Body), k) {
			t.Errorf("the listing shows a key: %s", r.Body)
		}
	}
}

// TestStreamIDsCountCharacters: an id of 200 characters that trips and
// events take (two bytes each here) is taken too by a stream's filters,
// by the feed's filters and by the correlation listing; one of 201 is
// refused naming the field.
func TestStreamIDsCountCharacters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	long, past := strings.Repeat("é", 200), strings.Repeat("é", 201)
	start := func(id string) resp {
		return n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{id}},
			"stream_config": map[string]any{"delivery_method": "websocket"}})
	}
	if r := start(long); r.Status != 201 {
		t.Errorf("a stream filtering on a 200-character vehicle id: %d %s", r.Status, r.Body)
	}
	if r := start(past); r.Status != 400 || !strings.Contains(string(r.Body), `"event_filters.vehicle_ids[0]"`) {
		t.Errorf("a 201-character vehicle id: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/feed?vehicle_id="+url.QueryEscape(long), k, nil); r.Status != 200 {
		t.Errorf("the feed filtered on a 200-character vehicle id: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/feed?vehicle_id="+url.QueryEscape(past), k, nil); r.Status != 400 || !strings.Contains(string(r.Body), `"vehicle_id"`) {
		t.Errorf("the feed filtered on a 201-character vehicle id: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/events/correlations/str_missing?correlation_id="+url.QueryEscape(long), k, nil); r.Status == 400 {
		t.Errorf("a 200-character correlation id: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/events/correlations/str_missing?correlation_id="+url.QueryEscape(past), k, nil); r.Status != 400 || !strings.Contains(string(r.Body), `"correlation_id"`) {
		t.Errorf("a 201-character correlation id: %d %s", r.Status, r.Body)
	}
}

// TestStreamEmptyStringsRefused: a webhook_url or a time_filters.timezone
// sent as "" is refused naming it, as one of white space is, at start and
// at configure, and nothing is started or changed: "" is never read as
// left out (a websocket stream, UTC). null still removes at configure.
func TestStreamEmptyStringsRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	refused := func(r resp, field, what string) {
		t.Helper()
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%s: %d %s, want 400 validation_failed", what, r.Status, r.Body)
			return
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[field] == nil {
			t.Errorf("%s: details %v do not name %s", what, d, field)
		}
	}
	for _, c := range []struct {
		kind  string
		body  map[string]any
		field string
	}{
		{"events", map[string]any{"webhook_url": ""}, "webhook_url"},
		{"telemetry", map[string]any{"webhook_url": ""}, "webhook_url"},
		{"events", map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"business_hours_only": true, "timezone": ""}}}, "event_filters.time_filters.timezone"},
	} {
		refused(n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, c.body), c.field, c.kind+" start")
	}
	if got := len(n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any)); got != 0 {
		t.Fatalf("%d streams started by refused bodies", got)
	}
	id := startKind(t, n, k, "events", map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"business_hours_only": true, "timezone": "Europe/Berlin"}}})
	before := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)["configuration"]
	refused(n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"webhook_url": ""}), "webhook_url", "configure webhook_url")
	refused(n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"timezone": ""}}}),
		"event_filters.time_filters.timezone", "configure timezone")
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if fmt.Sprint(st["configuration"]) != fmt.Sprint(before) || st["delivery_method"] != "websocket" {
		t.Errorf("refused configures changed the stream: %v, was %v", st["configuration"], before)
	}
	// null removes the timezone (UTC again)
	r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"timezone": nil}}})
	if r.Status != 200 || strings.Contains(string(r.Body), "Europe/Berlin") {
		t.Errorf("configure timezone null: %d %s", r.Status, r.Body)
	}
}

// TestStreamBodyTypesAreInvalidRequest: a value of the wrong JSON type in
// a stream's start or configure body is 400 invalid_request naming it by
// its full path, as on every route (docs/api.md); an unknown field stays
// validation_failed.
func TestStreamBodyTypesAreInvalidRequest(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := startKind(t, n, k, "events", map[string]any{})
	for _, c := range []struct {
		method, path string
		body         map[string]any
		field, code  string
	}{
		{"POST", "/api/v1/streaming/events/start", map[string]any{"fleet_id": 5}, "fleet_id", "invalid_request"},
		{"POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"categories": []any{"safety_events", 5}}}, "event_filters.categories[1]", "invalid_request"},
		{"POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"time_filters": map[string]any{"business_hours_only": "yes"}}}, "event_filters.time_filters.business_hours_only", "invalid_request"},
		{"POST", "/api/v1/streaming/telemetry/start", map[string]any{"stream_config": map[string]any{"encryption": "true"}}, "stream_config.encryption", "invalid_request"},
		{"PUT", "/api/v1/streaming/events/configure/" + id, map[string]any{"stream_config": map[string]any{"batch_size": "5"}}, "stream_config.batch_size", "invalid_request"},
		{"PUT", "/api/v1/streaming/events/configure/" + id, map[string]any{"rotate_secret": "yes"}, "rotate_secret", "invalid_request"},
		{"POST", "/api/v1/streaming/events/start", map[string]any{"zz": 1}, "zz", "validation_failed"},
	} {
		r := n.do(c.method, c.path, k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%s %v: %d %s, want 400 %s", c.path, c.body, r.Status, r.Body, c.code)
			continue
		}
		if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%s %v: details %v do not name %s", c.path, c.body, d, c.field)
		}
	}
}

// TestConfigureDropsWhatNoLongerApplies: a configure that turns frequency
// away from custom, or ephemeral off, drops the stored custom_interval or
// idle_timeout_seconds with it (unless it names them), instead of
// refusing a setting the client did not send.
func TestConfigureDropsWhatNoLongerApplies(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	tel := startKind(t, n, k, "telemetry", map[string]any{"stream_config": map[string]any{"frequency": "custom", "custom_interval": 5}})
	r := n.do("PUT", "/api/v1/streaming/telemetry/configure/"+tel, k, map[string]any{"stream_config": map[string]any{"frequency": "high"}})
	if r.Status != 200 {
		t.Fatalf("frequency high after custom: %d %s", r.Status, r.Body)
	}
	if sc, _ := r.json(t)["configuration"].(map[string]any)["stream_config"].(map[string]any); sc["frequency"] != "high" || sc["custom_interval"] != nil {
		t.Errorf("frequency high after custom: stream_config %v, want frequency high without custom_interval", sc)
	}
	// naming it keeps it judged: custom_interval beside another frequency
	// is still refused
	r = n.do("PUT", "/api/v1/streaming/telemetry/configure/"+tel, k, map[string]any{"stream_config": map[string]any{"frequency": "low", "custom_interval": 5}})
	if r.Status != 400 || !strings.Contains(string(r.Body), "stream_config.custom_interval") {
		t.Errorf("frequency low with custom_interval: %d %s", r.Status, r.Body)
	}
	// a webhook stream turned to websocket delivery drops its webhook_url
	for kind, patch := range map[string]map[string]any{
		"events":    {"stream_config": map[string]any{"delivery_method": "websocket"}},
		"telemetry": {"delivery_method": "websocket"},
	} {
		id := startKind(t, n, k, kind, map[string]any{"webhook_url": "https://example.com/h"})
		r = n.do("PUT", "/api/v1/streaming/"+kind+"/configure/"+id, k, patch)
		if r.Status != 200 || r.json(t)["delivery_method"] != "websocket" || r.json(t)["webhook_url"] != nil {
			t.Errorf("%s stream to websocket: %d %s", kind, r.Status, r.Body)
		}
	}
	ev := startKind(t, n, k, "events", map[string]any{"ephemeral": true, "idle_timeout_seconds": 600})
	for _, off := range []any{false, nil} {
		r = n.do("PUT", "/api/v1/streaming/events/configure/"+ev, k, map[string]any{"ephemeral": off})
		if r.Status != 200 {
			t.Fatalf("ephemeral %v: %d %s", off, r.Status, r.Body)
		}
		if c := r.json(t)["configuration"].(map[string]any); c["idle_timeout_seconds"] != nil || c["ephemeral"] == true {
			t.Errorf("ephemeral %v: configuration %v, want neither ephemeral nor idle_timeout_seconds", off, c)
		}
	}
}

// TestWebhookStreamKeepsWebhookDelivery: a configure that removes a
// webhook stream's delivery method ("stream_config": null, or
// "delivery_method": null) leaves it a webhook stream, as a start body
// with a webhook_url and no delivery method is one, instead of turning it
// into a websocket stream that keeps showing its webhook_url.
func TestWebhookStreamKeepsWebhookDelivery(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for kind, patch := range map[string]map[string]any{
		"events":    {"stream_config": nil},
		"telemetry": {"delivery_method": nil},
	} {
		body := map[string]any{"webhook_url": "https://example.com/h", "stream_config": map[string]any{"include_metadata": false}}
		id := startKind(t, n, k, kind, body)
		r := n.do("PUT", "/api/v1/streaming/"+kind+"/configure/"+id, k, patch)
		if r.Status != 200 {
			t.Fatalf("%s %v: %d %s", kind, patch, r.Status, r.Body)
		}
		v := r.json(t)
		if v["delivery_method"] != "webhook" || v["webhook_url"] != "https://example.com/h" || v["websocket_url"] != nil || v["webhook"] == nil {
			t.Errorf("%s %v: delivery_method %v, webhook_url %v, websocket_url %v, webhook %v; want a webhook stream still",
				kind, patch, v["delivery_method"], v["webhook_url"], v["websocket_url"], v["webhook"])
		}
	}
}

// TestStreamBodyNamesEveryProblem: a start or configure body with
// several problems is refused naming each, in one 400, as every other
// route's body is, and starts or changes nothing; a single problem keeps
// its code (an unknown enum value alone is invalid_request).
func TestStreamBodyNamesEveryProblem(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	details := func(r resp) (string, map[string]any) {
		e, _ := r.json(t)["error"].(map[string]any)
		d, _ := e["details"].(map[string]any)
		code, _ := e["code"].(string)
		return code, d
	}
	for _, c := range []struct {
		kind string
		body map[string]any
		want []string
	}{
		{"events", map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"v1", " ", "v3", ""}},
			"stream_config":    map[string]any{"delivery_method": "websocket", "reliability": "sometimes", "batch_events": true, "batch_size": 5000, "max_wait_time": 0},
			"processing_rules": map[string]any{"enrichment": []string{"driver_info", "horoscope"}}, "idle_timeout_seconds": 60},
			[]string{"event_filters.vehicle_ids[1]", "event_filters.vehicle_ids[3]", "stream_config.reliability", "stream_config.batch_size",
				"stream_config.max_wait_time", "processing_rules.enrichment[1]", "idle_timeout_seconds"}},
		{"telemetry", map[string]any{"data_types": []string{"gps_enhanced"}, "delivery_method": "websocket",
			"stream_config": map[string]any{"frequency": "hourly", "buffer_size": -1, "quality_settings": map[string]any{"include_raw_data": true},
				"alert_integration": map[string]any{"predictive_warnings": true}}},
			[]string{"stream_config.frequency", "stream_config.buffer_size", "stream_config.quality_settings.include_raw_data",
				"stream_config.alert_integration.predictive_warnings"}},
	} {
		r := n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, c.body)
		code, d := details(r)
		if r.Status != 400 || code != "validation_failed" || len(d) != len(c.want) {
			t.Errorf("%s start: %d %s, want validation_failed naming %v", c.kind, r.Status, r.Body, c.want)
			continue
		}
		for _, f := range c.want {
			if m, _ := d[f].(string); m == "" {
				t.Errorf("%s start: %s not named in %s", c.kind, f, r.Body)
			}
		}
	}
	// an unknown enum value alone keeps its code
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": map[string]any{"delivery_method": "websocket", "reliability": "sometimes"}})
	if code, d := details(r); r.Status != 400 || code != "invalid_request" || len(d) != 1 {
		t.Errorf("an unknown reliability alone: %d %s", r.Status, r.Body)
	}
	// configure: both problems named, the stream unchanged
	s := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}}).json(t)
	id, _ := s["stream_id"].(string)
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"stream_config": map[string]any{"batch_events": true, "batch_size": 0, "max_wait_time": 70000},
		"idle_timeout_seconds": 60})
	if code, d := details(r); r.Status != 400 || code != "validation_failed" || len(d) != 3 {
		t.Errorf("configure with three problems: %d %s", r.Status, r.Body)
	}
	if got := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil); strings.Contains(string(got.Body), `"batch_events":true`) {
		t.Errorf("a refused configure changed the stream: %s", got.Body)
	}
	if n := len(n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any)); n != 1 {
		t.Errorf("%d streams after refused starts, want the one started", n)
	}
}
