package vrp_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// TestSolveFixture solves the project's own 12-customer instance and
// checks the plan with checkSolomon, not with the solver's bookkeeping.
func TestSolveFixture(t *testing.T) {
	in := readSolomon(t, "testdata/fh12.txt")
	pr := in.Problem()
	sol := pr.Solve(vrp.Options{TimeLimit: time.Second})
	if len(sol.Unassigned) != 0 {
		t.Errorf("unassigned %v", sol.Unassigned)
	}
	used, dist, err := checkSolomon(in, sol.Routes, len(sol.Unassigned))
	if err != nil {
		t.Fatal(err)
	}
	if dist > sol.InitialKm+eps {
		t.Errorf("local search lengthened the plan: %.2f after %.2f", dist, sol.InitialKm)
	}
	pl := pr.Plan(sol)
	if math.Abs(pl.Km-dist) > eps || pl.Served != len(in.Customers) || len(pl.Routes) != used {
		t.Errorf("plan: %.3f km over %d routes serving %d; checker: %.3f over %d", pl.Km, len(pl.Routes), pl.Served, dist, used)
	}
	t.Logf("%s: %d vehicles, distance %.2f (first plan %.2f)", in.Name, used, dist, sol.InitialKm)
}

// TestSolveReasons checks the reason given for a stop no vehicle takes.
func TestSolveReasons(t *testing.T) {
	inf := math.Inf(1)
	vehicle := func() vrp.Vehicle {
		return vrp.Vehicle{CapWeight: 10, CapVolume: inf, CapPackages: inf, ShiftStart: 0, ShiftEnd: 100, MaxMinutes: inf, MaxKm: inf}
	}
	stop := vrp.Stop{Lat: 3, Lon: 4, Weight: 1, Late: inf} // 5 from the depot
	for _, tc := range []struct {
		name  string
		late  bool
		stop  func(*vrp.Stop)
		fleet func(*vrp.Vehicle)
		want  vrp.Reason // "" when served
	}{
		{name: "fits"},
		{name: "capacity", stop: func(s *vrp.Stop) { s.Weight = 11 }, want: vrp.ReasonCapacity},
		{name: "packages", stop: func(s *vrp.Stop) { s.Packages = 1 }, fleet: func(v *vrp.Vehicle) { v.CapPackages = 0 }, want: vrp.ReasonCapacity},
		{name: "window", stop: func(s *vrp.Stop) { s.Late = 4 }, want: vrp.ReasonTimeWindow},
		{name: "window allowing late", late: true, stop: func(s *vrp.Stop) { s.Late = 4 }},
		{name: "wait then serve", stop: func(s *vrp.Stop) { s.Early, s.Late = 50, 60 }},
		{name: "shift end", stop: func(s *vrp.Stop) { s.Service = 95 }, want: vrp.ReasonShiftEnd},
		{name: "route distance", fleet: func(v *vrp.Vehicle) { v.MaxKm = 9 }, want: vrp.ReasonRouteLimits},
		{name: "route time", fleet: func(v *vrp.Vehicle) { v.MaxMinutes = 9 }, want: vrp.ReasonRouteLimits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, v := stop, vehicle()
			if tc.stop != nil {
				tc.stop(&s)
			}
			if tc.fleet != nil {
				tc.fleet(&v)
			}
			pr := &vrp.Problem{Stops: []vrp.Stop{s}, Vehicles: []vrp.Vehicle{v}, Planar: true, AllowLate: tc.late}
			sol := pr.Solve(vrp.Options{TimeLimit: time.Second})
			if got := sol.Unassigned[0]; got != tc.want {
				t.Fatalf("reason %q, want %q", got, tc.want)
			}
			pl := pr.Plan(sol)
			if tc.want != "" {
				if len(pl.Unassigned) != 1 || pl.Unassigned[0].Reason != tc.want || len(pl.Routes) != 0 {
					t.Fatalf("plan %+v", pl)
				}
				return
			}
			if len(pl.Routes) != 1 || pl.Km != 10 || pl.Served != 1 {
				t.Fatalf("plan %+v", pl)
			}
			vis := pl.Routes[0].Visits[0]
			if vis.Arrive != 5 || vis.Depart != math.Max(5, s.Early)+s.Service {
				t.Errorf("visit %+v", vis)
			}
			if wantOnTime := !tc.late; (pl.OnTime == 1) != wantOnTime {
				t.Errorf("on time %d", pl.OnTime)
			}
		})
	}
}

