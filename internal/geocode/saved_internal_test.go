package geocode

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite testdata/fuzz/FuzzDecodeSaved from the fixture")

const savedSeed = "testdata/fuzz/FuzzDecodeSaved/fixture"

// The seed is the fixture's saved tables, kept current: -update-seeds
// rewrites it after a format change.
func TestSavedSeedIsCurrent(t *testing.T) {
	ix, err := Load("testdata/addresses.csv")
	if err != nil {
		t.Fatal(err)
	}
	body := encodeSections(ix)
	if *updateSeeds {
		if err := os.WriteFile(savedSeed, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(savedSeed), "truncated"),
			fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", body[:len(body)/2]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := decodeSections(body); err != nil {
		t.Fatalf("the fixture's own tables: %v", err)
	}
	seed, err := os.ReadFile(savedSeed)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", body); string(seed) != want {
		t.Fatal("the saved-index seed is stale: go test -run TestSavedSeedIsCurrent -update-seeds ./internal/geocode/")
	}
}

// FuzzDecodeSaved reads any bytes as a saved index's tables (past the
// CRC, which a fuzzer could not forge): an error, or an index that
// answers every kind of query without a panic.
func FuzzDecodeSaved(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := decodeSections(b)
		if err != nil {
			return
		}
		for _, q := range []string{"240-16 Brad", "90-05 212th St Glen Oaks NY 11004", "Westerville", "20306 1", "12a"} {
			ix.Search(q, 10)
			ix.Autocomplete(q, 10)
			ix.Validate(q)
		}
		ix.Nearest(40.7418, -73.7170, 250)
	})
}
