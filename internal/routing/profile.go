package routing

import (
	"math"
	"strconv"
	"strings"
)

// dirRule is how a costing may travel a way in one direction: at kmh
// (0: not at all), with its weight divided by rate (1 for a road the
// costing takes as it comes, less for one it avoids), and whether the way
// is for local access only (destination, private, delivery).
type dirRule struct {
	kmh        float32
	rate       float32
	restricted bool
}

func (r dirRule) usable() bool { return r.kmh > 0 }

// The speeds per road class, km/h, of the costings when the way has no
// maxspeed. Auto follows OSRM's car profile, bicycle and pedestrian its
// bicycle and foot profiles; truck drives the car's network slower.
var (
	autoKmh = map[string]float32{
		"motorway": 90, "motorway_link": 45, "trunk": 85, "trunk_link": 40,
		"primary": 65, "primary_link": 30, "secondary": 55, "secondary_link": 25,
		"tertiary": 40, "tertiary_link": 20, "unclassified": 25, "residential": 25,
		"living_street": 10, "service": 15,
	}
	truckKmh = map[string]float32{
		"motorway": 80, "motorway_link": 40, "trunk": 75, "trunk_link": 35,
		"primary": 55, "primary_link": 25, "secondary": 50, "secondary_link": 22,
		"tertiary": 35, "tertiary_link": 18, "unclassified": 22, "residential": 20,
		"service": 12,
	}
	footWays = map[string]bool{
		"primary": true, "primary_link": true, "secondary": true, "secondary_link": true,
		"tertiary": true, "tertiary_link": true, "unclassified": true, "residential": true,
		"road": true, "living_street": true, "service": true, "track": true, "path": true,
		"steps": true, "pedestrian": true, "footway": true, "pier": true, "platform": true,
	}
	// serviceRate lowers the rate of service roads nobody drives through.
	serviceRate = map[string]float32{
		"alley": 0.5, "parking": 0.5, "parking_aisle": 0.5, "driveway": 0.5,
		"drive-through": 0.5, "drive-thru": 0.5,
	}
	// accessOrder is the access keys of each costing, most specific first.
	accessOrder = [...][]string{
		Auto:       {"motorcar", "motor_vehicle", "vehicle", "access"},
		Truck:      {"hgv", "goods", "motor_vehicle", "vehicle", "access"},
		Bicycle:    {"bicycle", "vehicle", "access"},
		Pedestrian: {"foot", "access"},
	}
	denied     = map[string]bool{"no": true, "agricultural": true, "forestry": true, "emergency": true, "psv": true, "bus": true, "military": true, "discouraged": false}
	restricted = map[string]bool{"private": true, "delivery": true, "destination": true, "customers": true, "permit": true}
	allowed    = map[string]bool{"yes": true, "permissive": true, "designated": true, "official": true, "public": true}
)

// walkKmh is the walking speed.
const walkKmh = 5

// The default truck: a US tractor with a 53-foot trailer. Roads posted
// below these (maxheight, maxwidth, maxlength, maxweight) are closed to
// the truck costing unless a request gives its own dimensions.
var defaultTruck = TruckSize{Height: 4.11, Width: 2.6, Length: 21.9, Weight: 36.3}

// TruckSize is a truck's dimensions, meters and tonnes; 0 means not given.
type TruckSize struct {
	Height, Width, Length, Weight float64
}

// accessOf is the first access tag of c's keys, "" when none is set.
func accessOf(tags map[string]string, c Costing) string {
	for _, k := range accessOrder[c] {
		if v, ok := tags[k]; ok && v != "" {
			return v
		}
	}
	return ""
}

// wayRules is how costing c may travel a way with these tags, forward
// (in the order of its nodes) and backward. The truck's dimensions are
// checked separately (see fitsSize).
func wayRules(tags map[string]string, c Costing) (fwd, bwd dirRule) {
	if tags["highway"] == "" && isFerry(tags) {
		return ferryRules(tags, c)
	}
	if c == Bicycle {
		return bikeRules(tags)
	}
	hw := tags["highway"]
	if hw == "" || tags["area"] == "yes" || tags["impassable"] == "yes" || tags["status"] == "impassable" {
		return
	}
	if hw == "construction" || hw == "proposed" || tags["construction"] != "" && tags["construction"] != "no" {
		return
	}
	acc := accessOf(tags, c)
	if denied[acc] || acc == "private" && c != Auto && c != Truck {
		return
	}
	switch c {
	case Auto, Truck:
		return motorRules(tags, hw, acc, c)
	default:
		return footRules(tags, hw, acc)
	}
}

