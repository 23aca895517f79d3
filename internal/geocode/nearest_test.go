package geocode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

func TestNearest(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct {
		name     string
		lat, lon float64
		maxM     float64
		want     string // "" for none
	}{
		{"9 m from 90-05 212th Street", 40.74180, -73.71702, 250, "90-05 212th Street, Glen Oaks, NY 11004"},
		{"on 18 N State St", 40.12650, -82.92948, 250, "18 N State St, Westerville, OH 43081"},
		{"beside the unit", 40.74055, -73.71540, 250, "240-28 Braddock Avenue Apt 2, Glen Oaks, NY 11004"},
		// 40.75° is a grid cell edge: 86-20 is 5 m away across it, 86-16
		// 16 m away in the point's own cell
		{"across a cell edge", 40.74999, -73.71300, 250, "86-20 Commonwealth Boulevard, Glen Oaks, NY 11004"},
		{"nearer than maxM", 40.74180, -73.71702, 10, "90-05 212th Street, Glen Oaks, NY 11004"},
		{"farther than maxM", 40.74180, -73.71702, 5, ""},
		{"600 m from any address", 40.13000, -82.91500, 250, ""},
		{"between the towns", 40.40000, -78.30000, 250, ""},
	} {
		name, ok := ix.Nearest(c.lat, c.lon, c.maxM)
		if name != c.want || ok != (c.want != "") {
			t.Errorf("%s: Nearest = %q %v, want %q", c.name, name, ok, c.want)
		}
	}
}

func TestNearestInAnEmptyIndex(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(p, []byte("LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := geocode.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if name, ok := ix.Nearest(40.7418, -73.7170, 250); ok || name != "" {
		t.Fatalf("empty index: %q %v", name, ok)
	}
	if ms := ix.Search("90-05 212th Street", 5); len(ms) != 0 {
		t.Fatalf("empty index: %+v", ms)
	}
}

// BenchmarkNearest is one location_names lookup, as the pipeline makes
// once per enriched event.
func BenchmarkNearest(b *testing.B) {
	for _, c := range []struct {
		name     string
		lat, lon float64
		load     func(*testing.B) *geocode.Index
	}{
		{"fixture", 40.74180, -73.71702, func(b *testing.B) *geocode.Index { return loadFixture(b) }},
		{"queens-village", 40.72585, -73.72774, realIndex},
	} {
		b.Run(c.name, func(b *testing.B) {
			ix := c.load(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ix.Nearest(c.lat, c.lon, 250); !ok {
					b.Fatal("no address")
				}
			}
		})
	}
}
