package vrp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomProblem is a planar problem of n stops with random windows and
// demands and two vehicles of different shifts.
func randomProblem(rng *rand.Rand, n int) *Problem {
	inf := math.Inf(1)
	p := &Problem{Planar: true}
	for i := 0; i < n; i++ {
		e := rng.Float64() * 300
		p.Stops = append(p.Stops, Stop{Lat: rng.Float64() * 100, Lon: rng.Float64() * 100, Weight: float64(rng.IntN(10)),
			Early: e, Late: e + 30 + rng.Float64()*400, Service: float64(rng.IntN(15))})
	}
	p.Vehicles = []Vehicle{
		{StartLat: 50, StartLon: 50, EndLat: 50, EndLon: 50, CapWeight: 60, CapVolume: inf, CapPackages: inf, ShiftEnd: 1000, MaxMinutes: inf, MaxKm: inf},
		{StartLat: 10, StartLon: 90, EndLat: 20, EndLon: 20, CapWeight: 40, CapVolume: inf, CapPackages: inf, ShiftStart: 100, ShiftEnd: 800, MaxMinutes: 600, MaxKm: 400},
	}
	return p
}

// profiled is p, a planar problem, as a matrix problem whose vehicles
// travel by profiles in turn: Matrix holds the planar distances and
// times, each further profile is slower and longer by its own random
// asymmetric factors.
func profiled(rng *rand.Rand, p *Problem, profiles int) *Problem {
	var pts []place
	for i := range p.Stops {
		p.Stops[i].Loc = len(pts)
		pts = append(pts, p.Stops[i].place())
	}
	for v := range p.Vehicles {
		ve := &p.Vehicles[v]
		ve.StartLoc, ve.EndLoc = len(pts), len(pts)+1
		pts = append(pts, ve.start(), ve.finish())
		ve.Profile = v % profiles
	}
	n := len(pts)
	for k := 0; k < profiles; k++ {
		m := &Matrix{Size: n, Km: make([]float64, n*n), Minutes: make([]float64, n*n)}
		for i := range pts {
			for j := range pts {
				d := math.Hypot(pts[i].lat-pts[j].lat, pts[i].lon-pts[j].lon)
				if k > 0 {
					m.Km[i*n+j], m.Minutes[i*n+j] = d*(1+rng.Float64()/4), d*(1+rng.Float64())
					continue
				}
				m.Km[i*n+j], m.Minutes[i*n+j] = d, d
			}
		}
		if k == 0 {
			p.Matrix = m
		} else {
			p.Profiles = append(p.Profiles, m)
		}
	}
	return p
}

// TestCheckAgreesWithEval: the constant-time check accepts an insertion
// exactly when Eval finds the longer route feasible, prices it as the
// difference of the routes' costs, and a route extended in place equals
// one built from scratch; in every other round the vehicles travel by
// matrices of their own (Vehicle.Profile), every goal is tried, and in
// every third round the vehicles have cost models of their own.
func TestCheckAgreesWithEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		p := randomProblem(rng, 12)
		if round%2 == 1 {
			p = profiled(rng, p, 2)
		}
		p.Goal = Goal(rng.IntN(5))
		p.Weights = Weights{Time: rng.Float64(), Fuel: rng.Float64(), Cost: rng.Float64()}
		if round%3 == 0 {
			p.Vehicles[1].Costs = &Costs{FuelPerKm: rng.Float64() / 2, PerKm: rng.Float64(), PerHour: 50 * rng.Float64()}
		}
		tb := newTables(p)
		for v := range p.Vehicles {
			r := tb.empty[v]
			gen := uint64(round + 1)
			for _, c := range rng.Perm(len(p.Stops)) {
				c := int32(c)
				if !tb.fits(r, c) {
					continue
				}
				best, bestPos := math.Inf(1), -1
				for i := 0; i <= len(r.stops); i++ {
					cand := append(append(append([]int{}, ints(r.stops[:i])...), int(c)), ints(r.stops[i:])...)
					ev := p.Eval(v, cand)
					d, why := tb.check(r, c, i)
					if ev.OK != (why == "") {
						t.Fatalf("round %d vehicle %d: insert %d at %d: check %q, eval %v (%s)", round, v, c, i, why, ev.OK, ev.Why)
					}
					if ev.OK {
						if want := tb.newRoute(int32(v), int32s(cand)).cost - r.cost; math.Abs(d-want) > 1e-9 {
							t.Fatalf("delta %v, want %v", d, want)
						}
						if d < best {
							best, bestPos = d, i
						}
					}
				}
				if bestPos < 0 {
					continue
				}
				r = tb.insert(r, c, bestPos, gen, nil)
				fresh := tb.newRoute(int32(v), append([]int32(nil), r.stops...))
				if !same(r, fresh) {
					t.Fatalf("in place %+v\nfresh %+v", r, fresh)
				}
			}
		}
	}
}

