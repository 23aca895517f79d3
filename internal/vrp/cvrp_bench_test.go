package vrp_test

import (
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

var (
	cvrpMatch = flag.String("cvrp.match", "^X-n(101|106|110)-", "BenchmarkCVRPSet: solve the X instances whose names match this regular expression")
	cvrpWork  = flag.Int64("cvrp.work", 20*vrp.WorkPerSecond, "BenchmarkCVRPSet: work units per search")
	cvrpSeeds = flag.String("cvrp.seeds", "0", "BenchmarkCVRPSet: comma-separated seeds")
)

// BenchmarkCVRPSet solves CVRPLIB X instances of ../shared/data in
// process, as the API plans them (distance alone, twice the name's
// routes as the fleet, capacity on weight), with a fixed work budget per
// search (-cvrp.work), so that the plans depend on the build and the
// seed alone: per run the routes against the best-known solution's and
// the gap, and the mean gap over all runs. Every plan is checked: each
// customer once, every route within capacity, its length recomputed.
//
//	go test -run '^$' -bench CVRPSet -benchtime 1x -v ./internal/vrp/ -args -cvrp.match '^X-n936-' -cvrp.work 600000000 -cvrp.seeds 0,1
func BenchmarkCVRPSet(b *testing.B) {
	dir := sharedData(b, "vrp/cvrp/uchoa-x")
	re, err := regexp.Compile(*cvrpMatch)
	if err != nil {
		b.Fatalf("-cvrp.match: %v", err)
	}
	bks := cvrpBestKnown(b, dir)
	var names []string
	for name := range bks {
		if re.MatchString(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	seeds := parseSeeds(b, "-cvrp.seeds", *cvrpSeeds)
	for b.Loop() {
		runs, gap, over := 0, 0.0, 0
		for _, name := range names {
			c := readCVRPLIB(b, filepath.Join(dir, name+".vrp"))
			for _, seed := range seeds {
				routes, dist := solveCVRP(b, c, name, seed)
				g := 100 * (dist - bks[name].cost) / bks[name].cost
				b.Logf("%-13s seed %d: %3d routes (best known %3d), %10.0f (%10.0f), %+6.2f%%", name, seed, routes, bks[name].routes, dist, bks[name].cost, g)
				runs, gap = runs+1, gap+g
				if g > 1.5 {
					over++
				}
			}
		}
		b.Logf("%d runs: mean gap %+.3f%%, %d over +1.5%%", runs, gap/float64(max(runs, 1)), over)
		b.ReportMetric(gap/float64(max(runs, 1)), "mean-gap-%")
	}
}

type cvrpBKS struct {
	routes int
	cost   float64
}

// cvrpBestKnown reads bks.csv (instance, dimension, capacity, cost,
// routes) of the X set.
func cvrpBestKnown(b *testing.B, dir string) map[string]cvrpBKS {
	out := map[string]cvrpBKS{}
	for _, r := range bksRows(b, dir) {
		cost, _ := strconv.ParseFloat(r[3], 64)
		routes := 0
		if len(r) > 4 {
			routes, _ = strconv.Atoi(r[4])
		}
		out[r[0]] = cvrpBKS{routes: routes, cost: cost}
	}
	return out
}

// bksRows reads the rows of dir's bks.csv after its header.
func bksRows(tb testing.TB, dir string) [][]string {
	f, err := os.Open(filepath.Join(dir, "bks.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		tb.Fatalf("bks.csv: %v", err)
	}
	return rows[1:]
}

// solveCVRP plans c for distance alone, with a fleet of twice the
// routes its name gives (at least 10), and checks the plan.
func solveCVRP(b *testing.B, c *vrp.CVRP, name string, seed uint64) (routes int, dist float64) {
	k := 0
	if at := strings.LastIndex(name, "-k"); at >= 0 {
		k, _ = strconv.Atoi(name[at+2:])
	}
	n := len(c.Nodes)
	m := &vrp.Matrix{Size: n, Minutes: make([]float64, n*n), Km: make([]float64, n*n)}
	for i := range n {
		for j := range n {
			m.Km[i*n+j] = c.Dist(i, j)
			m.Minutes[i*n+j] = c.Dist(i, j)
		}
	}
	p := &vrp.Problem{Matrix: m, Goal: vrp.GoalDistance}
	inf := math.Inf(1)
	for range max(2*k, 10) {
		p.Vehicles = append(p.Vehicles, vrp.Vehicle{StartLoc: c.Depot, EndLoc: c.Depot, CapWeight: c.Capacity, CapVolume: inf, CapPackages: inf,
			ShiftEnd: inf, MaxMinutes: inf, MaxKm: inf})
	}
	var loc []int // stop index -> node
	for i, nd := range c.Nodes {
		if i == c.Depot {
			continue
		}
		loc = append(loc, i)
		p.Stops = append(p.Stops, vrp.Stop{Loc: i, Weight: nd.Demand, Late: inf, Priority: 1})
	}
	sol := p.Solve(vrp.Options{TimeLimit: time.Hour, Work: *cvrpWork, Seed: seed})
	if len(sol.Unassigned) > 0 {
		b.Fatalf("%s seed %d: %d unassigned", name, seed, len(sol.Unassigned))
	}
	seen := make([]bool, len(p.Stops))
	for ri, r := range sol.Routes {
		if len(r) == 0 {
			continue
		}
		routes++
		prev, load := c.Depot, 0.0
		for _, s := range r {
			if seen[s] {
				b.Fatalf("%s seed %d: stop %d twice", name, seed, s)
			}
			seen[s] = true
			dist += c.Dist(prev, loc[s])
			load += c.Nodes[loc[s]].Demand
			prev = loc[s]
		}
		dist += c.Dist(prev, c.Depot)
		if load > c.Capacity {
			b.Fatalf("%s seed %d: route %d carries %v over %v", name, seed, ri, load, c.Capacity)
		}
	}
	if i := slices.Index(seen, false); i >= 0 {
		b.Fatalf("%s seed %d: stop %d not served", name, seed, i)
	}
	return routes, dist
}
