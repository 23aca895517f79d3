package tiles_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles"
)

// sharedData returns the path of rel in the real data beside the
// repository (../shared/data). Without it the test is skipped, except
// under CI=true, where the data must be there and the test fails.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real data %s is missing (CI=true: it must be there): %v", p, err)
		}
		t.Skipf("real data %s is missing (it lives in ../shared/data beside the repository): %v", p, err)
	}
	return p
}

func TestVectorArchive(t *testing.T) {
	a, err := tiles.Open(sharedData(t, "tiles/protomaps-vector-firenze-it.pmtiles"))
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

// TestRasterArchive: every tile of a full z0–z3 raster pyramid is a PNG,
// stored uncompressed.
func TestRasterArchive(t *testing.T) {
	a, err := tiles.Open(sharedData(t, "tiles/stamen-toner-raster-z0-3.pmtiles"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if h := a.Header; h.TileType != 2 || h.TileCompression != 1 || h.MinZoom != 0 || h.MaxZoom != 3 {
		t.Fatalf("header %+v", h)
	}
	for z := uint8(0); z <= 3; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				b, ok, err := a.Tile(z, x, y)
				if err != nil || !ok || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
					t.Fatalf("%d/%d/%d: %v, %v, %.8q", z, x, y, ok, err, b)
				}
			}
		}
	}
}

// TestGoPMTilesFixture reads the test fixture of protomaps/go-pmtiles,
// written by another implementation: one gzip-compressed tile at z0.
func TestGoPMTilesFixture(t *testing.T) {
	a, err := tiles.Open(sharedData(t, "tiles/go-pmtiles-test-fixture-1.pmtiles"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var md map[string]any
	if err := json.Unmarshal(a.Metadata, &md); err != nil || md["name"] != "test_fixture_1.pmtiles" {
		t.Fatalf("metadata: %v %.200s", err, a.Metadata)
	}
	b, ok, err := a.Tile(0, 0, 0)
	if err != nil || !ok || len(b) != int(a.Header.TileDataLength) || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("0/0/0: %v, %v, %d bytes %.4q", ok, err, len(b), b)
	}
}