func motorRules(tags map[string]string, hw, acc string, c Costing) (fwd, bwd dirRule) {
	table := autoKmh
	if c == Truck {
		table = truckKmh
	}
	kmh, ok := table[hw]
	if !ok {
		if !allowed[acc] || hw == "footway" || hw == "cycleway" || hw == "path" || hw == "steps" || hw == "pedestrian" {
			return
		}
		kmh = 10
	}
	if tags["oneway"] == "reversible" || tags["oneway"] == "alternating" || tags["hov"] == "designated" {
		return
	}
	if c == Truck && hw == "service" && tags["service"] != "" && tags["service"] != "alley" {
		return // trucks keep off parking aisles and driveways
	}
	if tags["service"] == "emergency_access" {
		return
	}
	rate := float32(1)
	if r, ok := serviceRate[tags["service"]]; ok && hw == "service" {
		rate = r
	}
	res := restricted[acc] || hw == "service" && tags["service"] == "parking_aisle"
	fwd = dirRule{kmh: kmh, rate: rate, restricted: res}
	bwd = fwd
	if f := maxspeed(tags, "maxspeed:forward"); f > 0 {
		fwd.kmh = f * 0.8
	} else if f := maxspeed(tags, "maxspeed"); f > 0 {
		fwd.kmh = f * 0.8
	}
	if b := maxspeed(tags, "maxspeed:backward"); b > 0 {
		bwd.kmh = b * 0.8
	} else if b := maxspeed(tags, "maxspeed"); b > 0 {
		bwd.kmh = b * 0.8
	}
	if c == Truck {
		fwd.kmh, bwd.kmh = min(fwd.kmh, 90), min(bwd.kmh, 90)
	}
	if s, ok := motorSurfaceCap(tags); ok {
		fwd.kmh, bwd.kmh = min(fwd.kmh, s), min(bwd.kmh, s)
	}
	switch onewayOf(tags, hw) {
	case 1:
		bwd = dirRule{}
	case -1:
		fwd = dirRule{}
	}
	if r := narrowRate(tags, fwd.usable() && bwd.usable()); r < 1 {
		fwd.rate, bwd.rate = min(fwd.rate, r), min(bwd.rate, r)
	}
	return
}

// narrowRate is OSRM's car profile's rate for a narrow road (width 3 m
// or less, or one lane for both directions: 0.5) and a side road
// (side_road=yes or rotary: 0.8); 1 otherwise. It weighs the route, not
// its time.
func narrowRate(tags map[string]string, twoWay bool) float32 {
	lead := func(v string) (int, bool) { // the leading digits, as OSRM reads them
		i := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		n, err := strconv.Atoi(v[:i])
		return n, err == nil
	}
	if w, ok := lead(tags["width"]); ok && w <= 3 {
		return 0.5
	}
	if l, ok := lead(tags["lanes"]); ok && l <= 1 && twoWay {
		return 0.5
	}
	if s := tags["side_road"]; s == "yes" || s == "rotary" {
		return 0.8
	}
	return 1
}

func footRules(tags map[string]string, hw, acc string) (fwd, bwd dirRule) {
	if !footWays[hw] && !allowed[acc] {
		return
	}
	if tags["foot"] == "use_sidepath" {
		return
	}
	kmh := float32(walkKmh)
	if hw == "steps" {
		kmh = walkKmh // the foot profile keeps walking speed on steps
	}
	fwd = dirRule{kmh: kmh, rate: 1}
	bwd = fwd
	switch tags["oneway:foot"] {
	case "yes", "true", "1":
		bwd = dirRule{}
	case "-1":
		fwd = dirRule{}
	}
	return
}

// The speeds, km/h, that a way's surface, tracktype and smoothness cap a
// car's or truck's at, as OSRM's car profile.
var (
	motorSurfaceKmh = map[string]float32{
		"cement": 80, "compacted": 80, "fine_gravel": 80, "paving_stones": 60, "metal": 60, "bricks": 60,
		"grass": 40, "wood": 40, "sett": 40, "grass_paver": 40, "gravel": 40, "unpaved": 40, "ground": 40,
		"dirt": 40, "pebblestone": 40, "tartan": 40, "cobblestone": 30, "clay": 30,
		"earth": 20, "stone": 20, "rocky": 20, "sand": 20, "mud": 10,
	}
	motorTracktypeKmh  = map[string]float32{"grade1": 60, "grade2": 40, "grade3": 30, "grade4": 25, "grade5": 20}
	motorSmoothnessKmh = map[string]float32{"intermediate": 80, "bad": 40, "very_bad": 20, "horrible": 10, "very_horrible": 5, "impassable": 0}
)

