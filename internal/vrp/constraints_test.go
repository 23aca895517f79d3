package vrp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// checkPlan verifies a solution of a planar problem without the solver's
// evaluation: every stop once (or unassigned), each route's vehicle has
// every capability its stops need, loads within capacity (beyond it by
// at most Problem.Overload), service within windows after any wait, the
// vehicle's breaks (when it has some) each taken once, in order, inside
// its window, at the place the vehicle is, and the return within the
// shift. Every placing of the breaks is tried: the route passes when
// some placing keeps it on time. It returns the distance.
func checkPlan(pr *vrp.Problem, sol vrp.Solution) (float64, error) {
	seen := make([]bool, len(pr.Stops))
	var total float64
	for v, r := range sol.Routes {
		if len(r) == 0 {
			continue
		}
		ve := pr.Vehicles[v]
		var load float64
		for _, si := range r {
			if seen[si] {
				return 0, fmt.Errorf("stop %d twice", si)
			}
			seen[si] = true
			st := pr.Stops[si]
			if st.Needs&^ve.Has != 0 {
				return 0, fmt.Errorf("vehicle %d (has %b) serves stop %d (needs %b)", v, ve.Has, si, st.Needs)
			}
			load += st.Weight
		}
		if over(load, ve.CapWeight*(1+pr.Overload)) {
			return 0, fmt.Errorf("vehicle %d: load %v over %v", v, load, ve.CapWeight)
		}
		km, ok := 0.0, false
		for _, at := range placings(len(ve.Breaks), len(r)) {
			if d, good := walk(pr, &ve, r, at); good {
				km, ok = d, true
				break
			}
		}
		if !ok {
			return 0, fmt.Errorf("vehicle %d: route %v is late everywhere its breaks may go", v, r)
		}
		total += km
	}
	for i, s := range seen {
		if _, un := sol.Unassigned[i]; s == un {
			return 0, fmt.Errorf("stop %d served %v, unassigned %v", i, s, un)
		}
	}
	return total, nil
}

// placings are every way to take k breaks in order along a route of m
// stops: after how many stops each is taken, never decreasing.
func placings(k, m int) [][]int {
	if k == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, rest := range placings(k-1, m) {
		from := 0
		if len(rest) > 0 {
			from = rest[len(rest)-1]
		}
		for i := from; i <= m; i++ {
			out = append(out, append(append([]int(nil), rest...), i))
		}
	}
	return out
}

// walk drives ve along r with break k after at[k] stops and reports the
// distance and whether every window, break and the shift's end hold.
func walk(pr *vrp.Problem, ve *vrp.Vehicle, r []int, at []int) (float64, bool) {
	x, y, t := ve.StartLat, ve.StartLon, ve.ShiftStart
	km, good := 0.0, true
	rest := func(i int) {
		for k, b := range ve.Breaks {
			if at[k] == i {
				t = math.Max(t, b.Start)
				if over(t+b.Minutes, b.End) {
					good = false
				}
				t += b.Minutes
			}
		}
	}
	for i, si := range r {
		rest(i)
		st := pr.Stops[si]
		d := math.Hypot(st.Lat-x, st.Lon-y)
		km += d
		t = math.Max(t+d, st.Early)
		if over(t, st.Late) {
			good = false
		}
		t += st.Service
		x, y = st.Lat, st.Lon
	}
	rest(len(r))
	d := math.Hypot(ve.EndLat-x, ve.EndLon-y)
	km += d
	if over(t+d, ve.ShiftEnd) {
		good = false
	}
	return km, good
}

// randomProblem is a planar problem of n stops and k vehicles, with
// capabilities (two bits) and one, two or no breaks on each vehicle.
func randomProblem(rng *rand.Rand, n, k int) *vrp.Problem {
	pr := &vrp.Problem{Planar: true}
	for i := 0; i < n; i++ {
		e := rng.Float64() * 300
		s := vrp.Stop{Lat: rng.Float64() * 100, Lon: rng.Float64() * 100, Weight: 1 + float64(rng.IntN(3)), Early: e, Late: e + 30 + rng.Float64()*200,
			Service: 10, Needs: uint64(rng.IntN(4) & rng.IntN(4))}
		pr.Stops = append(pr.Stops, s)
	}
	for v := 0; v < k; v++ {
		ve := vrp.Vehicle{StartLat: 50, StartLon: 50, EndLat: 50, EndLon: 50, CapWeight: 25, CapVolume: math.Inf(1), CapPackages: math.Inf(1),
			ShiftStart: 0, ShiftEnd: 600, MaxMinutes: math.Inf(1), MaxKm: math.Inf(1), Has: uint64(v % 4)}
		switch v % 3 {
		case 0:
			ve.Breaks = []vrp.Break{{Start: 120 + float64(v)*10, End: 300, Minutes: 45}}
		case 1:
			ve.Breaks = []vrp.Break{{Start: 100, End: 220, Minutes: 20}, {Start: 300 + float64(v)*5, End: 420, Minutes: 30}}
		}
		pr.Vehicles = append(pr.Vehicles, ve)
	}
	return pr
}

