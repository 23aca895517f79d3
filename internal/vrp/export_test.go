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

// SolveWithoutBreeding is p.Solve(o) with the crossover of whole plans
// left out, its share of the work still taken from the annealings.
func SolveWithoutBreeding(p *Problem, o Options) Solution {
	o.noBreed = true
	return p.Solve(o)
}

// Child runs two searches of work units each on p (route count
// minimised) with seed, then crosses their best plans until a child
// leaves out no more stops than they do (up to 20 times): the child's
// routes (per vehicle) and stops left out, and the parents' route
// counts; nil routes when no child could be repaired.
func Child(p *Problem, seed uint64, work int64) (routes [][]int, absent int, parents [2]int) {
	p.MinimizeVehicles = true
	t := newTables(p)
	var best [2]*solution
	for i := range best {
		w := newWorker(t, i, splitmix(seed+uint64(i)), time.Now().Add(time.Hour))
		_, best[i] = w.search(budget{work: work, iters: math.MaxInt, until: time.Now().Add(time.Hour)})
		parents[i] = best[i].used
	}
	w := newWorker(t, 2, splitmix(seed+crossSeed), time.Now().Add(time.Hour))
	w.gen = 1 << 40
	var c *solution
	for try := 0; try < 20 && c == nil; try++ {
		c = w.cross(best[0], best[1])
	}
	if c == nil {
		return nil, 0, parents
	}
	routes = make([][]int, len(c.routes))
	for v, r := range c.routes {
		for _, x := range r.stops {
			routes[v] = append(routes[v], int(x))
		}
	}
	return routes, len(c.absent), parents
}

// Annealings runs the first search (the style that spends up to half its
// work on route minimisation) on p, route count minimised, with seed and
// work units, giving the crossover its share as Solve does: how many
// annealings it ran.
func Annealings(p *Problem, seed uint64, work int64) int {
	p.MinimizeVehicles = true
	t := newTables(p)
	w := newWorker(t, 0, splitmix(seed), time.Now().Add(time.Hour))
	w.crossWork = crossBudget(t, work)
	w.crossFrom = time.Now().Add(time.Hour)
	w.search(budget{work: work, iters: ItersPerStop * len(p.Stops), until: time.Now().Add(time.Hour)})
	return w.annealings
}
