package vrp_test

import (
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fleethub/fleethub/internal/vrp"
)

// eps absorbs rounding between the checker's arithmetic and the solver's.
const eps = 1e-6

// over reports a > limit beyond rounding, relative to the limit's size.
func over(a, limit float64) bool { return a > limit+eps*math.Max(1, math.Abs(limit)) }

// checkSolomon verifies routes (indexes into in.Customers) against the
// instance itself, without the solver's evaluation: at most in.Vehicles
// routes leave the depot at its ready time and drive at one unit of
// distance per unit of time; every customer is on one route at most, and
// on exactly one unless unassigned; a route's demand is within capacity;
// service begins within each window after any wait; every vehicle is back
// by the depot's due time. It returns the routes used and their distance.
func checkSolomon(in *vrp.Instance, routes [][]int, unassigned int) (used int, dist float64, err error) {
	seen := make([]bool, len(in.Customers))
	served := 0
	for ri, r := range routes {
		if len(r) == 0 {
			continue
		}
		used++
		x, y, t, load := in.Depot.X, in.Depot.Y, in.Depot.Ready, 0.0
		for _, ci := range r {
			if ci < 0 || ci >= len(in.Customers) {
				return 0, 0, fmt.Errorf("route %d: no customer %d", ri, ci)
			}
			if seen[ci] {
				return 0, 0, fmt.Errorf("route %d: customer %d served twice", ri, in.Customers[ci].ID)
			}
			seen[ci] = true
			served++
			c := in.Customers[ci]
			leg := math.Hypot(c.X-x, c.Y-y)
			dist += leg
			t = math.Max(t+leg, c.Ready)
			if over(t, c.Due) {
				return 0, 0, fmt.Errorf("route %d: customer %d begins at %.3f, due %v", ri, c.ID, t, c.Due)
			}
			t += c.Service
			load += c.Demand
			x, y = c.X, c.Y
		}
		if over(load, in.Capacity) {
			return 0, 0, fmt.Errorf("route %d: load %v over capacity %v", ri, load, in.Capacity)
		}
		leg := math.Hypot(in.Depot.X-x, in.Depot.Y-y)
		dist += leg
		if over(t+leg, in.Depot.Due) {
			return 0, 0, fmt.Errorf("route %d: back at %.3f, depot closes at %v", ri, t+leg, in.Depot.Due)
		}
	}
	if used > in.Vehicles {
		return 0, 0, fmt.Errorf("%d routes for %d vehicles", used, in.Vehicles)
	}
	if served+unassigned != len(in.Customers) {
		return 0, 0, fmt.Errorf("%d served and %d unassigned of %d customers", served, unassigned, len(in.Customers))
	}
	return used, dist, nil
}

// readSolomon parses the instance at path.
func readSolomon(tb testing.TB, path string) *vrp.Instance {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	in, err := vrp.ParseSolomon(f)
	if err != nil {
		tb.Fatal(err)
	}
	return in
}
