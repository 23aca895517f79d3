package geocode_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// fixture is testdata/addresses.csv: 30 invented address points in the
// OpenAddresses layout, on five streets of Glen Oaks, NY (Queens-style
// numbers such as 90-01) and four of Westerville, OH.
const fixture = "testdata/addresses.csv"

func loadFixture(tb testing.TB) *geocode.Index {
	tb.Helper()
	ix, err := geocode.Load(fixture)
	if err != nil {
		tb.Fatal(err)
	}
	return ix
}

// sharedData returns the path of rel in the real data beside the
// repository (../shared/data). Without it the test is skipped, except under
// CI=true, where the data must be there and the test fails.
func sharedData(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", rel))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("CI=true and the shared data file %s is missing: %v", p, err)
		}
		tb.Skipf("shared data file %s is missing: skipping (it sits beside the repository in ../shared/data)", p)
	}
	return p
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1745 T St. SE, Washington, DC 20020", "1745 t street southeast washington dc 20020"},
		{"90-01 212th St, Glen Oaks", "90-01 212th street glen oaks"},
		{"-- N. State Str --", "north state street"},
		{"Ñandú Ave Apt 2", "nandu avenue apartment 2"},
		{"Hëmpstead Ävenue, Straße ４２", "hempstead avenue strasse 42"},
		{"Wilkes-Barre", "wilkes barre"},
		{"123 1/2 Main", "123 1/2 main"},
		{" ,;. ", ""},
	} {
		if got := strings.Join(geocode.Tokens(c.in), " "); got != c.want {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLoad(t *testing.T) {
	ix := loadFixture(t)
	if ix.Len() != 30 {
		t.Fatalf("Len %d, want 30", ix.Len())
	}
	// the standardized text keeps the file's spelling and adds the unit
	v := ix.Validate("240-28 Braddock Avenue Apt 2, Glen Oaks, NY 11004")
	m, ok := v.Match, v.Exists
	if !ok || m.Address.ID != "fx-04" || m.Address.Text != "240-28 Braddock Avenue Apt 2, Glen Oaks, NY 11004" ||
		m.Address.Latitude != 40.74053 || m.Address.Longitude != -73.71545 {
		t.Fatalf("fx-04: %v %+v", ok, m.Address)
	}
	// two files are one index
	two, err := geocode.Load(fixture, fixture)
	if err != nil || two.Len() != 60 {
		t.Fatalf("two files: %v %v", two, err)
	}
}

func TestLoadSkipsRowsThatAreNotAddressPoints(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mixed.csv")
	csv := "lon,lat,number,street,city,region,postcode\n" + // any column order and case, no ID
		"-82.9295,40.1261,12,N State St,Westerville,OH,43081\n" +
		"x,40.1,1,Main St,,,\n" + // no longitude
		"-82.9,91,1,Main St,,,\n" + // latitude out of range
		"-82.9,40.1,1,,,,\n" + // no street
		"-82.9312,40.1258,45,W Main St\n" // short row
	if err := os.WriteFile(p, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := geocode.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 2 {
		t.Fatalf("Len %d, want 2", ix.Len())
	}
	ms := ix.Search("12 North State Street", 1)
	if len(ms) != 1 || ms[0].Address.ID != "addr-1" || ms[0].Address.Text != "12 N State St, Westerville, OH 43081" {
		t.Fatalf("row without ID: %+v", ms)
	}
	if ms := ix.Search("45 West Main Street", 1); len(ms) != 1 || ms[0].Address.ID != "addr-2" || ms[0].Address.Text != "45 W Main St" {
		t.Fatalf("short row: %+v", ms)
	}
}

func TestLoadRejectsOtherLayouts(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(p, []byte("a,b,c\n1,2,3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := geocode.Load(p); err == nil || !strings.Contains(err.Error(), "missing column") {
		t.Fatalf("bad layout: %v", err)
	}
	if _, err := geocode.Load(filepath.Join(t.TempDir(), "none.csv")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// TestRealData runs the fixture's checks on the real address files.
func TestRealData(t *testing.T) {
	rrad := sharedData(t, "addresses/us-rrad-openaddresses-sample.csv")
	queens := sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv")
	ix, err := geocode.Load(rrad, queens)
	if err != nil {
		t.Fatal(err)
	}
	if ms := ix.Search("1745 T St SE Washington DC", 1); len(ms) == 0 || ms[0].Address.ID != "rrad-1" || ms[0].Confidence < 0.8 {
		t.Errorf("search: %+v", ms)
	}
	if ms := ix.Search("6007 Aplegate Lane Louisville", 1); len(ms) == 0 || ms[0].Address.ID != "rrad-2" {
		t.Errorf("typo: %+v", ms)
	}
	if ms := ix.Autocomplete("203-06 109th Av", 3); len(ms) == 0 || !strings.HasPrefix(ms[0].Address.Text, "203-06 109th Avenue") {
		t.Errorf("autocomplete: %+v", ms)
	}
	if ix.Validate("99999 Nowhere Boulevard Atlantis").Exists {
		t.Error("validate: a street that is not there exists")
	}
	if name, ok := ix.Nearest(38.86705, -76.97925, 250); !ok || name != "1745 T Street Southeast, Washington, DC 20020" {
		t.Errorf("nearest: %q %v", name, ok)
	}
}

// realIndex is the 32,202 Queens Village address points.
func realIndex(b *testing.B) *geocode.Index {
	ix, err := geocode.Load(sharedData(b, "addresses/us-ny-queens-village-osm-addresses.csv"))
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkSearch is one fuzzy search (one typo) over the fixture and over
// the 32,202 Queens Village address points.
func BenchmarkSearch(b *testing.B) {
	for _, c := range []struct {
		name, q string
		load    func(*testing.B) *geocode.Index
	}{
		{"fixture", "240-16 Bradock Avenue 11004", func(b *testing.B) *geocode.Index { return loadFixture(b) }},
		{"queens-village", "240-16 Bradock Avenue 11426", realIndex},
	} {
		b.Run(c.name, func(b *testing.B) {
			ix := c.load(b)
			b.ReportAllocs()
			for b.Loop() {
				ix.Search(c.q, 10)
			}
		})
	}
}

// BenchmarkAutocomplete is one autocomplete of a query being typed.
func BenchmarkAutocomplete(b *testing.B) {
	for _, c := range []struct {
		name, q string
		load    func(*testing.B) *geocode.Index
	}{
		{"fixture", "240-16 Brad", func(b *testing.B) *geocode.Index { return loadFixture(b) }},
		{"queens-village", "240-16 Brad", realIndex},
	} {
		b.Run(c.name, func(b *testing.B) {
			ix := c.load(b)
			b.ReportAllocs()
			for b.Loop() {
				ix.Autocomplete(c.q, 5)
			}
		})
	}
}
