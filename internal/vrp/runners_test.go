package vrp_test

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// TestRunnersUp asks for runner-up plans: each is feasible by the
// checker, serves what the kept plan serves or less, is no better than
// it (fewer vehicles first, then distance, the objective here), differs
// from it and from the others, and they come cheapest first. Asking for
// them changes nothing of the plan kept.
func TestRunnersUp(t *testing.T) {
	in := readSolomon(t, "testdata/fh12.txt")
	pr := in.Problem()
	pr.MinimizeVehicles = true
	opts := vrp.Options{TimeLimit: time.Minute, Work: 3_000_000, Seed: 7}
	plain := pr.Solve(opts)
	if plain.Alternatives != nil {
		t.Fatalf("alternatives not asked for, got %d", len(plain.Alternatives))
	}
	opts.Alternatives = 3
	sol := pr.Solve(opts)
	if !reflect.DeepEqual(sol.Routes, plain.Routes) {
		t.Fatalf("asking for alternatives changed the plan:\n%v\n%v", sol.Routes, plain.Routes)
	}
	if len(sol.Alternatives) == 0 || len(sol.Alternatives) > 3 {
		t.Fatalf("%d alternatives, want 1 to 3", len(sol.Alternatives))
	}
	used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{canonical(sol.Routes): true}
	prev := math.Inf(-1)
	for i, a := range sol.Alternatives {
		if a.Unassigned != 0 {
			// fh12's fleet serves everything; a runner-up may not, and
			// is then dearer, but the checker needs the count
			t.Logf("alternative %d leaves %d out", i, a.Unassigned)
		}
		au, ad, err := checkSolomon(in, a.Routes, a.Unassigned)
		if err != nil {
			t.Fatalf("alternative %d: %v", i, err)
		}
		if a.Unassigned == 0 && (au < used || au == used && ad < dist-1e-6) {
			t.Errorf("alternative %d (%d vehicles, %.2f) beats the plan kept (%d, %.2f)", i, au, ad, used, dist)
		}
		if a.Cost < prev {
			t.Errorf("alternative %d costs %.3f after %.3f", i, a.Cost, prev)
		}
		prev = a.Cost
		for v, r := range sol.Routes {
			for u, ar := range a.Routes {
				if len(r) > 0 && u != v && reflect.DeepEqual(ar, r) {
					t.Errorf("alternative %d drives vehicle %d's route on vehicle %d: alike vehicles, so it should stay on %d", i, v, u, v)
				}
			}
		}
		t.Logf("alternative %d: %d vehicles, %.2f (kept %d, %.2f)", i, au, ad, used, dist)
		k := canonical(a.Routes)
		if seen[k] {
			t.Errorf("alternative %d repeats a plan (its routes, on whichever vehicles): %v", i, a.Routes)
		}
		seen[k] = true
	}
	again := pr.Solve(opts)
	if !reflect.DeepEqual(again.Alternatives, sol.Alternatives) {
		t.Errorf("the same seed gave other alternatives")
	}
}

// canonical names a plan of alike vehicles by its routes, whichever
// vehicle drives each.
func canonical(routes [][]int) string {
	var rs []string
	for _, r := range routes {
		if len(r) > 0 {
			rs = append(rs, fmt.Sprint(r))
		}
	}
	slices.Sort(rs)
	return strings.Join(rs, " ")
}
