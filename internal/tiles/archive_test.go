package tiles_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles"
	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

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

// TestZxyToIDInverse checks ZxyToID against the inverse of the Hilbert
// curve the fixture writer uses, for every tile up to zoom 7.
func TestZxyToIDInverse(t *testing.T) {
	for z := uint8(0); z <= 7; z++ {
		for d := uint64(0); d < 1<<(2*z); d++ {
			x, y := tilestest.TileAt(z, d)
			if got, want := tiles.ZxyToID(z, x, y), tilestest.FirstID(z)+d; got != want {
				t.Fatalf("%d/%d/%d = %d, want %d", z, x, y, got, want)
			}
		}
	}
}

const fixtureMetadata = `{"name":"fixture","vector_layers":[{"id":"buildings","fields":{"height":"Number"}}]}`

// fixtureTiles are tiles at z0–z2 with known bytes. 1/0/0 and 1/0/1 (ids 1
// and 2) share their bytes, so they are one run-length entry; 2/0/0 (id 5)
// has the same bytes again after a gap, so its entry points back to them.
func fixtureTiles() []tilestest.Tile {
	sea := []byte("sea: the same bytes three times")
	return []tilestest.Tile{
		{Z: 0, X: 0, Y: 0, Data: []byte("tile 0/0/0")},
		{Z: 1, X: 0, Y: 0, Data: sea},
		{Z: 1, X: 0, Y: 1, Data: sea},
		{Z: 1, X: 1, Y: 1, Data: []byte("tile 1/1/1")},
		{Z: 2, X: 0, Y: 0, Data: sea},
		{Z: 2, X: 1, Y: 1, Data: []byte("tile 2/1/1")},
		{Z: 2, X: 2, Y: 1, Data: []byte("tile 2/2/1, a little longer than the others")},
		{Z: 2, X: 3, Y: 3, Data: []byte{0x1f, 0x8b, 0, 0xff, 0x00, 0x01}},
		{Z: 2, X: 3, Y: 0, Data: []byte{}},
	}
}

func fixture(gzip bool, leafSize int) tilestest.Archive {
	return tilestest.Archive{Tiles: fixtureTiles(), Metadata: []byte(fixtureMetadata), Gzip: gzip, LeafSize: leafSize,
		TileType: 1, TileCompression: 2, Bounds: [4]float64{11.15, 43.72, 11.33, 43.83}, Center: [2]float64{11.25, 43.78}, CenterZoom: 1}
}

var fixtureVariants = []struct {
	name     string
	gzip     bool
	leafSize int
}{
	{"plain", false, 0},
	{"gzip", true, 0},
	{"leaves", false, 2},
	{"gzip leaves", true, 3},
	{"one entry per leaf", true, 1},
}

func TestFixtureHasRunsAndSharedBytes(t *testing.T) {
	b := fixture(false, 0).Bytes()
	u := func(o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }
	if addressed, entries, contents := u(tilestest.OffAddressedTiles), u(tilestest.OffTileEntries), u(tilestest.OffTileContents); addressed != 9 || entries != 8 || contents != 7 {
		t.Fatalf("addressed %d, entries %d, contents %d: want 9, 8 (one run of 2), 7 (the sea bytes stored once)", addressed, entries, contents)
	}
}