func same(a, b *route) bool {
	near := func(x, y float64) bool { return x == y || math.Abs(x-y) < 1e-9 }
	if len(a.a) != len(b.a) || len(a.z) != len(b.z) || !near(a.km, b.km) || !near(a.cost, b.cost) || a.load != b.load {
		return false
	}
	for i := range a.a {
		if !near(a.a[i], b.a[i]) || !near(a.z[i], b.z[i]) {
			return false
		}
	}
	return true
}

func ints(s []int32) []int {
	out := make([]int, len(s))
	for i, x := range s {
		out[i] = int(x)
	}
	return out
}

func int32s(s []int) []int32 {
	out := make([]int32, len(s))
	for i, x := range s {
		out[i] = int32(x)
	}
	return out
}

// TestBreakRoutesAgreeWithEval: with one to three breaks per vehicle, a
// route built from scratch is feasible exactly when Eval finds places
// for the breaks, Eval agrees with a search of every placing
// (restExhaustive), and an insertion the constant-time check accepts is
// one Eval accepts (the check tries the breaks only beside the new stop,
// so it may refuse what other places of the breaks would allow).
func TestBreakRoutesAgreeWithEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	accepted, rounds := 0, seeds(200)
	for round := range rounds {
		p := randomProblem(rng, 12)
		if round%2 == 1 {
			p = profiled(rng, p, 2)
		}
		for v := range p.Vehicles {
			ve := &p.Vehicles[v]
			from := ve.ShiftStart
			for k := 0; k < 1+(round+v)%3; k++ {
				var b Break
				b.Start = from + rng.Float64()*200
				b.Minutes = 15 + rng.Float64()*45
				b.End = b.Start + b.Minutes + rng.Float64()*200
				ve.Breaks = append(ve.Breaks, b)
				from = b.Start
			}
		}
		tb := newTables(p)
		for v := range p.Vehicles {
			r := tb.empty[v]
			for _, c := range rng.Perm(len(p.Stops)) {
				c := int32(c)
				if !tb.fits(r, c) {
					continue
				}
				for i := 0; i <= len(r.stops); i++ {
					cand := append(append(append([]int{}, ints(r.stops[:i])...), int(c)), ints(r.stops[i:])...)
					ev := p.Eval(v, cand)
					built := tb.newRoute(int32(v), int32s(cand))
					if ok := tb.feasible(built) && built.km <= tb.maxKm[v]+tol; ok != ev.OK {
						t.Fatalf("round %d vehicle %d: %v built feasible %v, eval %v (%s)", round, v, cand, ok, ev.OK, ev.Why)
					}
					if ok, back := restExhaustive(p, v, cand); ok != ev.OK || ok && math.Abs(back-(ev.Minutes+p.Vehicles[v].ShiftStart)) > 1e-6 {
						t.Fatalf("round %d vehicle %d: %v every placing: %v back at %v; eval %v back at %v", round, v, cand, ok, back, ev.OK, ev.Minutes+p.Vehicles[v].ShiftStart)
					}
					if _, why := tb.check(r, c, i); why == "" {
						accepted++
						if !ev.OK {
							t.Fatalf("round %d vehicle %d: insert %d at %d: check accepts, eval %s", round, v, c, i, ev.Why)
						}
						r = tb.insert(r, c, i, 1, nil)
						break
					}
				}
			}
		}
	}
	if accepted < 5*rounds/2 {
		t.Errorf("only %d insertions accepted: the test exercises little", accepted)
	}
}

// restExhaustive tries every placing of vehicle v's breaks along route,
// in order (after how many stops each is taken), by walking the route
// with timeline, and reports whether one is on time and the soonest
// return of those that are.
func restExhaustive(p *Problem, v int, route []int) (bool, float64) {
	ve := &p.Vehicles[v]
	at := make([]int, len(ve.Breaks))
	ok, best := false, math.Inf(1)
	var try func(k, from int)
	try = func(k, from int) {
		if k == len(at) {
			if s := p.timeline(ve, route, append([]int(nil), at...)); s.OK && s.Minutes+ve.ShiftStart < best {
				ok, best = true, s.Minutes+ve.ShiftStart
			}
			return
		}
		for i := from; i <= len(route); i++ {
			at[k] = i
			try(k+1, i)
		}
	}
	try(0, 0)
	return ok, best
}
