package tiles_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/api/tiles"
)

func data(name string) string {
	p, _ := filepath.Abs("../../../shared/data/tiles/" + name)
	return p
}

func TestZxyToID(t *testing.T) {
	for _, c := range []struct {
		z    uint8
		x, y uint32
		id   uint64
	}{{0, 0, 0, 0}, {1, 0, 0, 1}, {1, 0, 1, 2}, {1, 1, 1, 3}, {1, 1, 0, 4}, {2, 0, 0, 5}, {3, 7, 7, 63}} {
		if got := tiles.ZxyToID(c.z, c.x, c.y); got != c.id {
			t.Errorf("%d/%d/%d = %d, want %d", c.z, c.x, c.y, got, c.id)
		}
	}
}

func TestVectorArchive(t *testing.T) {
	a, err := tiles.Open(data("protomaps-vector-firenze-it.pmtiles"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h := a.Header
	if h.TileType != 1 || h.MinLon > 11.3 || h.MaxLon < 11.2 || h.MinLat > 43.8 || h.MaxLat < 43.7 {
		t.Fatalf("header %+v", h)
	}
	var md map[string]any
	if err := json.Unmarshal(a.Metadata, &md); err != nil || md["vector_layers"] == nil {
		t.Fatalf("metadata: %v %.200s", err, a.Metadata)
	}
	// the tile over Florence at the archive's max zoom exists and is a
	// (gzip-compressed) vector tile
	z := h.MaxZoom
	n := float64(uint32(1) << z)
	x := uint32((11.2558 + 180) / 360 * n)
	found := false
	for yy := uint32(0); yy < uint32(n) && !found; yy++ {
		b, ok, err := a.Tile(z, x, yy)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			found = true
			if h.TileCompression == 2 {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatalf("tile is not gzip: %v", err)
				}
				if raw, err := io.ReadAll(zr); err != nil || len(raw) == 0 {
					t.Fatalf("tile body: %v", err)
				}
			}
		}
	}
	if !found {
		t.Fatal("no tile in the column over Florence")
	}
	if _, ok, _ := a.Tile(0, 1, 0); ok {
		t.Fatal("tile outside the grid")
	}
}

func TestNotPMTiles(t *testing.T) {
	if _, err := tiles.Open(data("../addresses/us-rrad-openaddresses-sample.csv")); err == nil {
		t.Fatal("a CSV opened as PMTiles")
	}
}
