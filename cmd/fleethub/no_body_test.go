package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRoutesWithoutABodyRefuseOne: a DELETE route declares no body, so a
// body sent to one is refused rather than ignored (a reason to cancel an
// alert would otherwise be taken and recorded nowhere): each field named
// as an unknown field, anything else but {} refused as a body, and the
// resource is left as it was; the same DELETE without a body, or with {},
// is carried out.
func TestRoutesWithoutABodyRefuseOne(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1_000_000)
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for p, item := range doc["paths"].(map[string]any) {
		op, ok := item.(map[string]any)["delete"].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := op["requestBody"]; ok {
			t.Errorf("DELETE %s declares a body", p)
			continue
		}
		checked++
		res := n.do("DELETE", fillPath(p), key, map[string]any{"reason": "storm passed"})
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(res.Body, &e); err != nil || res.Status != 400 || e.Error.Code != "validation_failed" || e.Error.Details["reason"] != "unknown field" {
			t.Errorf("DELETE %s with a body: %d %s, want 400 validation_failed naming reason", p, res.Status, res.Body)
		}
		if res := n.do("DELETE", fillPath(p), key, "[1]"); res.Status != 400 || !strings.Contains(string(res.Body), `"body"`) {
			t.Errorf("DELETE %s with an array for a body: %d %s, want 400 naming body", p, res.Status, res.Body)
		}
	}
	if checked < 5 {
		t.Fatalf("only %d DELETE routes in the document", checked)
	}

	alert := n.do("POST", "/v1/emergency/alerts", key, map[string]any{"alert_type": "road_hazard", "severity": "low", "title": "Ice", "message": "Bridge iced",
		"affected_area":   map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5},
		"target_audience": map[string]any{"include": []string{"dispatchers"}}, "delivery_channels": []map[string]any{{"channel": "in_app_alert"}},
		"expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).json(t)
	path := "/v1/emergency/alerts/" + str(t, alert, "alert_id")
	if res := n.do("DELETE", path, key, map[string]any{"reason": "storm passed"}); res.Status != 400 {
		t.Fatalf("cancel with a reason: %d %s", res.Status, res.Body)
	}
	if got := str(t, n.do("GET", path, key, nil).json(t), "status"); got != "active" {
		t.Errorf("alert after a refused cancellation: %s, want active", got)
	}
	if res := n.do("DELETE", path, key, "{}"); res.Status != 200 || str(t, res.json(t), "status") != "cancelled" {
		t.Errorf("cancel with {}: %d %s", res.Status, res.Body)
	}
}
