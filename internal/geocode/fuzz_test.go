package geocode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// FuzzSearch runs any query through Search, Autocomplete and Validate on
// the fixture. Seeds are in testdata/fuzz/FuzzSearch.
func FuzzSearch(f *testing.F) {
	ix := loadFixture(f)
	f.Fuzz(func(t *testing.T, q string) {
		for _, prefix := range []bool{false, true} {
			ms := ix.Search(q, 10)
			if prefix {
				ms = ix.Autocomplete(q, 10)
			}
			if len(ms) > 10 {
				t.Fatalf("%d matches for %q, limit 10", len(ms), q)
			}
			for i, m := range ms {
				if m.Confidence < 0 || m.Confidence > 1 {
					t.Fatalf("confidence %v for %q", m.Confidence, q)
				}
				if i > 0 && m.Confidence > ms[i-1].Confidence {
					t.Fatalf("matches for %q out of order: %v after %v", q, m.Confidence, ms[i-1].Confidence)
				}
			}
		}
		if v := ix.Validate(q); v.Exists && v.Match.Confidence <= 0.7 {
			t.Fatalf("valid at %v for %q", v.Match.Confidence, q)
		}
	})
}

// FuzzLoad reads any file as address CSV: an error or an index that
// answers queries, never a panic. Seeds are in testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "a.csv")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		ix, err := geocode.Load(p)
		if err != nil {
			return
		}
		for _, m := range ix.Autocomplete(string(data), 5) {
			if a := m.Address; a.Latitude < -90 || a.Latitude > 90 || a.Longitude < -180 || a.Longitude > 180 || a.Text == "" {
				t.Fatalf("address %+v", a)
			}
		}
		ix.Nearest(40.74, -73.71, 250)
	})
}
