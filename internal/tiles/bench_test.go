package tiles_test

import (
	"fmt"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles"
	"github.com/fleethub/fleethub/internal/tiles/tilestest"
)

// BenchmarkTile looks tiles up in an archive of every tile of z0–z7
// (21,845 tiles of 64 bytes each): from the root directory alone, and
// through gzip-compressed leaf directories of 256 entries (cached after
// the first read).
func BenchmarkTile(b *testing.B) {
	var ts []tilestest.Tile
	for z := uint8(0); z <= 7; z++ {
		for x := uint32(0); x < 1<<z; x++ {
			for y := uint32(0); y < 1<<z; y++ {
				ts = append(ts, tilestest.Tile{Z: z, X: x, Y: y, Data: []byte(fmt.Sprintf("%064d", tiles.ZxyToID(z, x, y)))})
			}
		}
	}
	for _, c := range []struct {
		name     string
		leafSize int
	}{{"root", 0}, {"leaves", 256}} {
		b.Run(c.name, func(b *testing.B) {
			a, err := tiles.Open(tilestest.Archive{Tiles: ts, Metadata: []byte("{}"), Gzip: true, LeafSize: c.leafSize}.File(b))
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				t := ts[i%len(ts)]
				i += 7919 // a prime: the lookups wander over the zooms and leaves
				if _, ok, err := a.Tile(t.Z, t.X, t.Y); !ok || err != nil {
					b.Fatalf("%d/%d/%d: %v, %v", t.Z, t.X, t.Y, ok, err)
				}
			}
		})
	}
}
