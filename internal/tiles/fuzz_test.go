package tiles_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/internal/tiles"
)

// FuzzOpen opens arbitrary bytes as an archive and reads tiles of the
// first zooms from what opens: errors are fine, panics and tiles that are
// both found and failed are not. Seeds in testdata/fuzz/FuzzOpen, and the
// fixtures of the tests, built here.
func FuzzOpen(f *testing.F) {
	for _, v := range fixtureVariants {
		b := fixture(v.gzip, v.leafSize).Bytes()
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	// one file per process, rewritten for each input: inputs of a process
	// run one at a time
	p := filepath.Join(f.TempDir(), "fuzz.pmtiles")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := tiles.Open(p)
		if err != nil {
			return
		}
		defer a.Close()
		for z := uint8(0); z <= 3; z++ {
			for x := uint32(0); x < 1<<z; x++ {
				for y := uint32(0); y < 1<<z; y++ {
					b, ok, err := a.Tile(z, x, y)
					if (ok && err != nil) || (!ok && b != nil) {
						t.Fatalf("%d/%d/%d: %d bytes, %v, %v", z, x, y, len(b), ok, err)
					}
				}
			}
		}
	})
}
