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
// every capability its stops need, loads within capacity, service within
// windows after any wait, the vehicle's break (when it has one) taken
// once, inside its window, at the place the vehicle is, and the return
// within the shift. The break's place is tried everywhere: the route
// passes when some place keeps it on time. It returns the distance.
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
		if over(load, ve.CapWeight) {
			return 0, fmt.Errorf("vehicle %d: load %v over %v", v, load, ve.CapWeight)
		}
		places := []int{-1}
		if ve.BreakMinutes > 0 {
			places = places[:0]
			for k := 0; k <= len(r); k++ {
				places = append(places, k)
			}
		}
		var km float64
		ok := false
		for _, brk := range places {
			x, y, t := ve.StartLat, ve.StartLon, ve.ShiftStart
			km = 0
			good := true
			rest := func() {
				t = math.Max(t, ve.BreakStart)
				if over(t+ve.BreakMinutes, ve.BreakEnd) {
					good = false
				}
				t += ve.BreakMinutes
			}
			for i, si := range r {
				if i == brk {
					rest()
				}
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
			if brk == len(r) {
				rest()
			}
			d := math.Hypot(ve.EndLat-x, ve.EndLon-y)
			km += d
			if over(t+d, ve.ShiftEnd) {
				good = false
			}
			if good {
				ok = true
				break
			}
		}
		if !ok {
			return 0, fmt.Errorf("vehicle %d: route %v is late everywhere its break may go", v, r)
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

// randomProblem is a planar problem of n stops and k vehicles, with
// capabilities (two bits) and breaks on some vehicles.
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
		if v%2 == 0 {
			ve.BreakStart, ve.BreakEnd, ve.BreakMinutes = 120+float64(v)*10, 300, 45
		}
		pr.Vehicles = append(pr.Vehicles, ve)
	}
	return pr
}

// TestConstraintsRandom: on random problems with capabilities and
// breaks, every plan passes checkPlan and Plan places each break inside
// its window.
func TestConstraintsRandom(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		pr := randomProblem(rng, 60, 8)
		sol := pr.Solve(vrp.Options{TimeLimit: 20 * time.Second, Work: 1_000_000, Seed: seed})
		if _, err := checkPlan(pr, sol); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		pl := pr.Plan(sol)
		for _, r := range pl.Routes {
			ve := pr.Vehicles[r.Vehicle]
			if ve.BreakMinutes == 0 {
				if r.BreakAfter >= 0 {
					t.Errorf("seed %d: vehicle %d without a break has one", seed, r.Vehicle)
				}
				continue
			}
			if r.BreakAfter < 0 || r.BreakStart < ve.BreakStart || over(r.BreakStart+ve.BreakMinutes, ve.BreakEnd) {
				t.Errorf("seed %d: vehicle %d's break after %d at %v, window %v–%v", seed, r.Vehicle, r.BreakAfter, r.BreakStart, ve.BreakStart, ve.BreakEnd)
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
		BreakStart: 0, BreakEnd: 40, BreakMinutes: 30}
	pr := &vrp.Problem{Planar: true, Vehicles: []vrp.Vehicle{ve}, Stops: []vrp.Stop{{Lat: 10, Late: 100, Service: 50}}}
	sol := pr.Solve(vrp.Options{TimeLimit: 10 * time.Second, Work: 1_000_000})
	if _, err := checkPlan(pr, sol); err != nil {
		t.Fatal(err)
	}
	pl := pr.Plan(sol)
	if len(pl.Routes) != 1 || pl.Routes[0].Visits[0].Arrive != 40 || pl.Routes[0].BreakAfter != 0 || pl.Routes[0].BreakStart != 0 {
		t.Fatalf("plan %+v: the break comes first, the stop at 40", pl)
	}
	// A window too short for the break: the stop cannot be served.
	pr.Vehicles[0].BreakEnd = 20
	pr.Vehicles[0].BreakMinutes = 30
	if ok, why := pr.Servable(0); ok || why != vrp.ReasonBreak {
		t.Errorf("servable %v %v with a break that fits nowhere", ok, why)
	}
}
