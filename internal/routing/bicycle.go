package routing

import "strings"

// The bicycle costing follows OSRM's bicycle profile (v5.27 and v6) as it
// ships: its weight is the duration, so a route is the quickest one, turn
// and signal penalties included, and no road is avoided for being busy.

// bikeKmh are the speeds a cyclist rides per highway class, km/h.
var bikeKmh = map[string]float32{
	"cycleway": 15, "primary": 15, "primary_link": 15, "secondary": 15, "secondary_link": 15,
	"tertiary": 15, "tertiary_link": 15, "residential": 15, "unclassified": 15,
	"living_street": 15, "road": 15, "service": 15, "track": 12, "path": 13,
}

// bikePushKmh are the ways a cyclist may only push the bicycle along, and
// the speed (walking, 4 km/h; steps 2).
var bikePushKmh = map[string]float32{"footway": bikeWalkKmh, "pedestrian": bikeWalkKmh, "steps": 2}

// bikeWalkKmh is the pace of a cyclist pushing the bicycle.
const bikeWalkKmh = 4

// bikeDefaultKmh is the speed on a way of another class that the bicycle
// is let onto by an access tag (bicycle=yes on a footway, say).
const bikeDefaultKmh = 15

// bikeSurfaceKmh caps the speed, riding or pushing, on a surface.
var bikeSurfaceKmh = map[string]float32{
	"asphalt": 15, "chipseal": 15, "concrete": 15, "concrete_lanes": 15,
	"wood": 10, "metal": 10, "cobblestone:flattened": 10, "paving_stones": 10, "compacted": 10,
	"fine_gravel": 10, "ground": 10, "dirt": 8, "cobblestone": 7, "sett": 9,
	"unpaved": 6, "gravel": 6, "pebblestone": 6, "grass_paver": 6, "earth": 6, "grass": 6,
	"mud": 3, "sand": 3, "woodchips": 3,
}

// bikeDenied are the access values that close a way or a node to
// bicycles; every other value (destination, customers, psv…) leaves it
// open, with no penalty.
var bikeDenied = map[string]bool{"no": true, "private": true, "agricultural": true, "forestry": true, "delivery": true, "use_sidepath": true}

// bikeAllowed are the access values that open a way of a class the
// bicycle does not otherwise ride.
var bikeAllowed = map[string]bool{"yes": true, "permissive": true, "designated": true}

// cyclewayLane are the cycleway values that give a road a cycle lane in
// its direction, and cyclewayOpposite those of a lane against a one-way.
var (
	cyclewayLane     = map[string]bool{"track": true, "lane": true, "share_busway": true, "sharrow": true, "shared": true, "shared_lane": true}
	cyclewayOpposite = map[string]bool{"opposite": true, "opposite_lane": true, "opposite_track": true}
)

// bikeDropped reports the ways the bicycle costing leaves out whatever
// their class: under construction (construction=* other than no, minor,
// widening), proposed, impassable.
func bikeDropped(tags map[string]string) bool {
	switch tags["construction"] {
	case "", "no", "minor", "widening":
	default:
		return true
	}
	return tags["proposed"] != "" || tags["impassable"] == "yes" || tags["status"] == "impassable"
}

// bikeDir is one direction of a way as the bicycle rules build it: open
// (no one-way closes it) and the speed (0: none set yet).
type bikeDir struct {
	open bool
	kmh  float32
}

// bikeRules is how a cyclist may travel a way with these tags, forward
// and backward: riding at the class's speed, or pushing at walking pace
// where riding is not allowed (footways, steps, against a one-way,
// bicycle=dismount), capped by the surface and the posted maxspeed.
func bikeRules(tags map[string]string) (fwd, bwd dirRule) {
	hw := tags["highway"]
	if hw == "" || hw == "construction" || bikeDropped(tags) || bikeDenied[accessOf(tags, Bicycle)] {
		return
	}
	kmh, canPush := bikeKmh[hw]
	if !canPush && bikeAllowed[accessOf(tags, Bicycle)] {
		kmh, canPush = bikeDefaultKmh, true
	}
	f, b := bikeDir{true, kmh}, bikeDir{true, kmh}
	implied := tags["junction"] == "roundabout" || tags["junction"] == "circular" || hw == "motorway"
	reverse := bikeOneway(tags, implied, &f.open, &b.open)
	laneF, laneB := bikeLanes(tags, f.open && b.open && !implied, reverse)
	if laneF {
		f = bikeDir{true, bikeKmh["cycleway"]}
	}
	if laneB {
		b = bikeDir{true, bikeKmh["cycleway"]}
	}
	bikePush(tags, hw, canPush, implied, &f, &b)
	if tags["bicycle"] == "dismount" {
		f, b = bikeDir{true, bikeWalkKmh}, bikeDir{true, bikeWalkKmh}
	}
	if f.open {
		fwd = dirRule{kmh: bikeCap(tags, f.kmh, "maxspeed:forward"), rate: 1}
	}
	if b.open {
		bwd = dirRule{kmh: bikeCap(tags, b.kmh, "maxspeed:backward"), rate: 1}
	}
	return fwd, bwd
}

