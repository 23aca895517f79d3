package routing

import (
	"strconv"
	"strings"

	"github.com/fleethub/fleethub/internal/geo"
)

// Avoid is a set of kinds of road a route leaves out. Each set has a
// routing graph of its own per costing, built when a query first asks
// for it and saved beside the others.
type Avoid uint8

// The kinds of road a route may avoid.
const (
	AvoidTolls    Avoid       = 1 << iota // ways tagged toll=yes
	AvoidHighways                         // motorways and trunks, and their links
	AvoidFerries                          // route=ferry
	avoidSets     = 1 << iota             // how many sets there are
)

var avoidNames = [...]string{"tolls", "highways", "ferries"}

// AvoidNames are the names ParseAvoid reads, in order.
func AvoidNames() []string { return append([]string(nil), avoidNames[:]...) }

// ParseAvoid returns the kind of road a name means: tolls, highways or
// ferries.
func ParseAvoid(name string) (Avoid, bool) {
	for i, n := range avoidNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// String names the set, its kinds joined by '+'; "" for the empty set.
func (a Avoid) String() string {
	var names []string
	for i, n := range avoidNames {
		if a&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if rest := a &^ (avoidSets - 1); rest != 0 {
		names = append(names, "avoid("+strconv.Itoa(int(rest))+")")
	}
	return strings.Join(names, "+")
}

// avoidOf is the kinds of road a way is.
func avoidOf(tags map[string]string) Avoid {
	var a Avoid
	if tags["toll"] == "yes" {
		a |= AvoidTolls
	}
	switch tags["highway"] {
	case "motorway", "motorway_link", "trunk", "trunk_link":
		a |= AvoidHighways
	}
	if isFerry(tags) {
		a |= AvoidFerries
	}
	return a
}

// isFerry reports a ferry route drawn as a way.
func isFerry(tags map[string]string) bool { return tags["route"] == "ferry" }

// ferryKmh is a ferry's speed where the way gives no duration.
const ferryKmh = 5

// ferryRules is how costing c may take a ferry: both ways (unless
// oneway) at 5 km/h, unless the access tags of c close it. A duration
// tag sets the speed once the way's length is known (ferrySpeed).
func ferryRules(tags map[string]string, c Costing) (fwd, bwd dirRule) {
	acc := accessOf(tags, c)
	if denied[acc] || c == Bicycle && bikeDenied[acc] || acc == "private" && c == Pedestrian {
		return
	}
	fwd = dirRule{kmh: ferryKmh, rate: 1}
	bwd = fwd
	switch tags["oneway"] {
	case "yes", "1", "true":
		bwd = dirRule{}
	case "-1":
		fwd = dirRule{}
	}
	return
}

// ferrySpeed sets the speed of every costing on a ferry way whose
// duration tag is readable to its length over that duration.
func ferrySpeed(x *extract, w *way, m *wayMeta) {
	sec := parseDuration(w.tags["duration"])
	if sec <= 0 {
		return
	}
	meters := 0.0
	for k := 1; k < len(w.refs); k++ {
		p, ok1 := x.coords[w.refs[k-1]]
		q, ok2 := x.coords[w.refs[k]]
		if ok1 && ok2 {
			meters += geo.Distance(geo.Point{Lat: p[0], Lon: p[1]}, geo.Point{Lat: q[0], Lon: q[1]})
		}
	}
	if meters <= 0 {
		return
	}
	kmh := float32(meters / sec * 3.6)
	for c := range m.rules {
		for d := range m.rules[c] {
			if m.rules[c][d].usable() {
				m.rules[c][d].kmh = kmh
			}
		}
	}
}

// parseDuration reads a duration tag, seconds: "HH:MM", "HH:MM:SS",
// "MM" or ISO 8601 ("PT1H30M"); 0 when unreadable.
func parseDuration(v string) float64 {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "PT") {
		total, num := 0.0, ""
		for _, r := range v[2:] {
			if r >= '0' && r <= '9' || r == '.' {
				num += string(r)
				continue
			}
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0
			}
			switch r {
			case 'H':
				total += 3600 * f
			case 'M':
				total += 60 * f
			case 'S':
				total += f
			default:
				return 0
			}
			num = ""
		}
		if num != "" {
			return 0
		}
		return total
	}
	parts := strings.Split(v, ":")
	if len(parts) > 3 || v == "" {
		return 0
	}
	total := 0.0
	scale := []float64{60, 3600}
	if len(parts) == 3 {
		scale = []float64{1, 60, 3600}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		n, err := strconv.ParseUint(strings.TrimSpace(parts[i]), 10, 32)
		if err != nil {
			return 0
		}
		total += float64(n) * scale[len(parts)-1-i]
	}
	return total
}

// wayFilter is which ways costing c may use with avoid left out, for a
// truck of size s; nil when every way its rules allow.
func (g *Graph) wayFilter(c Costing, s TruckSize, avoid Avoid) func(int32) bool {
	if c != Truck && avoid == 0 {
		return nil
	}
	return func(w int32) bool {
		m := &g.ways[w]
		return m.avoid&avoid == 0 && (c != Truck || fitsSize(m.limit, s))
	}
}

// MatrixAvoiding is Matrix with the roads of avoid left out (for the
// route optimizer's traffic restrictions).
func (g *Graph) MatrixAvoiding(sources, targets [][2]float64, c Costing, avoid Avoid) [][]Cost {
	return g.Route(Request{Sources: sources, Targets: targets, Costing: c, Avoid: avoid}).Costs
}

// MatrixObserved is MatrixAvoiding with the edges obs knows timed at its
// speeds (Request.Observed): the route optimizer's real_time_traffic.
func (g *Graph) MatrixObserved(sources, targets [][2]float64, c Costing, avoid Avoid, obs Speeds) [][]Cost {
	return g.Route(Request{Sources: sources, Targets: targets, Costing: c, Avoid: avoid, Observed: obs}).Costs
}
