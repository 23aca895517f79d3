package vrp

import (
	"math"
	"sort"
)

// Plan is a Solution timed and costed: what the API reports. Figures are
// not rounded.
type Plan struct {
	Routes     []Route // the vehicles with at least one stop, in Problem order
	Unassigned []Miss  // in stop order
	Km         float64 // over Routes
	Minutes    float64 // over Routes
	Fuel       float64 // litres
	Cost       float64 // USD: fuel and driver time
	Served     int     // stops on a route
	OnTime     int     // served stops begun within their window
	// Efficiency is the share of stops served, Compliance the percent
	// of served stops begun within their window (0 when none is).
	Efficiency, Compliance float64
	Saved                  Savings // against Solution.InitialKm
}

// Route is one vehicle's timed route.
type Route struct {
	Vehicle int // index into Problem.Vehicles
	Visits  []Visit
	Km      float64
	Minutes float64 // from the shift start to the return
	Fuel    float64
	Service float64 // minutes spent at stops
	// Efficiency is Service over Minutes, 0 for a route of no time.
	Efficiency float64
	// BreakAfter is how many visits come before the vehicle's break, -1
	// without one; the break begins at BreakStart and lasts the
	// vehicle's BreakMinutes, where the vehicle is.
	BreakAfter int
	BreakStart float64
}

// Visit is one stop of a route.
type Visit struct {
	Stop   int     // index into Problem.Stops
	Arrive float64 // minutes
	Depart float64 // minutes: service start plus service time
}

// Miss is a stop no vehicle could take.
type Miss struct {
	Stop   int
	Reason Reason
}

// Savings of the local search over the first feasible plan, priced with
// the road model and the cost model.
type Savings struct {
	Km, Minutes, Fuel, Cost float64
	Percent                 float64 // of InitialKm; 0 when it is 0
}

// Plan times and prices sol, a Solution of p.
func (p *Problem) Plan(sol Solution) Plan {
	var pl Plan
	for vi, r := range sol.Routes {
		if len(r) == 0 {
			continue
		}
		ev := p.eval(&p.Vehicles[vi], r)
		rt := Route{Vehicle: vi, Visits: make([]Visit, len(r)), Km: ev.Km, Minutes: ev.Minutes, Fuel: ev.Km * FuelPerKm,
			BreakAfter: ev.BreakAfter, BreakStart: ev.BreakStart}
		for k, si := range r {
			st := &p.Stops[si]
			rt.Visits[k] = Visit{Stop: si, Arrive: ev.Arrive[k], Depart: ev.Start[k] + st.Service}
			rt.Service += st.Service
			if ev.Start[k] <= st.Late {
				pl.OnTime++
			}
		}
		if ev.Minutes > 0 {
			rt.Efficiency = rt.Service / ev.Minutes
		}
		pl.Km, pl.Minutes, pl.Served = pl.Km+ev.Km, pl.Minutes+ev.Minutes, pl.Served+len(r)
		pl.Routes = append(pl.Routes, rt)
	}
	for si, why := range sol.Unassigned {
		pl.Unassigned = append(pl.Unassigned, Miss{Stop: si, Reason: why})
	}
	sort.Slice(pl.Unassigned, func(i, j int) bool { return pl.Unassigned[i].Stop < pl.Unassigned[j].Stop })
	pl.Fuel = pl.Km * FuelPerKm
	pl.Cost = price(pl.Fuel, pl.Minutes)
	pl.Efficiency = float64(pl.Served) / float64(len(p.Stops))
	if pl.Served > 0 {
		pl.Compliance = 100 * float64(pl.OnTime) / float64(pl.Served)
	}
	saved := math.Max(0, sol.InitialKm-pl.Km)
	pl.Saved = Savings{Km: saved, Minutes: Minutes(saved), Fuel: saved * FuelPerKm}
	pl.Saved.Cost = price(pl.Saved.Fuel, pl.Saved.Minutes)
	if sol.InitialKm > 0 {
		pl.Saved.Percent = 100 * saved / sol.InitialKm
	}
	return pl
}

// price is the cost model: fuel litres and driver minutes in USD.
func price(fuel, minutes float64) float64 { return fuel*FuelPrice + minutes/60*DriverPerHour }
