package vrp_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// BenchmarkSolomonSet solves every Solomon instance of ../shared/data
// with minimize_vehicles and the work of a 2 s limit on an idle machine
// (vrp.Options.Work), so that its figures do not depend on the machine's
// load: the instances at the best-known vehicle count, the mean distance
// gap on those, and the CPU the set took; the instances off the best
// known by a vehicle or by more than 1 % are logged. Every plan passes
// checkSolomon.
//
//	go test -run '^$' -bench SolomonSet -benchtime 1x ./internal/vrp/
func BenchmarkSolomonSet(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(sharedData(b, "vrp/solomon"), "*.txt"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no instances: %v", err)
	}
	for b.Loop() {
		at, gap := 0, 0.0
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".txt")
			in := readSolomon(b, f)
			bksV, bksD := bestKnownOf(b, name)
			pr := in.Problem()
			pr.MinimizeVehicles = true
			sol := pr.Solve(vrp.Options{TimeLimit: time.Minute, Work: 2 * vrp.WorkPerSecond})
			used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
			if err != nil || len(sol.Unassigned) > 0 {
				b.Fatalf("%s: %v, %d unassigned", name, err, len(sol.Unassigned))
			}
			if used <= bksV {
				at++
				gap += 100 * (dist - bksD) / bksD
			}
			if g := 100 * (dist - bksD) / bksD; used > bksV || g > 1 {
				b.Logf("%-6s %2d vehicles (best known %2d), %8.2f (%8.2f), %+6.2f%%", name, used, bksV, dist, bksD, g)
			}
		}
		b.ReportMetric(float64(at), "at-best-known-vehicles")
		b.ReportMetric(gap/float64(max(at, 1)), "mean-gap-%")
	}
}
