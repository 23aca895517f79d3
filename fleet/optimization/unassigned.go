package optimization

import (
	"fmt"
	"strings"

	"github.com/fleethub/fleethub/internal/vrp"
)

// maxNamedVehicles caps the vehicle ids a reason_detail names per cause;
// the rest are counted.
const maxNamedVehicles = 5

// reasonDetail says in words why unassigned destination i is out, left
// out for why. One that no vehicle can serve on a route of its own
// names each distinct cause with the vehicles it refuses: "no vehicle
// can serve it on a route of its own: vehicles a, b lack refrigerated;
// vehicle c cannot carry its weight". One some vehicle could serve
// alone was crowded out by the plan's other destinations.
func reasonDetail(req *Request, pr *vrp.Problem, i int, why vrp.Reason) string {
	refusals := pr.Refusals(i)
	for v, r := range refusals {
		if r == "" {
			return fmt.Sprintf("crowded out by the other destinations: vehicle %s could serve it on a route of its own, "+
				"but no route of the plan had a place for it (%s)", req.Vehicles[v].VehicleID, why)
		}
	}
	// the causes in order of their first vehicle, each with its vehicles
	var causes []string
	ids := map[string][]string{}
	for v, r := range refusals {
		c := cause(pr, v, i, r)
		if ids[c] == nil {
			causes = append(causes, c)
		}
		ids[c] = append(ids[c], req.Vehicles[v].VehicleID)
	}
	parts := make([]string, len(causes))
	for k, c := range causes {
		parts[k] = subject(ids[c]) + " " + agree(c, len(ids[c]))
	}
	return "no vehicle can serve it on a route of its own: " + strings.Join(parts, "; ")
}

// cause is why vehicle v refuses stop i on a route of its own with
// reason r, as a predicate on the vehicle ("lack{s} refrigerated": agree
// makes the verb agree with the number of vehicles).
func cause(pr *vrp.Problem, v, i int, r vrp.Reason) string {
	st, ve := &pr.Stops[i], &pr.Vehicles[v]
	switch r {
	case vrp.ReasonCapability:
		var lack []string
		for k, w := range Capabilities {
			if st.Needs&^ve.Has&(1<<k) != 0 {
				lack = append(lack, w)
			}
		}
		return "lack{s} " + strings.Join(lack, ", ")
	case vrp.ReasonCapacity:
		var over []string
		for d, c := range [3][2]float64{{st.Weight, ve.CapWeight}, {st.Volume, ve.CapVolume}, {st.Packages, ve.CapPackages}} {
			if c[0] > c[1]*(1+pr.Overload) {
				over = append(over, []string{"weight", "volume", "packages"}[d])
			}
		}
		if len(over) == 0 {
			return "cannot carry it"
		}
		return "cannot carry its " + strings.Join(over, " and ")
	case vrp.ReasonTimeWindow:
		return "cannot reach it before the destination's time window closes"
	case vrp.ReasonShiftEnd:
		return "cannot serve it and be back before the shift ends"
	case vrp.ReasonRouteLimits:
		s := pr.Eval(v, []int{i})
		var over []string
		if s.Minutes > ve.MaxMinutes {
			over = append(over, "max_route_duration")
		}
		if s.Km > ve.MaxKm {
			over = append(over, "max_route_distance")
		}
		if len(over) == 0 {
			return "cannot serve it within the route limits"
		}
		return "cannot serve it within " + strings.Join(over, " and ")
	case vrp.ReasonBreak:
		return "cannot serve it and take the breaks within their windows"
	}
	return "cannot serve it (" + string(r) + ")"
}

// subject names vehicles: "vehicle a", "vehicles a, b", the ids past
// maxNamedVehicles counted.
func subject(ids []string) string {
	if len(ids) == 1 {
		return "vehicle " + ids[0]
	}
	if len(ids) > maxNamedVehicles {
		return fmt.Sprintf("vehicles %s and %d more", strings.Join(ids[:maxNamedVehicles], ", "), len(ids)-maxNamedVehicles)
	}
	return "vehicles " + strings.Join(ids, ", ")
}

// agree fills a predicate's {s} for n vehicles.
func agree(pred string, n int) string {
	if n == 1 {
		return strings.ReplaceAll(pred, "{s}", "s")
	}
	return strings.ReplaceAll(pred, "{s}", "")
}
