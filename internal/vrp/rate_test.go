package vrp_test

import (
	"runtime"
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
