package optimization

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Capabilities is the closed vocabulary of a destination's
// delivery_requirements.special_handling (what it needs) and a vehicle's
// restrictions (what it provides), one bit each in vrp.Stop.Needs and
// vrp.Vehicle.Has.
var Capabilities = []string{"refrigerated", "hazmat", "liftgate", "pallet", "oversized"}

// typeProvides is what a vehicle_type provides without listing it, and
// typeCannot what it cannot provide even when listed (a bicycle carries
// no pallet). Other types (auto and those that read as auto) provide
// what their restrictions list.
var (
	typeProvides = map[string][]string{"truck": {"pallet", "oversized"}}
	typeCannot   = map[string][]string{"bicycle": {"pallet", "oversized", "liftgate", "hazmat"}, "pedestrian": {"pallet", "oversized", "liftgate", "hazmat"},
		"motorcycle": {"pallet", "oversized", "liftgate"}}
)

// capabilityBits reads a list of capability words into bits; bad names
// field for an unknown or repeated word.
func capabilityBits(bad map[string]string, field string, words []string) uint64 {
	var set uint64
	for i, w := range words {
		k := index0(Capabilities, w)
		if k < 0 {
			bad[fmt.Sprintf("%s[%d]", field, i)] = enum.Refusal(Capabilities...)
			continue
		}
		set |= 1 << k
	}
	return set
}

// vehicleCapabilities is what vehicle f provides: its restrictions and
// its type's own, refused by name when the type cannot provide one.
func vehicleCapabilities(bad map[string]string, f string, v Vehicle) uint64 {
	has := capabilityBits(bad, f+".restrictions", v.Restrictions)
	for _, w := range typeCannot[v.VehicleType] {
		if has&(1<<index0(Capabilities, w)) != 0 {
			bad[f+".restrictions"] = fmt.Sprintf("a %s cannot provide %s", v.VehicleType, w)
		}
	}
	for _, w := range typeProvides[v.VehicleType] {
		has |= 1 << index0(Capabilities, w)
	}
	return has
}

// missing names the capabilities stop s needs that the vehicle closest
// to providing them all lacks (the fewest missing; the first on a tie).
func missing(pr *vrp.Problem, s int) []string {
	need := pr.Stops[s].Needs
	lack := need
	for v := range pr.Vehicles {
		if l := need &^ pr.Vehicles[v].Has; bits.OnesCount64(l) < bits.OnesCount64(lack) {
			lack = l
		}
	}
	var out []string
	for k, w := range Capabilities {
		if lack&(1<<k) != 0 {
			out = append(out, w)
		}
	}
	return out
}

func index0(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// avoidKeys are the keys of constraints.traffic_restrictions, and
// avoidSets the kinds of road each leaves out.
var (
	avoidKeys = []string{"avoid_toll_roads", "avoid_highways", "avoid_ferries"}
	avoidSets = []routing.Avoid{routing.AvoidTolls, routing.AvoidHighways, routing.AvoidFerries}
)

// trafficRestrictions reads the kinds of road the plan avoids (the keys
// set true) and refuses, by name, a key other than avoidKeys. Whether a
// plan can avoid them depends on the travel costs (Service.avoidable).
func trafficRestrictions(bad map[string]string, tr map[string]bool) routing.Avoid {
	var avoid routing.Avoid
	for k, on := range tr {
		f := "constraints.traffic_restrictions." + k
		switch i := index0(avoidKeys, k); {
		case i < 0:
			bad[f] = "unknown: one of " + strings.Join(avoidKeys, ", ")
		case on:
			avoid |= avoidSets[i]
		}
	}
	return avoid
}