// TestPlanCost checks the road and cost models on one route of the API's
// kind: 1 km east of a depot at the equator, and back.
func TestPlanCost(t *testing.T) {
	inf := math.Inf(1)
	lon := 1 / (vrp.Detour * 6371.0088 * math.Pi / 180) // 1 road km of longitude
	pr := &vrp.Problem{
		Stops:    []vrp.Stop{{Lon: lon, Late: inf, Service: 5, Packages: 2}},
		Vehicles: []vrp.Vehicle{{CapWeight: inf, CapVolume: inf, CapPackages: inf, ShiftStart: 480, ShiftEnd: 1080, MaxMinutes: inf, MaxKm: inf}},
	}
	pl := pr.Plan(pr.Solve(vrp.Options{TimeLimit: time.Second}))
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	drive := 2 / vrp.SpeedKmh * 60 // 3 minutes
	if !near(pl.Km, 2) || !near(pl.Minutes, drive+5) || !near(pl.Fuel, 0.24) ||
		!near(pl.Cost, 0.24*vrp.FuelPrice+(drive+5)/60*vrp.DriverPerHour) || pl.Efficiency != 1 || pl.Compliance != 100 {
		t.Errorf("plan %+v", pl)
	}
	if r := pl.Routes[0]; !near(r.Efficiency, 5/(drive+5)) || !near(r.Visits[0].Arrive, 480+drive/2) {
		t.Errorf("route %+v", r)
	}
}

