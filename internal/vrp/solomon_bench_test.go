package vrp_test

import (
	"flag"
	"fmt"
	"io"
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

// solomonSeeds lists the seeds BenchmarkSolomonSet solves every instance
// with, comma-separated: -args -solomon.seeds 0,1,2.
var solomonSeeds = flag.String("solomon.seeds", "0", "BenchmarkSolomonSet: comma-separated seeds")

// solomonWork is the work of each search of BenchmarkSolomonSet
// (vrp.Options.Work): by default that of a 2 s limit at
// vrp.WorkPerSecond; -args -solomon.work 130000000 gives the work of a
// 2 s limit on a machine that measures 75 million units a second
// (vrp.MeasureRate, 87 % of it per second of the limit).
// solomonPlans, when set, names a file BenchmarkSolomonSet writes every
// run's plan to (instance, seed, vehicles, distance to the last digit and
// each route's stops), so that two builds' plans can be compared: a
// change that only makes the search faster must leave it the same.
var solomonPlans = flag.String("solomon.plans", "", "BenchmarkSolomonSet: write every plan to this file")

// solomonMatch, when set, is a regular expression BenchmarkSolomonSet
// solves only the instances whose names match (-solomon.match '^(C2|R2|RC2)'):
// a change that touches some classes only is measured on those.
var solomonMatch = flag.String("solomon.match", "", "BenchmarkSolomonSet: solve only the instances whose names match this regular expression")

var solomonWork = flag.Int64("solomon.work", 2*vrp.WorkPerSecond, "BenchmarkSolomonSet: work units per search")

// BenchmarkSolomonSet solves every Solomon instance of ../shared/data
// with minimize_vehicles and the work of a 2 s limit on an idle machine
// (vrp.Options.Work), once per seed of -solomon.seeds, so that its
// figures do not depend on the machine's load (-solomon.work sets
// another budget): per seed and per class
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
	if *solomonMatch != "" {
		re, err := regexp.Compile(*solomonMatch)
		if err != nil {
			b.Fatalf("-solomon.match: %v", err)
		}
		files = slices.DeleteFunc(files, func(f string) bool {
			return !re.MatchString(strings.TrimSuffix(filepath.Base(f), ".txt"))
		})
	}
	seeds := parseSeeds(b, "-solomon.seeds", *solomonSeeds)
	var plans io.Writer = io.Discard
	if *solomonPlans != "" {
		f, err := os.Create(*solomonPlans)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		plans = f
	}
	for b.Loop() {
		at, runs, gap := 0, 0, 0.0
		for _, seed := range seeds {
			sum := solveSolomonSet(b, files, seed, plans)
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

// parseSeeds reads a comma-separated list of seeds given to flag.
func parseSeeds(b *testing.B, flag, list string) []uint64 {
	var seeds []uint64
	for _, f := range strings.Split(list, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", flag, err)
		}
		seeds = append(seeds, s)
	}
	return seeds
}

// classSum is one class's instances, those at the best-known vehicle
// count and the sum of their gaps in percent.
type classSum struct {
	n, at int
	gap   float64
}

// solveSolomonSet solves files with seed and sums them per class.
// Every plan is written to plans.
func solveSolomonSet(b *testing.B, files []string, seed uint64, plans io.Writer) map[string]classSum {
	sum := map[string]classSum{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		in := readSolomon(b, f)
		bksV, bksD := bestKnownOf(b, name)
		pr := in.Problem()
		pr.MinimizeVehicles = true
		sol := pr.Solve(vrp.Options{TimeLimit: time.Hour, Work: *solomonWork, Seed: seed})
		used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
		if err != nil || len(sol.Unassigned) > 0 {
			b.Fatalf("%s seed %d: %v, %d unassigned", name, seed, err, len(sol.Unassigned))
		}
		fmt.Fprintf(plans, "%s seed %d: %d vehicles, %.17g, %v\n", name, seed, used, dist, sol.Routes)
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
