package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestListEnumsAreWhatTheServiceTakes: the lists whose values come from a
// fixed set (a matrix's avoid, the optimizer's goals, capabilities and
// special handling, a stream's data types, event filters and enrichment,
// an alert's audiences and automated actions, a contact's roles, a
// device's data types, a key's permissions, a token's scopes) carry that
// set as their items' enum in the OpenAPI document, and the service takes
// every value of it and refuses one outside it with one detail, naming
// the item and listing exactly the document's set.
func TestListEnumsAreWhatTheServiceTakes(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	cfg.Addresses = addressFixture(t) // location_names needs address data
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 1000000)
	manager, _ := n.keyWith("org-a", "test", "enterprise", 1000000, "all")
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enum := func(schema, field string) []string {
		t.Helper()
		s, _ := schemas[schema].(map[string]any)
		props, _ := s["properties"].(map[string]any)
		p, _ := props[field].(map[string]any)
		items, _ := p["items"].(map[string]any)
		list, _ := items["enum"].([]any)
		var out []string
		for _, v := range list {
			out = append(out, v.(string))
		}
		if len(out) == 0 {
			t.Errorf("%s.%s: no enum on its items: %v", schema, field, p)
		}
		return out
	}
	matrix := func(avoid string) map[string]any {
		return map[string]any{"sources": []any{map[string]any{"lat": 40.0, "lon": -83.0}}, "targets": []any{map[string]any{"lat": 40.002, "lon": -83.0}},
			"costing": "auto", "avoid": []string{avoid}}
	}
	plan := func(goal, need, has string) map[string]any {
		return map[string]any{"fleet_id": "f", "real_time_traffic": false, "optimization_goals": []string{goal},
			"vehicles": []any{map[string]any{"vehicle_id": "v", "vehicle_type": "truck", "start_location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "restrictions": []string{has}}},
			"destinations": []any{map[string]any{"destination_id": "d", "location": map[string]any{"latitude": 40.002, "longitude": -83.0},
				"delivery_requirements": map[string]any{"special_handling": []string{need}}}},
			"options": map[string]any{"time_limit_seconds": 0.2}}
	}
	events := func(filters, rules map[string]any) map[string]any {
		b := map[string]any{"event_filters": filters}
		if rules != nil {
			b["processing_rules"] = rules
		}
		return b
	}
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	alert := func(include, exclude, actions []string) map[string]any {
		return map[string]any{"alert_type": "road_hazard", "severity": "high", "title": "Flooding", "message": "Avoid the river road",
			"affected_area":   map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5},
			"target_audience": map[string]any{"include": include, "exclude": exclude}, "automated_actions": actions,
			"delivery_channels": []any{map[string]any{"channel": "in_app_alert"}}, "expiration": exp}
	}
	const opt = "/api/v1/fleet/optimization/routes"
	cases := []struct {
		schema, field, method, path string
		ok                          int
		// refused is the path of the value outside the set, whose
		// detail lists the set; the list itself is not named again
		refused string
		body    func(string) map[string]any
	}{
		{"routing.MatrixBody", "avoid", "POST", "/v1/routing/sources_to_targets", 200, "avoid[0]", matrix},
		{"optimization.Request", "optimization_goals", "POST", opt, 200, "optimization_goals[0]", func(v string) map[string]any { return plan(v, "pallet", "pallet") }},
		{"optimization.Requirements", "special_handling", "POST", opt, 200, "destinations[0].delivery_requirements.special_handling[0]", func(v string) map[string]any { return plan("minimize_time", v, v) }},
		{"optimization.Vehicle", "restrictions", "POST", opt, 200, "vehicles[0].restrictions[0]", func(v string) map[string]any { return plan("minimize_time", "pallet", v) }},
		{"streams.TelemetryConfig", "data_types", "POST", "/api/v1/streaming/telemetry/start", 201, "data_types[0]", func(v string) map[string]any {
			return map[string]any{"data_types": []string{v}}
		}},
		{"streams.EventFilters", "categories", "POST", "/api/v1/streaming/events/start", 201, "event_filters.categories[0]", func(v string) map[string]any {
			return events(map[string]any{"categories": []string{v}}, nil)
		}},
		{"streams.EventFilters", "severity_levels", "POST", "/api/v1/streaming/events/start", 201, "event_filters.severity_levels[0]", func(v string) map[string]any {
			return events(map[string]any{"severity_levels": []string{v}}, nil)
		}},
		{"streams.EventFilters", "priority_levels", "POST", "/api/v1/streaming/events/start", 201, "event_filters.priority_levels[0]", func(v string) map[string]any {
			return events(map[string]any{"priority_levels": []string{v}}, nil)
		}},
		{"streams.ProcessingRules", "enrichment", "POST", "/api/v1/streaming/events/start", 201, "processing_rules.enrichment[0]", func(v string) map[string]any {
			return events(nil, map[string]any{"enrichment": []string{v}})
		}},
		{"emergency.Audience", "include", "POST", "/v1/emergency/alerts", 201, "target_audience.include[1]", func(v string) map[string]any {
			return alert([]string{"active_drivers", v}, nil, nil)
		}},
		{"emergency.Audience", "exclude", "POST", "/v1/emergency/alerts", 201, "target_audience.exclude[0]", func(v string) map[string]any {
			return alert([]string{"active_drivers", "dispatchers"}, []string{v}, nil)
		}},
		{"emergency.AlertBody", "automated_actions", "POST", "/v1/emergency/alerts", 201, "automated_actions[0]", func(v string) map[string]any {
			return alert([]string{"active_drivers"}, nil, []string{v})
		}},
		{"contacts.Body", "roles", "POST", "/v1/contacts", 201, "roles[0]", func(v string) map[string]any {
			body := map[string]any{"name": "Contact " + v, "roles": []string{v}, "channels": map[string]any{"sms": "+15555550100", "email": "ann@example.com"}}
			if v == "emergency_contact" {
				// whose emergency contact: required with this role
				body["links"] = map[string]any{"emergency_contact_for": []string{"d-1"}}
			}
			return body
		}},
		{"devices.TelemetrySettings", "data_types", "PUT", "/v1/devices/dev-1/settings", 200, "telemetry_settings.data_types[0]", func(v string) map[string]any {
			return map[string]any{"telemetry_settings": map[string]any{"data_types": []string{v}}}
		}},
		{"keys.CreateBody", "permissions", "POST", "/v1/api-keys", 201, "permissions[0]", func(v string) map[string]any {
			return map[string]any{"name": "enum", "permissions": []string{v}}
		}},
		{"tokens.MintBody", "scopes", "POST", "/v1/tokens", 201, "scopes[0]", func(v string) map[string]any {
			return map[string]any{"scopes": []string{v}}
		}},
	}
	for _, c := range cases {
		key := k
		if c.path == "/v1/api-keys" {
			key = manager
		}
		values := enum(c.schema, c.field)
		for _, v := range values {
			if r := n.do(c.method, c.path, key, c.body(v)); r.Status != c.ok {
				t.Errorf("%s %q, in the document's enum: %d %s", c.field, v, r.Status, r.Body)
			}
		}
		r := n.do(c.method, c.path, key, c.body("not_a_value"))
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &e)
		list := c.refused[:strings.LastIndex(c.refused, "[")]
		if _, twice := e.Error.Details[list]; r.Status != 400 || e.Error.Code != "invalid_request" || e.Error.Details[c.refused] == "" || twice {
			t.Errorf("%s outside the enum: %d %s, want it refused once, at %s", c.field, r.Status, r.Body, c.refused)
			continue
		}
		msg := e.Error.Details[c.refused]
		for _, v := range values {
			if !containsWord(msg, v) {
				t.Errorf("%s: the refusal %q does not list %q of the document", c.field, msg, v)
			}
		}
		if got := refusedSet(msg); !slices.Equal(got, values) {
			t.Errorf("%s: the refusal lists %q, the document %q", c.field, got, values)
		}
	}
}

