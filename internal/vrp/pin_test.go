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
// their windows, or-opt): at this budget the new plans are as good on
// average (over R101–R109 and R201–R209 with seeds 1 to 12, 7.875
// vehicles on average before and after, the distance gap to the best
// known +1.30 % before, +1.01 % after), though R101 seed 2 takes 20
// vehicles where it took 19 and RC201 seed 3 is 1.8 % longer.
var pinned = []struct {
	name   string
	seed   uint64
	goal   vrp.Goal
	fewest bool // MinimizeVehicles
	hash   string
	dist   string
}{
	{"C101", 1, vrp.GoalDistance, true, "bfdfc23c7a217655", "828.936867"},
	{"R101", 2, vrp.GoalDistance, true, "f43a1ad170ff68fb", "1656.862941"},
	{"RC201", 3, vrp.GoalDistance, true, "dcec3a64e6773b27", "1455.099546"},
	{"R211", 4, vrp.GoalDistance, true, "c6f6be4a8fbc399d", "819.729479"},
	{"R101", 5, vrp.GoalDistance, false, "fc2532e8a15f3d33", "1642.876875"},
	{"RC201", 6, vrp.GoalTime, false, "cb4ff7dd07a639d3", "1291.493521"},
	{"R211", 7, vrp.GoalCost, true, "e08d55feaa8196e1", "825.884408"},
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
