package vrp_test

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// The measuring instance is solvable, and the rate is a rate: a run of
// twice the work takes about twice the processor time, so the two
// measure within a factor of two of each other (a bound that allows a
// loaded machine, not a timing assertion on this one).
func TestMeasureRate(t *testing.T) {
	if runtime.GOOS != "linux" {
		if r := vrp.MeasureRate(vrp.RateWork); r != 0 {
			t.Fatalf("rate %v without a thread clock", r)
		}
		t.Skip("a thread's processor time is read on Linux only")
	}
	a, b := vrp.MeasureRate(vrp.RateWork/4), vrp.MeasureRate(vrp.RateWork/2)
	if a <= 0 || b <= 0 {
		t.Fatalf("rates %v and %v", a, b)
	}
	if a > 2*b || b > 2*a {
		t.Fatalf("rate %.0f/s at one work, %.0f/s at twice it", a, b)
	}
	pr := vrp.RateInstance().Problem()
	pr.MinimizeVehicles = true
	sol := pr.Solve(vrp.Options{TimeLimit: time.Hour, Work: vrp.RateWork, Seed: 1})
	if len(sol.Unassigned) > 0 {
		t.Fatalf("%d customers of the measuring instance left out", len(sol.Unassigned))
	}
}

// BenchmarkMeasureRate runs MeasureRate, the server's calibration, and
// reports the work units a core did per second of its processor time
// (the median of its runs, then the median over b.N, and the highest of
// those: on a busy machine the least disturbed): a change that makes a
// unit of work cheaper raises it, and the server gives every request
// that much more search for its time limit.
//
//	go test -run '^$' -bench MeasureRate -benchtime 20x ./internal/vrp/
func BenchmarkMeasureRate(b *testing.B) {
	var rates []float64
	for b.Loop() {
		rates = append(rates, vrp.MeasureRate(vrp.RateWork))
	}
	slices.Sort(rates)
	b.ReportMetric(rates[len(rates)/2], "units/cpu-s")
	b.ReportMetric(rates[len(rates)-1], "best-units/cpu-s")
}
