package vrp_test

import (
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// solomonSeeds lists the seeds BenchmarkSolomonSet solves every instance
// with, comma-separated: -args -solomon.seeds 0,1,2.
var solomonSeeds = flag.String("solomon.seeds", "0", "BenchmarkSolomonSet: comma-separated seeds")

// BenchmarkSolomonSet solves every Solomon instance of ../shared/data
// with minimize_vehicles and the work of a 2 s limit on an idle machine
// (vrp.Options.Work), once per seed of -solomon.seeds, so that its
// figures do not depend on the machine's load: per seed and per class
// (C1, C2, R1, R2, RC1, RC2) the instances at the best-known vehicle
// count and the mean distance gap on those, and over all seeds the same;
// every run is logged, marked with * when it is off the best known by a
// vehicle or by more than 1 % (-v shows every line). Every plan passes
// checkSolomon.
//
//	go test -v -run '^$' -bench SolomonSet -benchtime 1x ./internal/vrp/ -args -solomon.seeds 0,1
func BenchmarkSolomonSet(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(sharedData(b, "vrp/solomon"), "*.txt"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no instances: %v", err)
	}
	var seeds []uint64
	for _, f := range strings.Split(*solomonSeeds, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			b.Fatalf("-solomon.seeds: %v", err)
		}
		seeds = append(seeds, s)
	}
	for b.Loop() {
		at, runs, gap := 0, 0, 0.0
		for _, seed := range seeds {
			sum := solveSolomonSet(b, files, seed)
			for _, c := range []string{"C1", "C2", "R1", "R2", "RC1", "RC2"} {
				x := sum[c]
				b.Logf("seed %d %-3s %d of %d at the best-known vehicle count, mean gap on those %+.2f%%", seed, c, x.at, x.n, x.gap/float64(max(x.at, 1)))
				at, runs, gap = at+x.at, runs+x.n, gap+x.gap
			}
		}
		b.Logf("all seeds: %d of %d runs at the best-known vehicle count, mean gap on those %+.3f%%", at, runs, gap/float64(max(at, 1)))
		b.ReportMetric(float64(at)/float64(len(seeds)), "at-best-known-vehicles")
		b.ReportMetric(gap/float64(max(at, 1)), "mean-gap-%")
	}
}

// classSum is one class's instances, those at the best-known vehicle
// count and the sum of their gaps in percent.
type classSum struct {
	n, at int
	gap   float64
}

// solveSolomonSet solves files with seed and sums them per class.
func solveSolomonSet(b *testing.B, files []string, seed uint64) map[string]classSum {
	sum := map[string]classSum{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		in := readSolomon(b, f)
		bksV, bksD := bestKnownOf(b, name)
		pr := in.Problem()
		pr.MinimizeVehicles = true
		sol := pr.Solve(vrp.Options{TimeLimit: time.Hour, Work: 2 * vrp.WorkPerSecond, Seed: seed})
		used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
		if err != nil || len(sol.Unassigned) > 0 {
			b.Fatalf("%s seed %d: %v, %d unassigned", name, seed, err, len(sol.Unassigned))
		}
		class := strings.TrimRight(name, "0123456789")
		class += name[len(class) : len(class)+1]
		x := sum[class]
		x.n++
		g := 100 * (dist - bksD) / bksD
		if used <= bksV {
			x.at++
			x.gap += g
		}
		sum[class] = x
		mark := ""
		if used > bksV || g > 1 {
			mark = " *"
		}
		b.Logf("seed %d %-6s %2d vehicles (best known %2d), %8.2f (%8.2f), %+6.2f%%%s", seed, name, used, bksV, dist, bksD, g, mark)
	}
	return sum
}