func TestTiles(t *testing.T) {
	for _, v := range fixtureVariants {
		t.Run(v.name, func(t *testing.T) {
			a, err := tiles.Open(fixture(v.gzip, v.leafSize).File(t))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			h := a.Header
			if h.SpecVersion != 3 || h.MinZoom != 0 || h.MaxZoom != 2 || h.TileType != 1 || h.TileCompression != 2 || h.CenterZoom != 1 ||
				h.MinLon != 11.15 || h.MinLat != 43.72 || h.MaxLon != 11.33 || h.MaxLat != 43.83 || h.CenterLon != 11.25 || h.CenterLat != 43.78 {
				t.Errorf("header %+v", h)
			}
			if wantGzip := v.gzip; (h.InternalCompression == 2) != wantGzip {
				t.Errorf("internal compression %d", h.InternalCompression)
			}
			if string(a.Metadata) != fixtureMetadata {
				t.Errorf("metadata %q", a.Metadata)
			}
			want := map[[3]uint32][]byte{}
			for _, ft := range fixtureTiles() {
				want[[3]uint32{uint32(ft.Z), ft.X, ft.Y}] = ft.Data
			}
			for z := uint8(0); z <= 3; z++ {
				for x := uint32(0); x < 1<<z; x++ {
					for y := uint32(0); y < 1<<z; y++ {
						b, ok, err := a.Tile(z, x, y)
						if err != nil {
							t.Fatalf("%d/%d/%d: %v", z, x, y, err)
						}
						w, held := want[[3]uint32{uint32(z), x, y}]
						if ok != held || !bytes.Equal(b, w) {
							t.Errorf("%d/%d/%d = %q, %v; want %q, %v", z, x, y, b, ok, w, held)
						}
					}
				}
			}
			for _, c := range [][3]uint32{{0, 1, 0}, {0, 0, 1}, {1, 2, 0}, {2, 0, 4}, {30, 0, 0}} {
				if b, ok, err := a.Tile(uint8(c[0]), c[1], c[2]); ok || err != nil || b != nil {
					t.Errorf("%v outside the grid or zooms: %q, %v, %v", c, b, ok, err)
				}
			}
		})
	}
}

