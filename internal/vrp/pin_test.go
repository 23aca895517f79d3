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
// before, 0.28 % longer. All but C101's and R101 seed 5's were recorded
// again when the local search began SWAP* between routes (swapstar.go):
// over R101–R104, R106–R108 and R201–R209 with seeds 1 to 12 at this
// budget (180 runs), 7.833 vehicles on average before and after, the
// distance gap over all runs +1.125 % before and +1.126 % after; here
// every plan keeps its vehicle count, RC201 seed 3 is 0.63 % shorter,
// R211 seed 7 0.53 %, R211 seed 4 0.33 %, R101 seed 2 0.03 %, and RC201
// seed 6 (the time goal) 0.07 % longer. RC201 seed 6 was recorded
// again when each search's best plan began to go through a final local
// search over whole neighbourhoods (finish.go): 8 routes as before, its
// distance 1,282.30 instead of 1,283.14 (−0.07 %); the other pins' plans
// are local optima of that search already.
var pinned = []struct {
	name   string
	seed   uint64
	goal   vrp.Goal
	fewest bool // MinimizeVehicles
	hash   string
	dist   string
}{
	{"C101", 1, vrp.GoalDistance, true, "bfdfc23c7a217655", "828.936867"},
	{"R101", 2, vrp.GoalDistance, true, "9286703a0413562b", "1650.799240"},
	{"RC201", 3, vrp.GoalDistance, true, "7debdfcb336edb95", "1458.071362"},
	{"R211", 4, vrp.GoalDistance, true, "a5f981cdd11c7687", "803.129396"},
	{"R101", 5, vrp.GoalDistance, false, "22f1765ab04d3d7d", "1655.387249"},
	{"RC201", 6, vrp.GoalTime, false, "dd7ef2da70ec8ae3", "1282.303833"},
	{"R211", 7, vrp.GoalCost, true, "cd94c9ddf4bc5db5", "817.782160"},
}

// routesHash is an FNV-64a hash of routes printed in order.
func routesHash(routes [][]int) string {
	h := fnv.New64a()
	fmt.Fprint(h, routes)
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestPinnedSolomonPlans: the default objective plans what it planned
// before the other objectives existed, for fixed seeds and budgets;
// every plan passes checkSolomon. Under the race detector it checks a
// quarter of the pins; make test's pass without it checks them all.
func TestPinnedSolomonPlans(t *testing.T) {
	for _, pc := range pinned[:vrp.Seeds(len(pinned))] {
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
