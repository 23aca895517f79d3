package main

import "testing"

// A custom condition sent without value is refused naming it, at start
// and at configure, never read as value null (a filter on the field being
// absent, which a field every message carries never matches); an explicit
// null is that filter, and is taken.
func TestCustomConditionWithoutValueRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, c := range []struct {
		kind  string
		body  map[string]any
		field string
	}{
		{"events", map[string]any{"event_filters": map[string]any{"custom_conditions": []any{map[string]any{"field": "severity", "operator": "="}}}}, "event_filters.custom_conditions[0].value"},
		{"events", map[string]any{"event_filters": map[string]any{"custom_conditions": []any{
			map[string]any{"field": "severity", "operator": "=", "value": "high"}, map[string]any{"field": "event_data.x", "operator": "!="}}}}, "event_filters.custom_conditions[1].value"},
		{"telemetry", map[string]any{"filters": map[string]any{"custom_conditions": []any{map[string]any{"field": "data.engine.rpm", "operator": "="}}}}, "filters.custom_conditions[0].value"},
	} {
		r := n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, c.body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%v: details %v lack %s", c.body, d, c.field)
		}
	}
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"custom_conditions": []any{
		map[string]any{"field": "location.road_type", "operator": "=", "value": nil}}}})
	if r.Status != 201 {
		t.Fatalf("explicit null: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	// configure keeps the stored condition (value null) through another change
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"processing_rules": map[string]any{"deduplication": true}}); r.Status != 200 {
		t.Fatalf("configure another field: %d %s", r.Status, r.Body)
	}
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"event_filters": map[string]any{"custom_conditions": []any{
		map[string]any{"field": "severity", "operator": "!="}}}})
	if r.Status != 400 || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["event_filters.custom_conditions[0].value"] == nil {
		t.Fatalf("configure without value: %d %s", r.Status, r.Body)
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	cs := st["configuration"].(map[string]any)["event_filters"].(map[string]any)["custom_conditions"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["field"] != "location.road_type" {
		t.Errorf("refused configure changed the conditions: %v", cs)
	}
}

// TestCustomConditionInNothingRefused: an in condition over an empty list
// matches no message, so a stream started (or configured) with one would
// receive nothing: it is refused naming its value, at start and at
// configure, for both kinds; a list with a value is taken.
func TestCustomConditionInNothingRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, c := range []struct {
		kind, filters, first string
	}{{"events", "event_filters", "severity"}, {"telemetry", "filters", "data_type"}} {
		body := func(v []any) map[string]any {
			first := map[string]any{"field": c.first, "operator": "!=", "value": nil}
			return map[string]any{c.filters: map[string]any{"custom_conditions": []any{first, map[string]any{"field": "vehicle_id", "operator": "in", "value": v}}}}
		}
		if c.kind == "events" {
			body = func(v []any) map[string]any {
				first := map[string]any{"field": c.first, "operator": "!=", "value": nil}
				return map[string]any{c.filters: map[string]any{"custom_conditions": []any{first, map[string]any{"field": "source.vehicle_id", "operator": "in", "value": v}}}}
			}
		}
		path := c.filters + ".custom_conditions[1].value"
		r := n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, body([]any{}))
		if r.Status != 400 || r.errCode(t) != "validation_failed" || r.json(t)["error"].(map[string]any)["details"].(map[string]any)[path] == nil {
			t.Errorf("%s start with in []: %d %s", c.kind, r.Status, r.Body)
		}
		r = n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, body([]any{"veh-1"}))
		if r.Status != 201 {
			t.Fatalf("%s start with in [veh-1]: %d %s", c.kind, r.Status, r.Body)
		}
		id := r.json(t)["stream_id"].(string)
		r = n.do("PUT", "/api/v1/streaming/"+c.kind+"/configure/"+id, k, body([]any{}))
		if r.Status != 400 || r.json(t)["error"].(map[string]any)["details"].(map[string]any)[path] == nil {
			t.Errorf("%s configure with in []: %d %s", c.kind, r.Status, r.Body)
		}
	}
}
