package geocode_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// sharedIndex is the two shared address files, 35,422 addresses.
func sharedIndex(b *testing.B) *geocode.Index {
	b.Helper()
	ix, err := geocode.Load(sharedData(b, "addresses/us-rrad-openaddresses-sample.csv"), sharedData(b, "addresses/us-ny-queens-village-osm-addresses.csv"))
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkFind is one query of each kind on the shared files: the
// hot path of /v1/search, /v1/autocomplete and /v1/validate.
func BenchmarkFind(b *testing.B) {
	ix := sharedIndex(b)
	for _, c := range []struct {
		name, q string
		prefix  bool
	}{
		{"exact", "203-06 109th Avenue, Queens, NY 11412", false},
		{"typo2", "6007 Aplegatte Lnae, Louisville KY", false},
		{"hyphenless", "20306 109th Ave Queens NY", false},
		{"town-only", "Louisville", false},
		{"prefix8", "203-06 1", true},
		{"prefix12", "203-06 109th", true},
		{"prefix-street", "Bradd", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ix.Find(geocode.Query{Text: c.q, Limit: 10, Prefix: c.prefix})
			}
		})
	}
}

// BenchmarkValidate is one /v1/validate on the shared files.
func BenchmarkValidate(b *testing.B) {
	ix := sharedIndex(b)
	b.ReportAllocs()
	for b.Loop() {
		ix.Validate("240-16 Braddock Avenue, Queens, NY 11426")
	}
}

// BenchmarkLoad is building the index of the shared files from the files
// (a first start, or a start after they changed).
func BenchmarkLoad(b *testing.B) {
	rrad, queens := sharedData(b, "addresses/us-rrad-openaddresses-sample.csv"), sharedData(b, "addresses/us-ny-queens-village-osm-addresses.csv")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := geocode.Load(rrad, queens); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestart is opening the shared files' index from its saved
// copy: hashing the files, reading and checking the copy.
func BenchmarkRestart(b *testing.B) {
	cfg := geocode.Config{Files: []string{sharedData(b, "addresses/us-rrad-openaddresses-sample.csv"),
		sharedData(b, "addresses/us-ny-queens-village-osm-addresses.csv")}, Dir: b.TempDir()}
	if _, err := geocode.Open(cfg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := geocode.Open(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