func TestEmptyArchive(t *testing.T) {
	a, err := tiles.Open(tilestest.Archive{Metadata: []byte("{}")}.File(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if b, ok, err := a.Tile(0, 0, 0); ok || err != nil || b != nil {
		t.Fatalf("0/0/0 of an empty archive: %q, %v, %v", b, ok, err)
	}
}

func TestConcurrentTiles(t *testing.T) {
	a, err := tiles.Open(fixture(true, 1).File(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, ft := range fixtureTiles() {
					b, ok, err := a.Tile(ft.Z, ft.X, ft.Y)
					if err != nil || !ok || !bytes.Equal(b, ft.Data) {
						t.Errorf("%d/%d/%d = %q, %v, %v", ft.Z, ft.X, ft.Y, b, ok, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestTileAfterClose(t *testing.T) {
	a, err := tiles.Open(fixture(false, 0).File(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Tile(0, 0, 0); ok || err == nil {
		t.Fatalf("a tile after Close: %v, %v", ok, err)
	}
}

func TestOpenMissingFile(t *testing.T) {
	_, err := tiles.Open(filepath.Join(t.TempDir(), "none.pmtiles"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err %v, want fs.ErrNotExist", err)
	}
}

// putU64 returns b with the header's uint64 at o set to v.
func putU64(b []byte, o int, v uint64) []byte {
	binary.LittleEndian.PutUint64(b[o:], v)
	return b
}

func u64(b []byte, o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }

// TestCorruptArchive: archives that are not PMTiles v3, truncated or
// corrupt do not open, and say why.
func TestCorruptArchive(t *testing.T) {
	valid := func(gzip bool) []byte { return fixture(gzip, 2).Bytes() }
	rootAt := func(b []byte) int { return int(u64(b, tilestest.OffRootOffset)) }
	for _, c := range []struct {
		name       string
		b          []byte
		notPMTiles bool
	}{
		{"empty", nil, true},
		{"short header", valid(false)[:100], true},
		{"wrong magic", append([]byte("PMTilez"), valid(false)[7:]...), true},
		{"version 2", func() []byte { b := valid(false); b[7] = 2; return b }(), true},
		{"a CSV file", []byte("id,lat,lon,street,number\n" + string(bytes.Repeat([]byte("1,40.7,-73.7,Main St,12\n"), 10))), true},
		{"truncated after the header", valid(false)[:tilestest.HeaderLen], false},
		{"truncated in the root directory", func() []byte { b := valid(false); return b[:rootAt(b)+2] }(), false},
		{"truncated in the metadata", func() []byte { b := valid(true); return b[:u64(b, tilestest.OffMetadataOffset)+5] }(), false},
		{"root length past the end", putU64(valid(false), tilestest.OffRootLength, 1<<40), false},
		{"root length over the section limit", putU64(valid(false), tilestest.OffRootLength, 1<<62), false},
		{"root offset past the end", putU64(valid(false), tilestest.OffRootOffset, 1<<63), false},
		{"metadata offset past the end", putU64(valid(false), tilestest.OffMetadataOffset, 1<<20), false},
		{"gzip flag on plain directories", func() []byte { b := valid(false); b[tilestest.OffInternalCompression] = 2; return b }(), false},
		{"brotli directories", func() []byte { b := valid(false); b[tilestest.OffInternalCompression] = 3; return b }(), false},
		{"corrupt gzip root", func() []byte { b := valid(true); b[rootAt(b)+12] ^= 0xff; return b }(), false},
		{"root entry count too large", func() []byte { b := valid(false); b[rootAt(b)] = 0xff; return b }(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := tiles.Open(tilestest.Write(t, c.b))
			if err == nil {
				a.Close()
				t.Fatal("opened")
			}
			if errors.Is(err, tiles.ErrNotPMTiles) != c.notPMTiles {
				t.Fatalf("err %v; ErrNotPMTiles %v, want %v", err, errors.Is(err, tiles.ErrNotPMTiles), c.notPMTiles)
			}
		})
	}
}

// TestTruncatedTiles: an archive cut after its root directory opens, and
// the tiles or leaf directories that are no longer there are errors, not
// missing tiles.
func TestTruncatedTiles(t *testing.T) {
	for _, v := range fixtureVariants {
		t.Run(v.name, func(t *testing.T) {
			b := fixture(v.gzip, v.leafSize).Bytes()
			cut := u64(b, tilestest.OffLeafOffset) + 1 // inside the leaves, if any, else inside the tile data
			a, err := tiles.Open(tilestest.Write(t, b[:cut]))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			for _, ft := range fixtureTiles() {
				if len(ft.Data) == 0 && v.leafSize == 0 {
					continue // nothing to read
				}
				if _, ok, err := a.Tile(ft.Z, ft.X, ft.Y); ok || err == nil {
					t.Errorf("%d/%d/%d of a truncated archive: %v, %v", ft.Z, ft.X, ft.Y, ok, err)
				}
			}
		})
	}
}

// TestCorruptLeaf: a leaf directory that does not decode is an error.
func TestCorruptLeaf(t *testing.T) {
	b := fixture(false, 2).Bytes()
	b[u64(b, tilestest.OffLeafOffset)] = 0x7f // 127 entries in a leaf of a few bytes
	a, err := tiles.Open(tilestest.Write(t, b))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, ok, err := a.Tile(0, 0, 0); ok || err == nil {
		t.Fatalf("a tile of a corrupt leaf: %v, %v", ok, err)
	}
}

func TestMetadataIsJSON(t *testing.T) {
	a, err := tiles.Open(fixture(true, 0).File(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var md struct {
		Name   string           `json:"name"`
		Layers []map[string]any `json:"vector_layers"`
	}
	if err := json.Unmarshal(a.Metadata, &md); err != nil || md.Name != "fixture" || len(md.Layers) != 1 {
		t.Fatalf("metadata %+v: %v", md, err)
	}
}

// ExampleArchive_Tile opens an archive and reads one tile.
func ExampleArchive_Tile() {
	dir, _ := os.MkdirTemp("", "tiles")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "example.pmtiles")
	os.WriteFile(p, tilestest.Archive{Tiles: []tilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("world")}}, Metadata: []byte("{}")}.Bytes(), 0o600)

	a, err := tiles.Open(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, ok, err := a.Tile(0, 0, 0)
	fmt.Printf("%s %v %v\n", b, ok, err)
	_, ok, err = a.Tile(1, 0, 0)
	fmt.Println(ok, err)
	// Output:
	// world true <nil>
	// false <nil>
}

// TestReadAt: the archive's raw bytes are the file's as it was at Open,
// even after something is appended to it.
func TestReadAt(t *testing.T) {
	path := tilestest.Archive{Tiles: []tilestest.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("tile")}}, Metadata: []byte(`{}`), TileType: 1, TileCompression: 1}.File(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tiles.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("appended")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if a.Size() != int64(len(raw)) {
		t.Errorf("Size %d, want %d", a.Size(), len(raw))
	}
	got, err := io.ReadAll(io.NewSectionReader(a, 0, 1<<20))
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("ReadAt: %d bytes %v, want the %d bytes of the file at Open", len(got), err, len(raw))
	}
	if n, err := a.ReadAt(make([]byte, 4), int64(len(raw))); n != 0 || err != io.EOF {
		t.Errorf("ReadAt at Size: %d %v, want 0 and io.EOF", n, err)
	}
}
