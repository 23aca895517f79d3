package main

import (
	"path/filepath"
	"testing"
)

func TestRoutingMatrix(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM, _ = filepath.Abs("../../../shared/data/osm/us-oh-columbus.osm.pbf")
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
	big := make([]map[string]any, 51)
	for i := range big {
		big[i] = map[string]any{"lat": 39.96, "lon": -83.0}
	}
	for _, b := range []map[string]any{
		{"sources": big, "targets": body["targets"], "costing": "auto"},
		{"sources": body["sources"], "targets": body["targets"], "costing": "hovercraft"},
		{"sources": []map[string]any{{"lat": 95, "lon": 0}}, "targets": body["targets"], "costing": "auto"},
		{"targets": body["targets"], "costing": "auto"},
	} {
		if r := n.do("POST", "/v1/routing/sources_to_targets", k, b); r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%v: %d %s", b["costing"], r.Status, r.Body)
		}
	}
}