// refusedSet is the values a refusal lists after "must be one of", up to
// the words in parentheses that may follow them.
func refusedSet(msg string) []string {
	_, list, _ := strings.Cut(msg, "must be one of ")
	list, _, _ = strings.Cut(list, " (")
	return strings.Split(list, ", ")
}

func containsWord(s, w string) bool {
	return slices.ContainsFunc(splitList(s), func(x string) bool { return x == w })
}

// splitList reads the values a refusal lists after "must be one of".
func splitList(s string) []string {
	var out []string
	var cur []rune
	for _, r := range s + " " {
		if r == ',' || r == ' ' {
			if len(cur) > 0 {
				out = append(out, string(cur))
			}
			cur = cur[:0]
			continue
		}
		cur = append(cur, r)
	}
	return out
}

// TestFieldEnumsAreWhatTheServiceTakes: single-string request fields whose
// values come from a fixed set (an alert's alert_type and severity, a
// stream's custom condition operator) carry that set as their enum in
// the OpenAPI document, and the service takes every value of it and
// refuses one outside it with invalid_request naming the field, listing
// exactly the document's set.
func TestFieldEnumsAreWhatTheServiceTakes(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 1000000)
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enum := func(schema, field string) []string {
		t.Helper()
		s, _ := schemas[schema].(map[string]any)
		props, _ := s["properties"].(map[string]any)
		p, _ := props[field].(map[string]any)
		list, _ := p["enum"].([]any)
		var out []string
		for _, v := range list {
			out = append(out, v.(string))
		}
		if len(out) == 0 {
			t.Errorf("%s.%s: no enum: %v", schema, field, p)
		}
		return out
	}
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	alert := func(alertType, severity string) map[string]any {
		return map[string]any{"alert_type": alertType, "severity": severity, "title": "Flooding", "message": "Avoid the river road",
			"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5},
			"target_audience":   map[string]any{"include": []string{"active_drivers"}},
			"delivery_channels": []any{map[string]any{"channel": "in_app_alert"}}, "expiration": exp}
	}
	condition := func(op string) map[string]any {
		// a field and value each operator applies to
		c := map[string]any{"field": "event_data.deceleration_g", "operator": op, "value": 0.5}
		switch op {
		case "in":
			c["value"] = []any{0.5, 0.6}
		case "contains":
			c["field"], c["value"] = "event_type", "brak"
		}
		return map[string]any{"event_filters": map[string]any{"custom_conditions": []any{c}}}
	}
	cases := []struct {
		schema, field, path string
		ok                  int
		refused             string // the path the value outside the set is refused at
		body                func(string) map[string]any
	}{
		{"emergency.AlertBody", "alert_type", "/v1/emergency/alerts", 201, "alert_type", func(v string) map[string]any { return alert(v, "high") }},
		{"emergency.AlertBody", "severity", "/v1/emergency/alerts", 201, "severity", func(v string) map[string]any { return alert("road_hazard", v) }},
		{"expr.Condition", "operator", "/api/v1/streaming/events/start", 201, "event_filters.custom_conditions[0].operator", condition},
	}
	for _, c := range cases {
		values := enum(c.schema, c.field)
		for _, v := range values {
			if r := n.do("POST", c.path, k, c.body(v)); r.Status != c.ok {
				t.Errorf("%s %q, in the document's enum: %d %s", c.field, v, r.Status, r.Body)
			}
		}
		r := n.do("POST", c.path, k, c.body("not_a_value"))
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &e)
		msg := e.Error.Details[c.refused]
		if r.Status != 400 || e.Error.Code != "invalid_request" || msg == "" {
			t.Errorf("%s outside the enum: %d %s", c.field, r.Status, r.Body)
			continue
		}
		if got := refusedSet(msg); !slices.Equal(got, values) {
			t.Errorf("%s: the refusal lists %q, the document %q", c.field, got, values)
		}
	}
}
