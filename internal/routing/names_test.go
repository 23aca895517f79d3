package routing

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadWayNames reads the fixture's one named highway, in each of
// its formats, and leaves out the ways without a name or ref.
func TestReadWayNames(t *testing.T) {
	for _, name := range []string{"tiny.osm", "tiny.osm.gz", "tiny.osm.bz2", "tiny.osm.pbf"} {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		names, err := ReadWayNames(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(names) != 1 || names[10] != (WayName{Name: "Main Street"}) {
			t.Errorf("%s: %v, want only way 10 named Main Street", name, names)
		}
	}
}
