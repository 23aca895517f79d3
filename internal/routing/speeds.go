package routing

import (
	"strings"
)

// RoadClass is the class of a road, from its highway tag; a link
// (motorway_link, …) takes the class of the road it links.
type RoadClass uint8

// The road classes.
const (
	ClassOther RoadClass = iota // footways, paths, steps, cycleways, and the unknown
	ClassMotorway
	ClassTrunk
	ClassPrimary
	ClassSecondary
	ClassTertiary
	ClassUnclassified
	ClassResidential
	ClassLivingStreet
	ClassService
	ClassTrack
)

var classNames = [...]string{"other", "motorway", "trunk", "primary", "secondary", "tertiary",
	"unclassified", "residential", "living_street", "service", "track"}

func (c RoadClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// classOf is the road class of a highway value.
func classOf(hw string) RoadClass {
	hw = strings.TrimSuffix(hw, "_link")
	for i, n := range classNames {
		if n == hw && i > 0 {
			return RoadClass(i)
		}
	}
	if hw == "road" {
		return ClassUnclassified
	}
	return ClassOther
}

// defaultKmh is the speed limit of a road class where its way posts none.
// The shared extracts are all in the United States, and a way does not
// say its country, so one table holds: the usual US statutory limits in
// whole mph (65, 55, 45, 40, 35, 30, 25, 15, 15, 15; paths 10), as km/h.
var defaultKmh = [...]float32{
	ClassOther: 16, ClassMotorway: 105, ClassTrunk: 89, ClassPrimary: 72, ClassSecondary: 64,
	ClassTertiary: 56, ClassUnclassified: 48, ClassResidential: 40, ClassLivingStreet: 24,
	ClassService: 24, ClassTrack: 24,
}

// zoneKmh are the country and zone codes of maxspeed (and of
// maxspeed:type and source:maxspeed when maxspeed itself is absent) that
// name a limit. Codes not here, and "none", "signals", "variable" and
// "walk", read as no posted limit and take the class default.
var zoneKmh = map[string]float32{
	"at:urban": 50, "at:rural": 100, "at:motorway": 130, "at:trunk": 100,
	"be:urban": 50, "be-vlg:rural": 70, "be-wal:rural": 90, "be:motorway": 120,
	"ch:urban": 50, "ch:rural": 80, "ch:trunk": 100, "ch:motorway": 120,
	"cz:urban": 50, "cz:rural": 90, "cz:motorway": 130,
	"de:urban": 50, "de:rural": 100, "de:living_street": 7, "de:bicycle_road": 30, "de:zone30": 30, "de:zone:30": 30,
	"dk:urban": 50, "dk:rural": 80, "dk:motorway": 130,
	"es:urban": 50, "es:rural": 90, "es:motorway": 120,
	"fr:urban": 50, "fr:rural": 80, "fr:motorway": 130, "fr:zone30": 30,
	"gb:nsl_single": 96.56, "gb:nsl_dual": 112.65, "gb:motorway": 112.65, "gb:nsl_restricted": 48.28,
	"it:urban": 50, "it:rural": 90, "it:motorway": 130,
	"nl:urban": 50, "nl:rural": 80, "nl:motorway": 130,
	"pl:urban": 50, "pl:rural": 90, "pl:motorway": 140,
	"ru:urban": 60, "ru:rural": 90, "ru:motorway": 110, "ru:living_street": 20,
	"us:urban": 40.23, "us:rural": 88.51, "us:motorway": 104.61, "us:residential": 40.23, "us:school_zone": 32.19,
}

// posted is the limit a way posts in one direction: maxspeed:forward or
// :backward, else maxspeed, as km/h; ok false where it posts none.
// Advisory speeds (maxspeed:advisory) are not limits and are not read;
// conditional limits (maxspeed:conditional, e.g. "30 @ (07:00-17:00)")
// are left out: the unconditional limit holds.
func posted(tags map[string]string, backward bool) (kmh float32, ok bool) {
	dir := "maxspeed:forward"
	if backward {
		dir = "maxspeed:backward"
	}
	for _, k := range []string{dir, "maxspeed"} {
		if v, found := tags[k]; found && v != "" {
			return postedValue(v)
		}
	}
	for _, k := range []string{"maxspeed:type", "source:maxspeed"} {
		if v := zoneKmh[strings.ToLower(strings.TrimSpace(tags[k]))]; v > 0 {
			return v, true
		}
	}
	return 0, false
}

// postedValue reads one maxspeed value: "50", "50 km/h", "30 mph",
// "DE:urban"; the first of several separated by ';'.
func postedValue(v string) (float32, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	if kmh, ok := zoneKmh[v]; ok {
		return kmh, true
	}
	if strings.Contains(v, ":") {
		return 0, false // a zone this table does not hold
	}
	if kmh := maxspeed(map[string]string{"v": v}, "v"); kmh > 0 {
		return kmh, true
	}
	return 0, false
}

// speedLimits are a way's class and its limit each way, posted or the
// class default.
func speedLimits(tags map[string]string) (RoadClass, [2]float32, uint8) {
	class := classOf(tags["highway"])
	var kmh [2]float32
	var bits uint8
	for d := 0; d < 2; d++ {
		if v, ok := posted(tags, d == 1); ok {
			kmh[d], bits = v, bits|1<<d
		} else {
			kmh[d] = defaultKmh[class]
		}
	}
	return class, kmh, bits
}

// Road is what a map matcher needs to know of the road under an edge,
// in one direction of travel.
type Road struct {
	WayID    int64
	Class    RoadClass
	LimitKmh float64 // the posted limit, or the class default
	Posted   bool    // LimitKmh is posted on the way (false: the default)
}

// EdgeRoad is the road of edge e travelled forward (in the order of its
// points) or backward.
func (g *Graph) EdgeRoad(e int, backward bool) Road {
	w := &g.ways[g.way[e]]
	d := 0
	if backward {
		d = 1
	}
	return Road{WayID: w.id, Class: w.class, LimitKmh: float64(w.limitKmh[d]), Posted: w.posted&(1<<d) != 0}
}

// EdgePoints appends the points of edge e, in order, to lat and lon.
func (g *Graph) EdgePoints(e int, lat, lon []float64) ([]float64, []float64) {
	a, b := g.ptFirst[e], g.ptFirst[e+1]
	return append(lat, g.lat[a:b]...), append(lon, g.lon[a:b]...)
}

// EdgeEnds are the junctions edge e runs between, in the order of its
// points; junctions are numbered 0 to Nodes()-1.
func (g *Graph) EdgeEnds(e int) (tail, head int) { return int(g.tail[e]), int(g.head[e]) }

// EdgeMeters is the length of edge e.
func (g *Graph) EdgeMeters(e int) float64 { return g.meters(int32(e)) }

// EdgeOpen reports whether costing c may travel edge e forward and
// backward.
func (g *Graph) EdgeOpen(e int, c Costing) (forward, backward bool) {
	r := g.ways[g.way[e]].rules[c]
	return r[0].usable(), r[1].usable()
}