// motorSurfaceCap is the lowest cap the way's surface, tracktype and
// smoothness put on a car's speed; ok false when none does (0 closes it).
func motorSurfaceCap(tags map[string]string) (kmh float32, ok bool) {
	kmh = math.MaxFloat32
	for _, t := range []struct {
		table map[string]float32
		key   string
	}{{motorSurfaceKmh, "surface"}, {motorTracktypeKmh, "tracktype"}, {motorSmoothnessKmh, "smoothness"}} {
		if v, found := t.table[tags[t.key]]; found {
			kmh, ok = min(kmh, v), true
		}
	}
	return kmh, ok
}

// noStartOf is the costings (bit per Costing) no location snaps onto a
// way for: as OSRM's car profile, a private service road (a driveway, a
// parking lot behind a sign) is driven to reach what lies on it, but a
// location beside it is placed on the nearest other road.
func noStartOf(tags map[string]string) uint8 {
	var bits uint8
	for _, c := range []Costing{Auto, Truck} {
		if tags["highway"] == "service" && accessOf(tags, c) == "private" {
			bits |= 1 << c
		}
	}
	return bits
}

// onewayOf is the direction a way may be travelled by car, truck: 1
// forward only, -1 backward only, 0 both.
func onewayOf(tags map[string]string, hw string) int {
	switch tags["oneway"] {
	case "yes", "true", "1":
		return 1
	case "-1", "reverse":
		return -1
	case "no", "false", "0":
		return 0
	}
	if tags["junction"] == "roundabout" || tags["junction"] == "circular" || hw == "motorway" {
		return 1
	}
	return 0
}

// maxspeed parses a speed tag to km/h: "50", "50 km/h", "30 mph",
// "30mph", "US:urban" and the like; 0 when it says nothing usable.
func maxspeed(tags map[string]string, key string) float32 {
	v := strings.TrimSpace(strings.ToLower(tags[key]))
	if v == "" {
		return 0
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	num := v
	mph := false
	for _, unit := range []string{"mph", "mp/h", "km/h", "kmh", "kph"} {
		if strings.HasSuffix(num, unit) {
			mph = unit == "mph" || unit == "mp/h"
			num = strings.TrimSpace(strings.TrimSuffix(num, unit))
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		switch {
		case strings.HasSuffix(v, ":urban"):
			return 50
		case strings.HasSuffix(v, ":rural"):
			return 90
		case strings.HasSuffix(v, ":motorway"):
			return 130
		case strings.HasSuffix(v, ":living_street"):
			return 10
		}
		return 0
	}
	if math.IsNaN(f) || f <= 0 || f > 300 {
		return 0
	}
	if mph {
		f *= 1.609344
	}
	return float32(f)
}

// dimension parses a maxheight, maxwidth, maxlength (meters, or feet and
// inches as 13'6") or maxweight (tonnes, or "lbs"/"st" forms) tag; 0 when
// absent or unreadable.
func dimension(v string) float64 {
	v = strings.TrimSpace(strings.ToLower(v))
	if v == "" || v == "default" || v == "none" || v == "below_default" {
		return 0
	}
	if i := strings.IndexByte(v, '\''); i > 0 { // 13'6"
		ft, err := strconv.ParseFloat(strings.TrimSpace(v[:i]), 64)
		if err != nil {
			return 0
		}
		in := 0.0
		if rest := strings.Trim(strings.TrimSpace(v[i+1:]), "\""); rest != "" {
			if in, err = strconv.ParseFloat(rest, 64); err != nil {
				return 0 // as for feet that do not parse
			}
		}
		return ft*0.3048 + in*0.0254
	}
	scale := 1.0
	for _, u := range []struct {
		s string
		k float64
	}{{"lbs", 0.00045359237}, {"lb", 0.00045359237}, {"st", 0.90718474}, {"kg", 0.001}, {"ft", 0.3048}, {"t", 1}, {"m", 1}} {
		if strings.HasSuffix(v, u.s) {
			v, scale = strings.TrimSpace(strings.TrimSuffix(v, u.s)), u.k
			break
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f <= 0 {
		return 0
	}
	return f * scale
}

// nodeBlocks reports whether a node's tags close it to costing c: a
// barrier the costing cannot pass, or access denied on the node itself.
func nodeBlocks(tags map[string]string, c Costing) bool {
	if c == Bicycle {
		return bikeNodeBlocks(tags)
	}
	if acc := accessOf(tags, c); acc != "" {
		if denied[acc] {
			return true
		}
		if allowed[acc] || restricted[acc] {
			return false
		}
	}
	b := tags["barrier"]
	if b == "" {
		return false
	}
	switch c {
	case Auto, Truck:
		switch b {
		case "cattle_grid", "border_control", "toll_booth", "sally_port", "gate", "lift_gate", "no", "entrance", "height_restrictor", "arch", "checkpoint", "kerb":
			return false
		}
		return true
	default:
		switch b {
		case "wall", "fence", "hedge", "full-height_turnstile":
			return true
		}
		return false
	}
}
