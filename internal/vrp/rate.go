package vrp

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/fleethub/fleethub/internal/cputime"
)

// RateWork is the work of one measuring run of MeasureRate: 40 to 120
// ms of one core on the machines measured so far.
const RateWork = 2_000_000

// rateRuns is how many runs MeasureRate times; the median counts. One
// VM measured 33 to 52 million units a second from one run to the next
// while idle.
const rateRuns = 5

// MeasureRate measures how much search work (the units of Options.Work)
// one core of this machine does in a second of its own processor time:
// one worker searches a fixed instance (rateInstance) for work units,
// rateRuns times with as many seeds, on a goroutine locked to its
// thread, timed by that thread's CPU clock, and the median run counts. Other work on the machine takes the
// processor from the thread but does not count against it, so a busy
// machine measures about as an idle one. It returns 0 where a thread's
// processor time cannot be read (outside Linux).
//
// Machines differ: one core did 33 to 35 million units a second on one
// 2-vCPU VM and 71.6 million on another of the same kind the same
// evening (docs/performance.md), so a budget in work per second of the
// limit is right only when it is measured where the search runs.
func MeasureRate(work int64) float64 {
	p := rateInstance().Problem()
	p.MinimizeVehicles = true
	t := newTables(p)
	rates := make([]float64, rateRuns)
	for run := range rates {
		rates[run] = measureOnce(t, work, uint64(run+1))
	}
	slices.Sort(rates)
	return rates[rateRuns/2]
}

func measureOnce(t *tables, work int64, seed uint64) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := cputime.Thread()
	if !ok {
		return 0
	}
	w := newWorker(t, 0, splitmix(seed), time.Now().Add(time.Hour))
	w.search(budget{work: work, iters: math.MaxInt32, until: time.Now().Add(time.Hour)})
	c1, _ := cputime.Thread()
	if c1 <= c0 {
		return 0
	}
	return float64(w.work) / (c1 - c0).Seconds()
}

// rateInstance is the instance MeasureRate searches: 100 customers
// placed at random (a fixed seed) on a 100 × 100 square around a central
// depot, with windows of 30 to 60 time units that each vehicle can reach and demands of 5 to 25
// against a capacity of 200, as in Solomon's R1 class, the vehicles'
// count to be minimised.
func rateInstance() *Instance {
	rng := rand.New(rand.NewPCG(7, 11))
	in := &Instance{Name: "rate", Vehicles: 25, Capacity: 200, Depot: Customer{X: 50, Y: 50, Due: 230}}
	for i := range 100 {
		c := Customer{ID: i + 1, X: rng.Float64() * 100, Y: rng.Float64() * 100, Demand: float64(5 + rng.IntN(21)), Service: 10}
		back := math.Hypot(c.X-50, c.Y-50)
		// reachable and back by the horizon (230) with the service (10)
		c.Ready = back + rng.Float64()*(160-2*back)
		c.Due = c.Ready + 30 + rng.Float64()*30
		in.Customers = append(in.Customers, c)
	}
	return in
}
