package vrp

import (
	"math"
	"time"
)

// RateInstance exposes MeasureRate's instance to the tests.
var RateInstance = rateInstance

// Seeds is how many seeds of full a randomized test runs: all of them,
// or a quarter (at least one) under the race detector.
func Seeds(full int) int { return seeds(full) }

// MinimizeRoutesWork runs the first search's construction and route
// minimisation on p, route count minimised, with seed and share work
// units: the routes it ends with, the work it spent and the route count
// at which it gave up (0 when it did not).
func MinimizeRoutesWork(p *Problem, seed uint64, share int64) (routes int, spent int64, floor int) {
	p.MinimizeVehicles = true
	w := newWorker(newTables(p), 0, splitmix(seed), time.Now().Add(time.Hour))
	s := w.construct()
	from := w.work
	m := w.minimizeRoutes(s, budget{work: w.work + share, iters: math.MaxInt, until: time.Now().Add(time.Hour), fromWork: w.work, from: time.Now()})
	return m.used, w.work - from, w.fleetFloor
}
