package main

import (
	"path/filepath"
	"testing"
)

// tinyOSM is the routing engine's fixture: seven nodes, a one-way street,
// a footway and a part of the network cars cannot reach (drawn in
// internal/routing/fixture_test.go).
func tinyOSM(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../internal/routing/testdata/tiny.osm.pbf")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRoutingMatrixTiny serves the fixture: kilometers and seconds per
// cell, where each location snapped, null rows for a location no road is
// near, and the request's validation.
func TestRoutingMatrixTiny(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	body := map[string]any{"sources": []map[string]any{{"lat": 40.000, "lon": -83.000}, {"lat": 40.002, "lon": -83.000}},
		"targets": []map[string]any{{"lat": 40.002, "lon": -83.000}, {"lat": 40.004, "lon": -83.000}}, "costing": "auto"}
	r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	rows := d["sources_to_targets"].([]any)
	if len(rows) != 2 || len(rows[0].([]any)) != 2 || d["units"] != "kilometers" {
		t.Fatalf("matrix %v", d)
	}
	// node 1 → node 3: 222.4 m along a two-way and a one-way street at 25 km/h
	c := rows[0].([]any)[0].(map[string]any)
	if c["distance"] != 0.222 || c["time"] != 32.0 {
		t.Errorf("1→3: %v, want 0.222 km, 32.0 s", c)
	}
	if c := rows[1].([]any)[0].(map[string]any); c["distance"] != 0.0 || c["time"] != 0.0 {
		t.Errorf("3→3: %v, want 0", c)
	}
	// node 8 is on an island cars cannot leave: the location is put on
	// the nearest road of the main network, node 3, 222.4 m away
	if tg := d["targets"].([]any)[1].(map[string]any); tg["snapped"] != true || tg["snap_distance"] != 222.4 || tg["reason"] != nil {
		t.Errorf("node 8 by car: %v", tg)
	}
	if c := rows[0].([]any)[1].(map[string]any); c["distance"] != 0.222 {
		t.Errorf("1→8 by car: %v, want to node 3", c)
	}
	// a location at the pole snaps nowhere: its row is null, with a reason
	pole := map[string]any{"sources": []map[string]any{{"lat": 90, "lon": 0}, {"lat": 40.0, "lon": -83.0}}, "targets": body["targets"], "costing": "auto"}
	r = n.do("POST", "/v1/routing/sources_to_targets", k, pole)
	pd := r.json(t)["data"].(map[string]any)
	if src := pd["sources"].([]any)[0].(map[string]any); r.Status != 200 || src["snapped"] != false || src["reason"] == nil || src["snap_distance"] != nil {
		t.Errorf("pole: %d %v", r.Status, src)
	}
	for _, cell := range pd["sources_to_targets"].([]any)[0].([]any) {
		if c := cell.(map[string]any); c["distance"] != nil || c["time"] != nil {
			t.Errorf("pole row: %v", c)
		}
	}
	if c := pd["sources_to_targets"].([]any)[1].([]any)[0].(map[string]any); c["distance"] != 0.222 {
		t.Errorf("the pole spoiled the next row: %v", c)
	}
	body["costing"], body["truck"] = "truck", map[string]any{"height": 3.2, "weight": 12}
	if r := n.do("POST", "/v1/routing/sources_to_targets", k, body); r.Status != 200 {
		t.Errorf("truck with its size: %d %s", r.Status, r.Body)
	}
	delete(body, "truck")
	body["costing"] = "pedestrian"
	r = n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if c := r.json(t)["data"].(map[string]any)["sources_to_targets"].([]any)[0].([]any)[1].(map[string]any); r.Status != 200 || c["distance"] != 0.445 {
		t.Errorf("1→8 on foot: %d %v, want 0.445 km", r.Status, c)
	}
	big := make([]map[string]any, 51)
	for i := range big {
		big[i] = map[string]any{"lat": 40.0, "lon": -83.0}
	}
	for _, b := range []map[string]any{
		{"sources": big, "targets": body["targets"], "costing": "auto"},
		{"sources": body["sources"], "targets": body["targets"], "costing": "hovercraft"},
		{"sources": []map[string]any{{"lat": 95, "lon": 0}}, "targets": body["targets"], "costing": "auto"},
		{"targets": body["targets"], "costing": "auto"},
		{"sources": body["sources"], "targets": body["targets"], "costing": "auto", "truck": map[string]any{"height": 3}},
		{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"height": 30}},
		{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"weight": -1}},
	} {
		if r := n.do("POST", "/v1/routing/sources_to_targets", k, b); r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%v: %d %s", b["costing"], r.Status, r.Body)
		}
	}
}

// TestRoutingMatrix serves the Columbus extract (validation is in
// TestRoutingMatrixTiny).
func TestRoutingMatrix(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = sharedData(t, "osm/us-oh-columbus.osm.pbf")
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	body := map[string]any{"sources": []map[string]any{{"lat": 39.9612, "lon": -82.9988}, {"lat": 39.97, "lon": -83.005}},
		"targets": []map[string]any{{"lat": 39.955, "lon": -82.99}}, "costing": "auto"}
	r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	rows := d["sources_to_targets"].([]any)
	if len(rows) != 2 || len(rows[0].([]any)) != 1 || d["units"] != "kilometers" {
		t.Fatalf("matrix %v", d)
	}
	c := rows[0].([]any)[0].(map[string]any)
	if c["distance"].(float64) <= 0 || c["time"].(float64) <= 0 {
		t.Errorf("cell %v", c)
	}
}
