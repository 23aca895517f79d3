package geocode_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// Each layout loads, and rows without a city or state take them from the
// other rows of their ZIP (the state, failing that, from the ZIP itself).
func TestLoadLayouts(t *testing.T) {
	for _, c := range []struct {
		file  string
		n     int
		q, id string
		text  string
	}{
		{"testdata/addresses.geojson", 3, "203-06 109th Ave", "gj-1", "203-06 109th Avenue, Hollis, NY 11412"},
		{"testdata/addresses.geojson", 3, "12 Hempstead Avenue Queens Village", "gj-3", "12 Hëmpstead Ävenue, Queens Village, NY 11429"},
		{"testdata/addresses.geojsonl", 2, "240-16 Braddock Avenue", "nd-1", "240-16 Braddock Avenue, Bellerose, NY 11426"},
		{"testdata/addresses-rrad.json", 4, "1745 T St SE Washington DC", "addr-1", "1745 T Street Southeast, Washington, DC 20020"},
		{"testdata/addresses-rrad.json", 4, "6007 Applegate Ln Apt 4", "addr-2", "6007 Applegate Lane Apt 4, Louisville, KY 40219"},
		{"testdata/addresses-rrad.json", 4, "123 1/2 Main St", "addr-3", "123 1/2 Main Street, Louisville, KY 40219"},
		{"testdata/addresses-rrad.json", 4, "Rural Route Box Nome", "addr-4", "Rural Route Box, Nome, AK 99762"},
	} {
		ix, err := geocode.Load(c.file)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if ix.Len() != c.n {
			t.Errorf("%s: %d addresses, want %d", c.file, ix.Len(), c.n)
		}
		ms := ix.Search(c.q, 1)
		if len(ms) == 0 || ms[0].Address.ID != c.id || ms[0].Address.Text != c.text {
			t.Errorf("%s: Search(%q) = %+v, want %s %q", c.file, c.q, first(ms), c.id, c.text)
		}
	}
}

// The shared JSON file is the same addresses as the shared CSV.
func TestLoadRRADJSON(t *testing.T) {
	ix, err := geocode.Load(sharedData(t, "addresses/us-rrad-addresses-us-all.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ix.Len() < 3000 {
		t.Fatalf("%d addresses", ix.Len())
	}
	if ms := ix.Search("6007 Applegate Lane Louisville KY", 1); len(ms) == 0 || ms[0].Address.Text != "6007 Applegate Lane, Louisville, KY 40219" {
		t.Fatalf("search: %+v", first(ms))
	}
}

// Only the layouts are read: anything else is an error, not an empty
// index.
func TestLoadRefusesOtherJSON(t *testing.T) {
	for _, data := range []string{`"text"`, `42`, `{"features": 3}`, `{"features": [1, 2]}`, `[{"a": 1}, 3]`, ``, `{`} {
		p := writeTemp(t, "x.json", data)
		if _, err := geocode.Load(p); err == nil {
			t.Errorf("%q accepted", data)
		}
	}
}

func writeTemp(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