// TestCheckSolomonRejects makes sure the checker that judges the solver
// refuses broken plans of the fixture, each for its own reason.
func TestCheckSolomonRejects(t *testing.T) {
	for _, tc := range []struct {
		name       string
		routes     [][]int // indexes of customers: 0 is customer 1
		unassigned int
		horizon    float64 // the depot's due time when not 0
		want       string
	}{
		{"served twice", [][]int{{0, 1}, {1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}, 0, 0, "served twice"},
		{"missing", [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}, 0, 0, "9 served and 0 unassigned"},
		{"over capacity", [][]int{{3, 0, 1, 2, 6}}, 7, 0, "over capacity"},      // 15+10+20+10+10 > 60
		{"window", [][]int{{2, 1, 0}}, 9, 0, "customer 1 begins"},               // customer 1 is due at 100
		{"horizon", [][]int{{11}}, 11, 270, "depot closes"},                     // customer 12 ends at 260, 38 from the depot
		{"too many routes", [][]int{{0}, {1}, {2}, {3}, {4}}, 7, 0, "5 routes"}, // 4 vehicles
		{"no such customer", [][]int{{12}}, 11, 0, "no customer 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := readSolomon(t, "testdata/fh12.txt")
			if tc.horizon != 0 {
				in.Depot.Due = tc.horizon
			}
			_, _, err := checkSolomon(in, tc.routes, tc.unassigned)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestSolveRepeatable: the same problem and seed give the same routes,
// and other seeds are searches of their own whose plans still pass the
// checker. The searches end on a small work budget long before their
// generous time limit, so the clock never decides, however busy the
// machine.
func TestSolveRepeatable(t *testing.T) {
	in := readSolomon(t, "testdata/fh12.txt")
	pr := in.Problem()
	pr.MinimizeVehicles = true
	opts := vrp.Options{TimeLimit: time.Minute, Work: 2_000_000, Seed: 42}
	a, b := pr.Solve(opts), pr.Solve(opts)
	if a.Cut || b.Cut {
		t.Fatal("the clock cut a search that a work budget should have ended")
	}
	if !reflect.DeepEqual(a.Routes, b.Routes) || a.InitialKm != b.InitialKm {
		t.Errorf("seed 42 twice:\n%v\n%v", a.Routes, b.Routes)
	}
	// Seeds change the searches: with a budget that ends them soon after
	// construction, whose insertion order is random, some seed plans
	// otherwise.
	opts.Work = 1
	first := pr.Solve(opts)
	differs := false
	for seed := uint64(0); seed < 16 && !differs; seed++ {
		opts.Seed = seed
		c := pr.Solve(opts)
		if _, _, err := checkSolomon(in, c.Routes, len(c.Unassigned)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		differs = !reflect.DeepEqual(c.Routes, first.Routes)
	}
	if !differs {
		t.Errorf("16 seeds gave the plan of seed 42: %v", first.Routes)
	}
}

// TestSolvePriorities: with room for half the stops, the urgent ones are
// served and the low ones are left out with their reason.
func TestSolvePriorities(t *testing.T) {
	inf := math.Inf(1)
	pr := &vrp.Problem{Planar: true, Vehicles: []vrp.Vehicle{{CapWeight: 4, CapVolume: inf, CapPackages: inf, ShiftEnd: 1000, MaxMinutes: inf, MaxKm: inf}}}
	for i := 0; i < 8; i++ {
		prio := 0
		if i%2 == 1 {
			prio = 3
		}
		pr.Stops = append(pr.Stops, vrp.Stop{Lat: float64(i + 1), Weight: 1, Late: inf, Priority: prio})
	}
	sol := pr.Solve(vrp.Options{TimeLimit: 200 * time.Millisecond})
	for _, s := range sol.Routes[0] {
		if s%2 == 0 {
			t.Errorf("low-priority stop %d served, route %v", s, sol.Routes[0])
		}
	}
	if len(sol.Unassigned) != 4 {
		t.Fatalf("unassigned %v", sol.Unassigned)
	}
	for s, why := range sol.Unassigned {
		if s%2 == 1 || why != vrp.ReasonCapacity {
			t.Errorf("stop %d unassigned for %s", s, why)
		}
	}
}

// TestSolveProfiles: vehicles of two profiles travel by their own
// matrices: every route of the plan is timed and measured by its
// vehicle's matrix, walked here from the problem alone.
func TestSolveProfiles(t *testing.T) {
	inf := math.Inf(1)
	const n = 8 // locations: the depot 0, the stops 1..n-1 on a line
	line := func(kmPer, minPer float64) *vrp.Matrix {
		m := &vrp.Matrix{Size: n, Km: make([]float64, n*n), Minutes: make([]float64, n*n)}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				d := math.Abs(float64(i - j))
				m.Km[i*n+j], m.Minutes[i*n+j] = d*kmPer, d*minPer
			}
		}
		return m
	}
	pr := &vrp.Problem{Matrix: line(1, 1), Profiles: []*vrp.Matrix{line(1.5, 4)}}
	for i := 1; i < n; i++ {
		pr.Stops = append(pr.Stops, vrp.Stop{Loc: i, Weight: 1, Late: inf, Service: 2})
	}
	for k := 0; k < 2; k++ {
		pr.Vehicles = append(pr.Vehicles, vrp.Vehicle{CapWeight: 4, CapVolume: inf, CapPackages: inf, ShiftStart: 60, ShiftEnd: 600,
			MaxMinutes: inf, MaxKm: inf, Profile: k})
	}
	pl := pr.Plan(pr.Solve(vrp.Options{TimeLimit: time.Minute, Work: 1_000_000}))
	if len(pl.Routes) != 2 || pl.Served != n-1 {
		t.Fatalf("plan %+v", pl)
	}
	for _, r := range pl.Routes {
		m := pr.Matrix
		if pr.Vehicles[r.Vehicle].Profile == 1 {
			m = pr.Profiles[0]
		}
		at, clock, km := 0, 60.0, 0.0
		for _, vis := range r.Visits {
			loc := pr.Stops[vis.Stop].Loc
			clock += m.Minutes[at*n+loc]
			km += m.Km[at*n+loc]
			if math.Abs(vis.Arrive-clock) > 1e-9 {
				t.Errorf("vehicle %d: stop %d arrives at %v, its matrix says %v", r.Vehicle, vis.Stop, vis.Arrive, clock)
			}
			clock += 2
			at = loc
		}
		clock += m.Minutes[at*n]
		km += m.Km[at*n]
		if math.Abs(r.Minutes-(clock-60)) > 1e-9 || math.Abs(r.Km-km) > 1e-9 {
			t.Errorf("vehicle %d: %v min and %v km, its matrix says %v and %v", r.Vehicle, r.Minutes, r.Km, clock-60, km)
		}
	}
}

// TestSolveReasonsAmongStops checks the reason of stops left out beside
// a route that does serve one: the limit that binds the route, not the
// windows of stops that have none.
func TestSolveReasonsAmongStops(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name  string
		fleet func(*vrp.Vehicle)
		want  vrp.Reason
	}{
		{name: "shift end", fleet: func(v *vrp.Vehicle) { v.ShiftEnd = 12 }, want: vrp.ReasonShiftEnd},
		{name: "route time", fleet: func(v *vrp.Vehicle) { v.MaxMinutes = 12 }, want: vrp.ReasonRouteLimits},
		{name: "served stops' windows", want: vrp.ReasonTimeWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := vrp.Vehicle{CapWeight: inf, CapVolume: inf, CapPackages: inf, ShiftEnd: 100, MaxMinutes: inf, MaxKm: inf}
			if tc.fleet != nil {
				tc.fleet(&v)
			}
			// Three stops 5 from the depot, 7.07 or 10 from each other.
			stops := []vrp.Stop{{Lat: 0, Lon: 5, Late: inf}, {Lat: 5, Lon: 0, Late: inf}, {Lat: -5, Lon: 0, Late: inf}}
			left := 2
			if tc.want == vrp.ReasonTimeWindow {
				// Two urgent stops due on arrival, 5 and 6 from the
				// depot, are served; the third fits neither before them
				// (their windows) nor after them (back at 18.8, after
				// the shift's end): two refusals in three are windows.
				stops[0].Priority, stops[0].Late = 3, 5
				stops[1] = vrp.Stop{Lat: 0, Lon: 6, Late: 6, Priority: 3}
				v.ShiftEnd = 18
				left = 1
			}
			pr := &vrp.Problem{Stops: stops, Vehicles: []vrp.Vehicle{v}, Planar: true}
			sol := pr.Solve(vrp.Options{TimeLimit: time.Second})
			if len(sol.Unassigned) != left {
				t.Fatalf("routes %v, unassigned %v", sol.Routes, sol.Unassigned)
			}
			for i, why := range sol.Unassigned {
				if why != tc.want {
					t.Errorf("stop %d: reason %q, want %q (routes %v)", i, why, tc.want, sol.Routes)
				}
			}
		})
	}
}

// TestServableReasonOfTheFleet: a stop no vehicle can serve on a route of
// its own is refused for what most vehicles refuse it with (the earliest
// on a tie), not for whichever vehicle came last; missing_capability only
// when no vehicle provides the stop's needs. Refusals tells each
// vehicle's.
func TestServableReasonOfTheFleet(t *testing.T) {
	inf := math.Inf(1)
	const cold = 1
	veh := func(edit func(*vrp.Vehicle)) vrp.Vehicle {
		v := vrp.Vehicle{CapWeight: 10, CapVolume: inf, CapPackages: inf, ShiftStart: 0, ShiftEnd: 100, MaxMinutes: inf, MaxKm: inf, Has: cold}
		edit(&v)
		return v
	}
	small := func(v *vrp.Vehicle) { v.CapWeight = 1 }
	short := func(v *vrp.Vehicle) { v.MaxKm = 9 }
	warm := func(v *vrp.Vehicle) { v.Has = 0 }
	for _, tc := range []struct {
		name  string
		fleet []func(*vrp.Vehicle)
		want  vrp.Reason
		each  []vrp.Reason
	}{
		{"all alike", []func(*vrp.Vehicle){small, small}, vrp.ReasonCapacity, []vrp.Reason{vrp.ReasonCapacity, vrp.ReasonCapacity}},
		{"most, last differs", []func(*vrp.Vehicle){small, small, short}, vrp.ReasonCapacity,
			[]vrp.Reason{vrp.ReasonCapacity, vrp.ReasonCapacity, vrp.ReasonRouteLimits}},
		{"tie: the earliest", []func(*vrp.Vehicle){short, small}, vrp.ReasonRouteLimits, []vrp.Reason{vrp.ReasonRouteLimits, vrp.ReasonCapacity}},
		{"lacking the capability counts only when all lack it", []func(*vrp.Vehicle){warm, warm, small}, vrp.ReasonCapacity,
			[]vrp.Reason{vrp.ReasonCapability, vrp.ReasonCapability, vrp.ReasonCapacity}},
		{"none has the capability", []func(*vrp.Vehicle){warm, warm}, vrp.ReasonCapability, []vrp.Reason{vrp.ReasonCapability, vrp.ReasonCapability}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := &vrp.Problem{Stops: []vrp.Stop{{Lat: 3, Lon: 4, Weight: 5, Late: inf, Needs: cold}}, Planar: true}
			for _, f := range tc.fleet {
				pr.Vehicles = append(pr.Vehicles, veh(f))
			}
			if ok, why := pr.Servable(0); ok || why != tc.want {
				t.Errorf("Servable: %v %q, want %q", ok, why, tc.want)
			}
			if got := pr.Refusals(0); !reflect.DeepEqual(got, tc.each) {
				t.Errorf("Refusals: %q, want %q", got, tc.each)
			}
			if got := pr.Solve(vrp.Options{TimeLimit: time.Second}).Unassigned[0]; got != tc.want {
				t.Errorf("the solver's reason %q, want %q", got, tc.want)
			}
		})
	}
}
