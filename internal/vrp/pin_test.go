package vrp_test

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// pinned are plans of the goals that existed before (distance, with
// vehicles first as the benchmark asks, time and the one cost model) for
// fixed seeds and work budgets: with none of the objectives beyond
// distance, several breaks or priced overloads asked for, the solver must
// plan exactly these routes (an FNV-64a hash of the routes, and their
// distance). They were recorded again when the search changed (route
// minimisation around left-out stops, insertion positions skipped by
// their windows, or-opt, a starting temperature twice as high): at this
// budget the new plans are as good on average (over R101–R109 and
// R201–R209 with seeds 1 to 12, 7.875 vehicles on average before and
// after, the distance gap to the best known over all runs +1.30 %
// before, +1.00 % after); here every plan keeps its vehicle count, six
// are as short or shorter and RC201 seed 3 is 2.6 % longer. R101 seed 5
// was recorded again when the first plan began to offer again the stops
// a blink left out (its first plan had left one out): 19 routes as
// before, 0.28 % longer. All but C101's were recorded again when the
// local search began to swap stops between routes (swap.go): over
// R101–R104, R106–R108 and R201–R209 with seeds 1 to 12 at this budget
// (180 runs), 7.833 vehicles on average before and 7.828 after, the
// distance gap over all runs +1.125 % before and +1.056 % after; here
// every plan keeps its vehicle count, R101 seed 2 is 0.67 % longer,
// R211 seed 4 2.10 % and RC201 seed 6 0.29 %, RC201 seed 3 1.58 %
// shorter, R211 seed 7 1.05 % and R101 seed 5 0.11 %.
var pinned = []struct {
	name   string
	seed   uint64
	goal   vrp.Goal
	fewest bool // MinimizeVehicles
	hash   string
	dist   string
}{
	{"C101", 1, vrp.GoalDistance, true, "bfdfc23c7a217655", "828.936867"},
	{"R101", 2, vrp.GoalDistance, true, "e12a970f4a1af1e1", "1662.280028"},
	{"RC201", 3, vrp.GoalDistance, true, "2f1cdd66aaea7661", "1444.074702"},
	{"R211", 4, vrp.GoalDistance, true, "e443ef3bdd359bff", "822.716084"},
	{"R101", 5, vrp.GoalDistance, false, "2f86c4c717bcbf47", "1653.533228"},
	{"RC201", 6, vrp.GoalTime, false, "3018b3e7e0668b47", "1285.982869"},
	{"R211", 7, vrp.GoalCost, true, "a1a423f50e5ad009", "813.472765"},
}

// routesHash is an FNV-64a hash of routes printed in order.
func routesHash(routes [][]int) string {
	h := fnv.New64a()
	fmt.Fprint(h, routes)
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestPinnedSolomonPlans: the default objective plans what it planned
// before the other objectives existed, for fixed seeds and budgets;
// every plan passes checkSolomon.
func TestPinnedSolomonPlans(t *testing.T) {
	for _, pc := range pinned {
		t.Run(fmt.Sprintf("%s/%d", pc.name, pc.seed), func(t *testing.T) {
			in := readSolomon(t, sharedData(t, "vrp/solomon/"+pc.name+".txt"))
			pr := in.Problem()
			pr.MinimizeVehicles, pr.Goal = pc.fewest, pc.goal
			sol := pr.Solve(vrp.Options{TimeLimit: time.Minute, Work: 3_000_000, Seed: pc.seed})
			if sol.Cut {
				t.Fatal("the clock cut a search that its work budget should have ended")
			}
			used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
			if err != nil {
				t.Fatal(err)
			}
			got, gotDist := routesHash(sol.Routes), fmt.Sprintf("%.6f", dist)
			t.Logf("%s seed %d: %d routes, distance %s, hash %s", pc.name, pc.seed, used, gotDist, got)
			if got != pc.hash || gotDist != pc.dist {
				t.Errorf("%s seed %d: plan %s (distance %s), pinned %s (distance %s)", pc.name, pc.seed, got, gotDist, pc.hash, pc.dist)
			}
		})
	}
}
