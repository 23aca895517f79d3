package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

// TestTilesFixture serves an archive built by the test: each tile comes
// back byte for byte with the archive's tile compression as its
// Content-Encoding to a client that accepts it, a tile the archive does
// not hold is 404, coordinates that are no tile's 400.
func TestTilesFixture(t *testing.T) {
	held := []tilestest.Tile{
		{Z: 0, X: 0, Y: 0, Data: []byte("tile 0/0/0")},
		{Z: 1, X: 0, Y: 1, Data: []byte("tile 1/0/1")},
		{Z: 1, X: 1, Y: 1, Data: []byte("tile 1/1/1")},
		{Z: 2, X: 3, Y: 2, Data: []byte{0x1f, 0x8b, 0x08, 0x00, 0xff}},
	}
	const md = `{"name":"fixture","vector_layers":[{"id":"buildings"}]}`
	for _, c := range []struct {
		name        string
		compression uint8
		encoding    string
	}{{"gzip tiles", 2, "gzip"}, {"plain tiles", 1, ""}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Tiles = tilestest.Archive{Tiles: held, Metadata: []byte(md), Gzip: true, LeafSize: 2, TileType: 1, TileCompression: c.compression,
				Bounds: [4]float64{11.15, 43.72, 11.33, 43.83}, Center: [2]float64{11.25, 43.78}, CenterZoom: 1}.File(t)
			n := startNode(t, cfg)
			k := n.key("org-a", "test", []string{"maps:read"}, 100000)
			r := n.do("GET", "/v1/api/tiles/buildings/metadata", k, nil)
			m := r.json(t)
			h, _ := m["header"].(map[string]any)
			if r.Status != 200 || m["success"] != true || m["file"] != "archive.pmtiles" || m["metadata"] != md || h["specVersion"] != 3.0 ||
				h["minZoom"] != 0.0 || h["maxZoom"] != 2.0 || h["tileType"] != "mvt" || h["minLon"] != 11.15 || h["maxLat"] != 43.83 || h["centerZoom"] != 1.0 {
				t.Fatalf("metadata: %d %s", r.Status, r.Body)
			}
			if want := map[uint8]string{1: "none", 2: "gzip"}[c.compression]; h["compression"] != want {
				t.Errorf("compression %v, want %s", h["compression"], want)
			}
			for _, ht := range held {
				// Accept-Encoding set here, so the client hands the body over as sent
				r := n.do("GET", fmt.Sprintf("/v1/api/tiles/buildings/%d/%d/%d.mvt", ht.Z, ht.X, ht.Y), k, nil, "Accept-Encoding", "gzip")
				if r.Status != 200 || !bytes.Equal(r.Body, ht.Data) || r.Header.Get("Content-Type") != "application/vnd.mapbox-vector-tile" || r.Header.Get("Content-Encoding") != c.encoding {
					t.Errorf("%d/%d/%d: %d %q %v", ht.Z, ht.X, ht.Y, r.Status, r.Body, r.Header)
				}
			}
			for _, p := range []string{"1/0/0", "1/1/0", "2/0/0", "3/0/0"} {
				if r := n.do("GET", "/v1/api/tiles/buildings/"+p+".mvt", k, nil); r.Status != 404 || r.json(t)["success"] != false {
					t.Errorf("missing tile %s: %d %s", p, r.Status, r.Body)
				}
			}
			for _, p := range []string{"a/b/c", "0/1/0", "1/5/5"} {
				if r := n.do("GET", "/v1/api/tiles/buildings/"+p+".mvt", k, nil); r.Status != 400 {
					t.Errorf("bad coordinates %s: %d", p, r.Status)
				}
			}
			if r := n.do("GET", "/v1/api/tiles/buildings/metadata", n.key("org-a", "test", []string{"trips:read"}, 1000), nil); r.Status != 403 {
				t.Errorf("without maps:read: %d", r.Status)
			}
		})
	}
}

// TestTilesWithoutArchive: without --tiles both routes answer 501.
func TestTilesWithoutArchive(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"maps:read"}, 100000)
	for _, p := range []string{"/v1/api/tiles/buildings/metadata", "/v1/api/tiles/buildings/0/0/0.mvt"} {
		if r := n.do("GET", p, k, nil); r.Status != 501 || r.json(t)["success"] != false {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
}

// TestTiles serves the real vector archive of Florence.
func TestTiles(t *testing.T) {
	cfg := testConfig(t)
	cfg.Tiles = sharedData(t, "tiles/protomaps-vector-firenze-it.pmtiles")
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
