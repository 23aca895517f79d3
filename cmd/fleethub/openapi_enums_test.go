package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestListEnumsAreWhatTheServiceTakes: the lists whose values come from a
// fixed set (a matrix's avoid, the optimizer's goals, capabilities and
// special handling) carry that set as their items' enum in the OpenAPI
// document, and the service takes every value of it and refuses one
// outside it, naming the item.
func TestListEnumsAreWhatTheServiceTakes(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 1000000)
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	enum := func(schema, field string) []string {
		t.Helper()
		p, _ := schemas[schema].(map[string]any)["properties"].(map[string]any)[field].(map[string]any)
		items, _ := p["items"].(map[string]any)
		var out []string
		for _, v := range items["enum"].([]any) {
			out = append(out, v.(string))
		}
		if len(out) == 0 {
			t.Fatalf("%s.%s: no enum on its items: %v", schema, field, p)
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
	const opt = "/api/v1/fleet/optimization/routes"
	cases := []struct {
		schema, field, path, refused string
		body                         func(string) map[string]any
	}{
		{"routing.MatrixBody", "avoid", "/v1/routing/sources_to_targets", "avoid[0]", matrix},
		{"optimization.Request", "optimization_goals", opt, "optimization_goals[0]", func(v string) map[string]any { return plan(v, "pallet", "pallet") }},
		{"optimization.Requirements", "special_handling", opt, "destinations[0].delivery_requirements.special_handling[0]", func(v string) map[string]any { return plan("minimize_time", v, v) }},
		{"optimization.Vehicle", "restrictions", opt, "vehicles[0].restrictions[0]", func(v string) map[string]any { return plan("minimize_time", "pallet", v) }},
	}
	for _, c := range cases {
		values := enum(c.schema, c.field)
		for _, v := range values {
			if r := n.do("POST", c.path, k, c.body(v)); r.Status != 200 {
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
		if r.Status != 400 || e.Error.Code != "invalid_request" || e.Error.Details[c.refused] == "" {
			t.Errorf("%s outside the enum: %d %s", c.field, r.Status, r.Body)
			continue
		}
		for _, v := range values {
			if !containsWord(e.Error.Details[c.refused], v) {
				t.Errorf("%s: the refusal %q does not list %q of the document", c.field, e.Error.Details[c.refused], v)
			}
		}
	}
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
