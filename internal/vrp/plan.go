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
	Fuel       float64 // litres, by each vehicle's cost model
	Cost       float64 // USD, by each vehicle's cost model
	Over       [3]float64
	Served     int // stops on a route
	OnTime     int // served stops begun within their window
	// Efficiency is the share of stops served, Compliance the percent
	// of served stops begun within their window (0 when none is).
	Efficiency, Compliance float64
	Saved                  Savings // against the first plan (Solution.Initial)
}

// Route is one vehicle's timed route.
type Route struct {
	Vehicle int // index into Problem.Vehicles
	Visits  []Visit
	Km      float64
	Minutes float64 // from the shift start to the return
	Fuel    float64 // litres: Km at the vehicle's FuelPerKm
	Cost    float64 // USD: fuel, Km and Minutes by the vehicle's cost model
	Service float64 // minutes spent at stops
	// Efficiency is Service over Minutes, 0 for a route of no time.
	Efficiency float64
	// Breaks are the vehicle's breaks, in order, where they are taken.
	Breaks []Rest
	// Over is the load beyond each capacity (weight, volume, packages),
	// with Problem.Overload.
	Over [3]float64
}

// Rest is a break of a route: taken after After visits, from Start for
// Minutes, where the vehicle is.
type Rest struct {
	After          int
	Start, Minutes float64
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

// Savings of the search over the first feasible plan: distance, route
// minutes, and fuel and cost by each vehicle's cost model.
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
		rt, onTime := p.route(vi, r)
		pl.OnTime += onTime
		pl.Km, pl.Minutes, pl.Served = pl.Km+rt.Km, pl.Minutes+rt.Minutes, pl.Served+len(r)
		pl.Fuel, pl.Cost = pl.Fuel+rt.Fuel, pl.Cost+rt.Cost
		for d := range pl.Over {
			pl.Over[d] += rt.Over[d]
		}
		pl.Routes = append(pl.Routes, rt)
	}
	for si, why := range sol.Unassigned {
		pl.Unassigned = append(pl.Unassigned, Miss{Stop: si, Reason: why})
	}
	sort.Slice(pl.Unassigned, func(i, j int) bool { return pl.Unassigned[i].Stop < pl.Unassigned[j].Stop })
	pl.Efficiency = float64(pl.Served) / float64(len(p.Stops))
	if pl.Served > 0 {
		pl.Compliance = 100 * float64(pl.OnTime) / float64(pl.Served)
	}
	var first Plan
	for vi, r := range sol.Initial {
		if len(r) > 0 {
			rt, _ := p.route(vi, r)
			first.Km, first.Minutes, first.Fuel, first.Cost = first.Km+rt.Km, first.Minutes+rt.Minutes, first.Fuel+rt.Fuel, first.Cost+rt.Cost
		}
	}
	pl.Saved = Savings{Km: math.Max(0, sol.InitialKm-pl.Km)}
	if sol.Initial != nil {
		pl.Saved.Minutes, pl.Saved.Fuel, pl.Saved.Cost = math.Max(0, first.Minutes-pl.Minutes), math.Max(0, first.Fuel-pl.Fuel), math.Max(0, first.Cost-pl.Cost)
	}
	if sol.InitialKm > 0 {
		pl.Saved.Percent = 100 * pl.Saved.Km / sol.InitialKm
	}
	return pl
}

// route times and prices vehicle vi's route r, and counts its stops
// begun within their window.
func (p *Problem) route(vi int, r []int) (Route, int) {
	ve := &p.Vehicles[vi]
	c := ve.costs()
	ev := p.eval(ve, r)
	rt := Route{Vehicle: vi, Visits: make([]Visit, len(r)), Km: ev.Km, Minutes: ev.Minutes, Fuel: ev.Km * c.FuelPerKm, Over: ev.Over}
	rt.Cost = c.price(rt.Fuel, rt.Km, rt.Minutes)
	for k, at := range ev.BreakAfter {
		rt.Breaks = append(rt.Breaks, Rest{After: at, Start: ev.BreakStart[k], Minutes: ve.Breaks[k].Minutes})
	}
	onTime := 0
	for k, si := range r {
		st := &p.Stops[si]
		rt.Visits[k] = Visit{Stop: si, Arrive: ev.Arrive[k], Depart: ev.Start[k] + st.Service}
		rt.Service += st.Service
		if ev.Start[k] <= st.Late {
			onTime++
		}
	}
	if ev.Minutes > 0 {
		rt.Efficiency = rt.Service / ev.Minutes
	}
	return rt, onTime
}