// TestConstraintsRandom: on random problems with capabilities and one
// or two breaks per vehicle, every plan passes checkPlan and Plan places
// every break inside its window, in order.
func TestConstraintsRandom(t *testing.T) {
	for seed := uint64(1); seed <= uint64(vrp.Seeds(6)); seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		pr := randomProblem(rng, 60, 8)
		sol := pr.Solve(vrp.Options{TimeLimit: 20 * time.Second, Work: 1_000_000, Seed: seed})
		if _, err := checkPlan(pr, sol); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		pl := pr.Plan(sol)
		for _, r := range pl.Routes {
			ve := pr.Vehicles[r.Vehicle]
			if len(r.Breaks) != len(ve.Breaks) {
				t.Errorf("seed %d: vehicle %d takes %d breaks of %d", seed, r.Vehicle, len(r.Breaks), len(ve.Breaks))
				continue
			}
			for k, b := range r.Breaks {
				w := ve.Breaks[k]
				if b.Start < w.Start || over(b.Start+w.Minutes, w.End) || k > 0 && (b.After < r.Breaks[k-1].After || b.Start < r.Breaks[k-1].Start+r.Breaks[k-1].Minutes) {
					t.Errorf("seed %d: vehicle %d's break %d after %d at %v, window %v", seed, r.Vehicle, k, b.After, b.Start, w)
				}
			}
		}
		for si, why := range sol.Unassigned {
			if pr.Stops[si].Needs == 3 && why == "" {
				t.Errorf("seed %d: stop %d unassigned without reason", seed, si)
			}
		}
	}
}

// TestCapabilityCostsDistance: the only vehicle with the stop's
// capability is far away; a solver that ignored capabilities would send
// the near one.
func TestCapabilityCostsDistance(t *testing.T) {
	inf := math.Inf(1)
	v := func(x float64, has uint64) vrp.Vehicle {
		return vrp.Vehicle{StartLat: x, EndLat: x, CapWeight: inf, CapVolume: inf, CapPackages: inf, ShiftEnd: 1000, MaxMinutes: inf, MaxKm: inf, Has: has}
	}
	pr := &vrp.Problem{Planar: true, Vehicles: []vrp.Vehicle{v(0, 0), v(100, 1)},
		Stops: []vrp.Stop{{Lat: 1, Late: inf, Needs: 1}, {Lat: 2, Late: inf}, {Lat: 3, Late: inf, Needs: 2}}}
	sol := pr.Solve(vrp.Options{TimeLimit: 10 * time.Second, Work: 1_000_000})
	if _, err := checkPlan(pr, sol); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(sol.Routes[1], 0) {
		t.Errorf("routes %v: stop 0 needs vehicle 1", sol.Routes)
	}
	if sol.Unassigned[2] != vrp.ReasonCapability {
		t.Errorf("stop 2 needs what no vehicle has: %v", sol.Unassigned)
	}
}

// TestBreakDelaysArrival: the break's window covers the only way to the
// stop before its window closes, so the vehicle rests first and arrives
// later than it could; a plan without the break would arrive at 10.
func TestBreakDelaysArrival(t *testing.T) {
	inf := math.Inf(1)
	ve := vrp.Vehicle{CapWeight: inf, CapVolume: inf, CapPackages: inf, ShiftEnd: 1000, MaxMinutes: inf, MaxKm: inf,
		Breaks: []vrp.Break{{Start: 0, End: 40, Minutes: 30}}}
	pr := &vrp.Problem{Planar: true, Vehicles: []vrp.Vehicle{ve}, Stops: []vrp.Stop{{Lat: 10, Late: 100, Service: 50}}}
	sol := pr.Solve(vrp.Options{TimeLimit: 10 * time.Second, Work: 1_000_000})
	if _, err := checkPlan(pr, sol); err != nil {
		t.Fatal(err)
	}
	pl := pr.Plan(sol)
	if len(pl.Routes) != 1 || pl.Routes[0].Visits[0].Arrive != 40 || len(pl.Routes[0].Breaks) != 1 || pl.Routes[0].Breaks[0] != (vrp.Rest{After: 0, Start: 0, Minutes: 30}) {
		t.Fatalf("plan %+v: the break comes first, the stop at 40", pl)
	}
	// A window too short for the break: the stop cannot be served.
	pr.Vehicles[0].Breaks[0].End = 20
	if ok, why := pr.Servable(0); ok || why != vrp.ReasonBreak {
		t.Errorf("servable %v %v with a break that fits nowhere", ok, why)
	}
}
