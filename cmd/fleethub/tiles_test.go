package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

func TestTiles(t *testing.T) {
	cfg := testConfig(t)
	p, _ := filepath.Abs("../../../shared/data/tiles/protomaps-vector-firenze-it.pmtiles")
	cfg.Tiles = p
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"maps:read"}, 100000)
	r := n.do("GET", "/v1/api/tiles/buildings/metadata", k, nil)
	m := r.json(t)
	h, _ := m["header"].(map[string]any)
	if r.Status != 200 || m["success"] != true || h["specVersion"] != 3.0 || h["tileType"] != "mvt" || m["file"] != "protomaps-vector-firenze-it.pmtiles" {
		t.Fatalf("metadata: %d %.300s", r.Status, r.Body)
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(m["metadata"].(string)), &md); err != nil || md["vector_layers"] == nil {
		t.Errorf("metadata JSON: %v", err)
	}
	if r := n.do("GET", "/v1/api/tiles/buildings/0/0/0.mvt", k, nil); r.Status != 200 || len(r.Body) == 0 {
		// the archive may start above zoom 0: its min zoom tile over the center
		z := int(h["minZoom"].(float64))
		found := false
		for x := 0; x < 1<<z && !found; x++ {
			for y := 0; y < 1<<z && !found; y++ {
				if r := n.do("GET", fmt.Sprintf("/v1/api/tiles/buildings/%d/%d/%d.mvt", z, x, y), k, nil); r.Status == 200 {
					found = true
				}
			}
		}
		if !found {
			t.Fatal("no tile at the archive's min zoom")
		}
	}
	if r := n.do("GET", "/v1/api/tiles/buildings/3/0/0.mvt", k, nil); r.Status != 404 || r.json(t)["success"] != false {
		t.Errorf("missing tile: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/api/tiles/buildings/a/b/c.mvt", k, nil); r.Status != 400 {
		t.Errorf("bad coordinates: %d", r.Status)
	}
	if r := n.do("GET", "/v1/api/tiles/buildings/metadata", n.key("org-a", "test", []string{"trips:read"}, 1000), nil); r.Status != 403 {
		t.Errorf("without maps:read: %d", r.Status)
	}
}
