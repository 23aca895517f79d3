package geocode_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/geocode/heldout"
)

// The held-out evaluation (package heldout): queries made from the shared
// address files the way people type them, one class per way, each scored
// at top-1 and in the top 5. `go test -run TestHeldOut -v
// ./internal/geocode/` prints the table; the test fails when a class falls
// under its floor.

// heldOutFloor is each class's required top-1 share (top-5 for short
// prefixes): the figure where the measured one meets it over
// every sample drawn (n from 40 to 1,000), otherwise just under the
// measured figure. The classes under the figure are ambiguous in
// the data itself: their queries fit more than one street, and the best
// any ranking can do on them (the share of the rows that fit the query
// that are on the street ranked first, or on the first five) is under it.
func heldOutFloor(class string) (float64, bool) {
	switch class {
	case "exact", "abbreviated", "lowercase", "without ZIP", "reordered",
		"validate: true address", "validate: one typo", "validate: with unit", "validate: wrong number", "validate: wrong street":
		return 0.99, false // measured 99.5–100 %
	case "prefix 6": // a house number alone: every street that has it
		return 0.70, true
	case "prefix 8":
		// issue: 95 %; measured 93.7–95 %, and no ranking can do better
		// than 93.3–94.5 % on these samples: 216-17 1 is on nine streets,
		// 104th Avenue to 118th Avenue, one address each
		return 0.93, true
	case "prefix 10":
		return 0.95, true
	case "prefix 12":
		// issue: 99 %; measured 96.8–98 %, and no ranking can do better
		// than 96.7–97.2 % on these samples: 209-50 112th is 209-50 112th
		// Avenue and 209-50 112th Road, one address each
		return 0.96, false
	case "no street type": // 86th of 86th Avenue and 86th Road, both with the number; measured 96.6–98.5 %
		return 0.95, false
	}
	return 0.95, false // the figure for typos and hyphen-free numbers
}

func TestHeldOut(t *testing.T) {
	if geocode.RaceOn {
		t.Skip("runs in make test's pass without the race detector (see the Makefile)")
	}
	rrad := sharedData(t, "addresses/us-rrad-openaddresses-sample.csv")
	queens := sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv")
	ix, err := geocode.Load(rrad, queens)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := heldout.ReadRows(rrad, false)
	if err != nil {
		t.Fatal(err)
	}
	qv, err := heldout.ReadRows(queens, true)
	if err != nil {
		t.Fatal(err)
	}
	rows = append(rows, qv...)
	n := 200
	if testing.Short() {
		n = 40
	}
	var all, top1 int
	cases := heldout.Cases(rows, n)
	bound := heldout.Bound(rows, cases)
	for _, s := range heldout.Evaluate(ix, cases) {
		t.Logf("%-30s %4d  top-1 %5.1f%%  top-5 %5.1f%%", s.Name, s.N, 100*s.Share(false), 100*s.Share(true))
		if b, ok := bound[s.Name]; ok {
			t.Logf("%-30s       best any ranking can expect: top-1 %5.1f%%  top-5 %5.1f%%", "", 100*b[0], 100*b[1])
		}
		all += s.N
		top1 += s.Top1
		floor, inTop5 := heldOutFloor(s.Name)
		hits := s.Top1
		if inTop5 {
			hits = s.Top5
		}
		slack := 0
		if testing.Short() {
			slack = 1 // 40 queries a class: one query is 2.5 points
		}
		if float64(hits+slack) < floor*float64(s.N) {
			t.Errorf("%s: %.1f%% right, floor %.0f%%", s.Name, 100*s.Share(inTop5), 100*floor)
		}
		if testing.Verbose() {
			for _, m := range s.Misses {
				t.Logf("    miss: %s", m)
			}
		}
	}
	t.Logf("all %d queries: top-1 %.1f%%", all, 100*float64(top1)/float64(all))
}
