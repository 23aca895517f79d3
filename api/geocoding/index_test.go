package geocoding_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/api/geocoding"
)

func TestTokens(t *testing.T) {
	got := strings.Join(geocoding.Tokens("1745 T St. SE, Washington, DC 20020"), " ")
	if got != "1745 t street southeast washington dc 20020" {
		t.Fatalf("tokens %q", got)
	}
}

func TestLoadRejectsOtherLayouts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(p, []byte("a,b,c\n1,2,3\n"), 0o600)
	if _, err := geocoding.Load(p); err == nil || !strings.Contains(err.Error(), "missing column") {
		t.Fatalf("bad layout: %v", err)
	}
	if _, err := geocoding.Load(filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func sample(tb testing.TB) *geocoding.Index {
	tb.Helper()
	p, _ := filepath.Abs("../../../shared/data/addresses/us-ny-queens-village-osm-addresses.csv")
	ix, err := geocoding.Load(p)
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

func FuzzSearch(f *testing.F) {
	ix := sample(f)
	for _, s := range []string{"203-06 109th Avenue", "braddock av", "", "---", "1 2 3 4 5 6 7 8", "ñandú st"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		for _, m := range ix.Search(q, 10, true) {
			if m.Confidence < 0 || m.Confidence > 1 {
				t.Fatalf("confidence %v for %q", m.Confidence, q)
			}
		}
	})
}

// BenchmarkSearch is one fuzzy search over the 32,202 Queens Village
// address points.
func BenchmarkSearch(b *testing.B) {
	ix := sample(b)
	b.ReportAllocs()
	for b.Loop() {
		ix.Search("240-16 Bradock Avenue 11426", 10, false)
	}
}