// bikeOneway closes the direction a one-way forbids (oneway:bicycle
// first, then oneway, then the one-way a roundabout or a motorway
// implies) and reports whether the way runs against its nodes' order.
func bikeOneway(tags map[string]string, implied bool, fwd, bwd *bool) (reverse bool) {
	switch ob, o := tags["oneway:bicycle"], tags["oneway"]; {
	case ob == "yes" || ob == "1" || ob == "true":
		*bwd = false
	case ob == "no" || ob == "0" || ob == "false":
	case ob == "-1":
		*fwd = false
		return true
	case o == "yes" || o == "1" || o == "true":
		*bwd = false
	case o == "no" || o == "0" || o == "false":
	case o == "-1" || o == "reverse":
		*fwd = false
		return true
	case implied:
		*bwd = false
	}
	return false
}

// bikeLanes reports a cycle lane forward and backward: on a two-way road
// the lane's side says its direction; on a one-way, an opposite lane
// opens both directions and any other lane the way's own.
func bikeLanes(tags map[string]string, twoWay, reverse bool) (fwd, bwd bool) {
	cw := tags["cycleway"]
	if cw == "" {
		cw = tags["cycleway:both"]
	}
	l, r := tags["cycleway:left"], tags["cycleway:right"]
	if twoWay {
		fwd = cyclewayLane[cw] || cyclewayLane[r] || cyclewayOpposite[l]
		bwd = cyclewayLane[cw] || cyclewayLane[l] || cyclewayOpposite[r]
		return fwd, bwd
	}
	switch {
	case cyclewayOpposite[cw] || cyclewayOpposite[l] || cyclewayOpposite[r]:
		return true, true
	case cyclewayLane[cw] || cyclewayLane[l] || cyclewayLane[r]:
		return !reverse, reverse
	}
	return false, false
}

// bikePush opens to pushing the directions the cyclist may not ride
// (closed by a one-way, or of a class not ridden), unless foot=no: both
// ways on footways, pedestrian streets and steps (at their speed) and on
// piers, and at walking pace on a way with foot=yes (foot:forward,
// foot:backward) or one the bicycle rides the other way, never against
// a roundabout's or motorway's direction.
func bikePush(tags map[string]string, hw string, canPush, implied bool, fwd, bwd *bikeDir) {
	ridden := func(d *bikeDir) bool { return d.open && d.kmh > 0 }
	if ridden(fwd) && ridden(bwd) || tags["foot"] == "no" {
		return
	}
	var pf, pb float32
	switch p, ok := bikePushKmh[hw]; {
	case ok:
		pf, pb = p, p
	case tags["man_made"] == "pier":
		pf, pb = bikeWalkKmh, bikeWalkKmh
	case tags["foot:forward"] == "yes" && tags["foot"] != "yes":
		pf = bikeWalkKmh
	case tags["foot:backward"] == "yes" && tags["foot"] != "yes":
		pb = bikeWalkKmh
	case tags["foot"] == "yes" || canPush:
		pf = bikeWalkKmh
		if !implied { // never against a roundabout's or a motorway's direction
			pb = bikeWalkKmh
		}
	}
	if !ridden(fwd) && pf > 0 {
		*fwd = bikeDir{true, pf}
	}
	if !ridden(bwd) && pb > 0 {
		*bwd = bikeDir{true, pb}
	}
}

// bikeCap caps a speed by the surface and by the way's posted maxspeed
// in that direction (dirKey, else maxspeed), when given as a number (km/h
// or mph).
func bikeCap(tags map[string]string, kmh float32, dirKey string) float32 {
	if kmh <= 0 {
		return 0
	}
	if s, ok := bikeSurfaceKmh[tags["surface"]]; ok {
		kmh = min(kmh, s)
	}
	for _, k := range []string{dirKey, "maxspeed"} {
		if m := maxspeed(tags, k); m > 0 && !strings.Contains(tags[k], ":") {
			return min(kmh, m)
		}
	}
	return kmh
}

// bikeNodeBlocks reports whether a node closes the way to bicycles: an
// access tag of bikeDenied (not on a crossing), or, without one, a
// barrier=yes, wall or fence. Bollards, gates, stiles and the like are
// passed.
func bikeNodeBlocks(tags map[string]string) bool {
	if acc := accessOf(tags, Bicycle); acc != "" {
		return bikeDenied[acc] && tags["highway"] != "crossing"
	}
	switch tags["barrier"] {
	case "yes", "wall", "fence":
		return true
	}
	return false
}
