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
// prefixes).
func heldOutFloor(class string) (float64, bool) {
	switch class {
	case "prefix 6": // a house number alone: every street that has it
		return 0.70, true
	case "prefix 8": // 216-17 1: nine streets from 104th Avenue to 118th Avenue have 216-17
		return 0.90, true
	case "prefix 10":
		return 0.95, true
	case "no street type": // 86th of 86th Avenue and 86th Road, both with the number
		return 0.90, false
	}
	return 0.95, false
}

func TestHeldOut(t *testing.T) {
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
	for _, s := range heldout.Evaluate(ix, heldout.Cases(rows, n)) {
		t.Logf("%-30s %4d  top-1 %5.1f%%  top-5 %5.1f%%", s.Name, s.N, 100*s.Share(false), 100*s.Share(true))
		all += s.N
		top1 += s.Top1
		floor, inTop5 := heldOutFloor(s.Name)
		if share := s.Share(inTop5); share < floor {
			t.Errorf("%s: %.1f%% right, floor %.0f%%", s.Name, 100*share, 100*floor)
		}
		if testing.Verbose() {
			for _, m := range s.Misses {
				t.Logf("    miss: %s", m)
			}
		}
	}
	t.Logf("all %d queries: top-1 %.1f%%", all, 100*float64(top1)/float64(all))
}
