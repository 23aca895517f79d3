package routing

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

// net builds an extract by hand: nodes, ways and restrictions, for tests
// of the road rules on networks small enough to reason about.
type net struct {
	t *testing.T
	x *extract
}

func newNet(t *testing.T) *net {
	return &net{t: t, x: &extract{coords: map[int64][2]float64{}, nodeTags: map[int64]map[string]string{}}}
}

func tagMap(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func (n *net) node(id int64, lat, lon float64, tags ...string) *net {
	n.x.coords[id] = [2]float64{lat, lon}
	if len(tags) > 0 {
		n.x.nodeTags[id] = tagMap(tags)
	}
	return n
}

func (n *net) way(id int64, tags string, refs ...int64) *net {
	n.x.ways = append(n.x.ways, way{id: id, refs: refs, tags: tagMap(strings.Fields(tags))})
	return n
}

func (n *net) restrict(kind string, from, via, to int64) *net {
	r, ok := restrictionOf([]member{{1, from, "from"}, {0, via, "via"}, {1, to, "to"}}, map[string]string{"type": "restriction", "restriction": kind})
	if !ok {
		n.t.Fatalf("restriction %s not read", kind)
	}
	n.x.restrictions = append(n.x.restrictions, r)
	return n
}

func (n *net) graph() *Graph {
	n.t.Helper()
	g, err := buildGeometry(n.x)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := g.buildCostings(); err != nil {
		n.t.Fatal(err)
	}
	return g
}

func (n *net) at(id int64) [2]float64 { return n.x.coords[id] }

// along is the point frac of the way from node a to node b.
func (n *net) along(a, b int64, frac float64) [2]float64 {
	p, q := n.at(a), n.at(b)
	return [2]float64{p[0] + frac*(q[0]-p[0]), p[1] + frac*(q[1]-p[1])}
}

func (n *net) meters(ids ...int64) float64 {
	m := 0.0
	for i := 1; i < len(ids); i++ {
		a, b := n.at(ids[i-1]), n.at(ids[i])
		m += geo.Distance(geo.Point{Lat: a[0], Lon: a[1]}, geo.Point{Lat: b[0], Lon: b[1]})
	}
	return m
}

func route(g *Graph, c Costing, from, to [2]float64) Cost {
	return g.Matrix([][2]float64{from}, [][2]float64{to}, c)[0][0]
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// plus is the plus-shaped junction C with its four spokes and a ring
// road through their ends:
//
//	NW ── N ── NE
//	|     |     |
//	W ─── C ─── E
//	|     |     |
//	SW ── S ── SE
func plus(t *testing.T) *net {
	n := newNet(t)
	const d = 0.001
	n.node(1, 40, -83).node(2, 40, -83+d).node(3, 40+d, -83).node(4, 40, -83-d).node(5, 40-d, -83)
	n.node(6, 40+d, -83+d).node(7, 40+d, -83-d).node(8, 40-d, -83-d).node(9, 40-d, -83+d)
	n.way(10, "highway residential", 5, 1).way(11, "highway residential", 1, 3)
	n.way(12, "highway residential", 4, 1).way(13, "highway residential", 1, 2)
	n.way(20, "highway residential", 2, 6, 3).way(21, "highway residential", 3, 7, 4)
	n.way(22, "highway residential", 4, 8, 5).way(23, "highway residential", 5, 9, 2)
	return n
}

func TestTurnRestrictions(t *testing.T) {
	from := plus(t).along(5, 1, 0.5) // on the south spoke, heading north
	west := plus(t).along(4, 1, 0.5)
	east := plus(t).along(1, 2, 0.5)
	free := plus(t)
	g := free.graph()
	direct := route(g, Auto, from, west)
	if !direct.OK || !near(direct.Meters, free.meters(5, 1)/2+free.meters(4, 1)/2, 1) {
		t.Fatalf("left turn at C: %+v", direct)
	}
	n := plus(t).restrict("no_left_turn", 10, 1, 12)
	g = n.graph()
	for _, c := range []Costing{Auto, Truck} {
		got := route(g, c, from, west)
		if !got.OK || got.Meters < direct.Meters+100 {
			t.Errorf("%s with no_left_turn: %+v, want a route round the block, longer than %.0f m", c, got, direct.Meters)
		}
	}
	if got := route(g, Bicycle, from, west); !got.OK || !near(got.Meters, direct.Meters, 1) {
		t.Errorf("bicycle ignores a plain restriction: %+v", got)
	}
	if got := route(g, Auto, from, east); !got.OK || !near(got.Meters, free.meters(5, 1)/2+free.meters(1, 2)/2, 1) {
		t.Errorf("right turn beside a no_left_turn: %+v", got)
	}
	n = plus(t).restrict("only_straight_on", 10, 1, 11)
	g = n.graph()
	if got := route(g, Auto, from, east); !got.OK || got.Meters < direct.Meters+100 {
		t.Errorf("only_straight_on: right turn taken: %+v", got)
	}
	if got := route(g, Auto, from, n.along(1, 3, 0.5)); !got.OK || !near(got.Meters, n.meters(5, 1)/2+n.meters(1, 3)/2, 1) {
		t.Errorf("only_straight_on: straight on %+v", got)
	}
	// except=motorcar lifts it for cars, not trucks
	n = plus(t)
	r, _ := restrictionOf([]member{{1, 10, "from"}, {0, 1, "via"}, {1, 12, "to"}}, map[string]string{"type": "restriction", "restriction": "no_left_turn", "except": "motorcar"})
	n.x.restrictions = append(n.x.restrictions, r)
	g = n.graph()
	if got := route(g, Auto, from, west); !near(got.Meters, direct.Meters, 1) {
		t.Errorf("except=motorcar: car detoured %+v", got)
	}
	if got := route(g, Truck, from, west); got.Meters < direct.Meters+100 {
		t.Errorf("except=motorcar: truck turned %+v", got)
	}
}

func TestRestrictionRelations(t *testing.T) {
	for _, tc := range []struct {
		tags    map[string]string
		ms      []member
		ok      bool
		only    bool
		costing uint8
	}{
		{map[string]string{"type": "restriction", "restriction": "no_u_turn"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, true, false, 1<<Auto | 1<<Truck},
		{map[string]string{"type": "restriction", "restriction:hgv": "only_right_turn"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, true, true, 1 << Truck},
		{map[string]string{"type": "restriction", "restriction": "no_left_turn"}, []member{{1, 1, "from"}, {1, 2, "via"}, {1, 3, "to"}}, false, false, 0},
		{map[string]string{"type": "restriction", "restriction": "no_left_turn"}, []member{{1, 1, "from"}, {0, 2, "via"}}, false, false, 0},
		{map[string]string{"type": "multipolygon"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, false, false, 0},
		{map[string]string{"type": "restriction", "restriction": "give_way"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, false, false, 0},
		{map[string]string{"type": "restriction", "restriction": "no_right_turn", "except": "motorcar;hgv"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, false, false, 0},
		{map[string]string{"type": "restriction", "restriction:bicycle": "no_right_turn"}, []member{{1, 1, "from"}, {0, 2, "via"}, {1, 3, "to"}}, false, false, 0},
	} {
		r, ok := restrictionOf(tc.ms, tc.tags)
		if ok != tc.ok || ok && (r.only != tc.only || r.costings != tc.costing) {
			t.Errorf("%v %v: %+v %v", tc.tags, tc.ms, r, ok)
		}
	}
}

func TestOneWaysAndTheWayRound(t *testing.T) {
	// a one-way square A→B→C→D→A
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.999).node(3, 39.999, -82.999).node(4, 39.999, -83)
	n.way(10, "highway residential oneway yes", 1, 2).way(11, "highway residential oneway yes", 2, 3)
	n.way(12, "highway residential oneway -1", 1, 4, 3)
	g := n.graph()
	perimeter := n.meters(1, 2, 3, 4, 1)
	ab := n.meters(1, 2)
	src, dst := n.along(1, 2, 0.6), n.along(1, 2, 0.4)
	for _, c := range []Costing{Auto, Truck} {
		if got := route(g, c, dst, src); !got.OK || !near(got.Meters, 0.2*ab, 0.5) {
			t.Errorf("%s ahead on the same edge: %+v, want %.1f m", c, got, 0.2*ab)
		}
		if got := route(g, c, src, dst); !got.OK || !near(got.Meters, perimeter-0.2*ab, 1) {
			t.Errorf("%s behind on a one-way: %+v, want the way round, %.1f m", c, got, perimeter-0.2*ab)
		}
	}
	if got := route(g, Pedestrian, src, dst); !got.OK || !near(got.Meters, 0.2*ab, 0.5) {
		t.Errorf("pedestrian walks back along a one-way: %+v", got)
	}
	// the bicycle pushes back against the one-way (walking pace) rather
	// than ride the long way round
	bike := route(g, Bicycle, src, dst)
	if !bike.OK || !near(bike.Meters, 0.2*ab, 0.5) || !near(bike.Seconds, 0.2*ab/(bikeWalkKmh/3.6), 0.5) {
		t.Errorf("bicycle against a one-way: %+v, want %.1f m pushed", bike, 0.2*ab)
	}
	// with oneway:bicycle=no it rides
	n.x.ways[0].tags["oneway:bicycle"] = "no"
	g = n.graph()
	if got := route(g, Bicycle, src, dst); !near(got.Seconds, 0.2*ab/(15/3.6), 0.5) {
		t.Errorf("contraflow: %+v", got)
	}
	n.x.ways[0].tags = tagMap([]string{"highway", "residential", "oneway", "yes", "cycleway", "opposite_lane"})
	g = n.graph()
	if got := route(g, Bicycle, src, dst); !near(got.Seconds, 0.2*ab/(15/3.6), 0.5) {
		t.Errorf("cycleway=opposite_lane: %+v", got)
	}
}

func TestRoundaboutsAndMotorwaysAreOneWay(t *testing.T) {
	for _, tc := range []struct {
		tags string
		dir  int
	}{
		{"highway tertiary junction roundabout", 1}, {"highway motorway", 1}, {"highway motorway oneway no", 0},
		{"highway residential oneway -1", -1}, {"highway residential oneway reverse", -1}, {"highway residential", 0},
		{"highway residential oneway true", 1}, {"highway residential oneway 1", 1},
	} {
		tags := tagMap(strings.Fields(tc.tags))
		if got := onewayOf(tags, tags["highway"]); got != tc.dir {
			t.Errorf("%s: %d, want %d", tc.tags, got, tc.dir)
		}
	}
}

func TestSignalsAndTurns(t *testing.T) {
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.999, "highway", "traffic_signals").node(3, 40, -82.998)
	n.way(10, "highway residential", 1, 2, 3)
	g := n.graph()
	L := n.meters(1, 2, 3)
	for _, tc := range []struct {
		c   Costing
		kmh float64
	}{{Auto, 25}, {Bicycle, 15}, {Pedestrian, 5}} {
		got := route(g, tc.c, n.at(1), n.at(3))
		if want := L/(tc.kmh/3.6) + 2; !near(got.Seconds, want, 0.3) || !near(got.Meters, L, 0.5) {
			t.Errorf("%s through a signal: %+v, want %.1f s", tc.c, got, want)
		}
	}
	// a left turn costs more than a right turn, which costs more than
	// going straight, at a junction of more than two roads
	g = plus(t).graph()
	p := plus(t)
	straight := route(g, Auto, p.along(5, 1, 0.5), p.along(1, 3, 0.5))
	right := route(g, Auto, p.along(5, 1, 0.5), p.along(1, 2, 0.5))
	left := route(g, Auto, p.along(5, 1, 0.5), p.along(4, 1, 0.5))
	base := func(c Cost) float64 { return c.Meters / (25 / 3.6) }
	ds, dr, dl := straight.Seconds-base(straight), right.Seconds-base(right), left.Seconds-base(left)
	if !(ds < 0.2 && dr > 1 && dl > dr+2 && dl < 8) {
		t.Errorf("turn costs: straight %.2f right %.2f left %.2f s", ds, dr, dl)
	}
}

func TestAccess(t *testing.T) {
	// A and B joined by a private road and by a long public detour
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40.003, -83).node(4, 40.003, -82.998)
	n.way(10, "highway residential access private", 1, 2)
	n.way(11, "highway residential", 1, 3, 4, 2)
	n.node(5, 40.004, -83).way(12, "highway residential", 3, 5) // a dead end to turn round in
	g := n.graph()
	a, b := n.along(1, 3, 0.1), n.along(4, 2, 0.9)
	if got := route(g, Auto, a, b); !got.OK || got.Meters < n.meters(1, 3, 4, 2)*0.8 {
		t.Errorf("auto drove through a private road: %+v", got)
	}
	if res := g.Route(Request{Sources: [][2]float64{a}, Targets: [][2]float64{n.along(1, 2, 0.5)}, Costing: Auto}); !res.Costs[0][0].OK || res.Targets[0].Meters > 1 {
		t.Errorf("a location on a private road is unreachable or placed elsewhere: %+v", res)
	}
	n.x.ways[0].tags = tagMap([]string{"highway", "residential", "motor_vehicle", "no"})
	g = n.graph()
	if got := route(g, Bicycle, a, b); !got.OK || got.Meters > n.meters(1, 2)+200 {
		t.Errorf("bicycle on motor_vehicle=no: %+v, want the short road", got)
	}
	if got := route(g, Auto, a, b); got.Meters < n.meters(1, 3, 4, 2)*0.8 {
		t.Errorf("auto on motor_vehicle=no: %+v", got)
	}
	for _, tc := range []struct {
		tags string
		c    Costing
		ok   bool
	}{
		{"highway footway", Pedestrian, true}, {"highway footway", Auto, false}, {"highway footway bicycle yes", Bicycle, true},
		{"highway steps", Pedestrian, true}, {"highway motorway", Pedestrian, false}, {"highway motorway", Bicycle, false},
		{"highway residential foot no", Pedestrian, false}, {"highway residential access no foot yes", Pedestrian, true},
		{"highway residential hgv no", Truck, false}, {"highway residential hgv no", Auto, true},
		{"highway cycleway", Auto, false}, {"highway track", Auto, false}, {"highway construction", Auto, false},
		{"highway residential area yes", Auto, false}, {"highway service service emergency_access", Auto, false},
	} {
		f, b := wayRules(tagMap(strings.Fields(tc.tags)), tc.c)
		if (f.usable() || b.usable()) != tc.ok {
			t.Errorf("%s on %q: usable %v", tc.c, tc.tags, !tc.ok)
		}
	}
}

func TestMaxspeed(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want float32
	}{
		{"50", 50}, {"50 km/h", 50}, {"30 mph", 48.28}, {"30mph", 48.28}, {"US:urban", 50}, {"none", 0},
		{"signals", 0}, {"-5", 0}, {"NaN", 0}, {"25 mph;35 mph", 40.23}, {"", 0},
	} {
		if got := maxspeed(map[string]string{"maxspeed": tc.v}, "maxspeed"); math.Abs(float64(got-tc.want)) > 0.01 {
			t.Errorf("maxspeed %q: %v, want %v", tc.v, got, tc.want)
		}
	}
	f, _ := wayRules(tagMap([]string{"highway", "residential", "maxspeed", "30 mph"}), Auto)
	if math.Abs(float64(f.kmh)-30*1.609344*0.8) > 0.01 {
		t.Errorf("residential at 30 mph drives %v km/h", f.kmh)
	}
	for _, tc := range []struct {
		v    string
		want float64
	}{{"3.5", 3.5}, {"13'6\"", 4.1148}, {"12 ft", 3.6576}, {"10 t", 10}, {"8000 lbs", 3.6287}, {"default", 0}, {"x", 0}} {
		if got := dimension(tc.v); math.Abs(got-tc.want) > 0.001 {
			t.Errorf("dimension %q: %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestTruckSize(t *testing.T) {
	// A to B under a low bridge, or the long way round
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40.003, -83).node(4, 40.003, -82.998)
	n.way(10, "highway primary maxheight 3.5", 1, 2)
	n.way(11, "highway primary", 1, 3, 4, 2)
	n.node(5, 40.004, -83).way(12, "highway residential", 3, 5)
	g := n.graph()
	a, b := n.along(1, 3, 0.05), n.along(4, 2, 0.95)
	short := n.meters(1, 2)
	if got := route(g, Truck, a, b); got.Meters < short+300 {
		t.Errorf("default truck (4.11 m) under a 3.5 m bridge: %+v", got)
	}
	low := g.Route(Request{Sources: [][2]float64{a}, Targets: [][2]float64{b}, Costing: Truck, Truck: &TruckSize{Height: 3}})
	if got := low.Costs[0][0]; !got.OK || got.Meters > short+300 {
		t.Errorf("a 3 m truck: %+v, want under the bridge", got)
	}
	if got := route(g, Auto, a, b); got.Meters > short+300 {
		t.Errorf("a car: %+v, want under the bridge", got)
	}
	heavy := g.Route(Request{Sources: [][2]float64{a}, Targets: [][2]float64{b}, Costing: Truck, Truck: &TruckSize{Height: 3, Weight: 40}})
	if got := heavy.Costs[0][0]; !got.OK || got.Meters > short+300 {
		t.Errorf("weight without a posted limit: %+v", got)
	}
}

func TestSnapping(t *testing.T) {
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.99)
	n.way(10, "highway residential", 1, 2)
	// a one-way stub leading out of the network: cars could never leave it
	n.node(3, 40.0005, -82.995).node(4, 40.002, -82.995)
	n.way(11, "highway residential oneway yes", 3, 4)
	n.way(12, "highway residential", 3, n.x.ways[0].refs[0])
	g := n.graph()
	a := n.along(1, 2, 0.5)
	b := [2]float64{a[0], a[1] + 5/(111195*math.Cos(40*math.Pi/180))} // 5 m east
	if got := route(g, Auto, a, b); !got.OK || !near(got.Meters, 5, 0.2) {
		t.Errorf("5 m along the road: %+v", got)
	}
	off := [2]float64{a[0] - 30.0/111195, a[1]} // 30 m south of the road
	res := g.Route(Request{Sources: [][2]float64{off, {0, 0}, {math.NaN(), 0}}, Targets: [][2]float64{b}, Costing: Auto})
	if s := res.Sources[0]; !s.OK || !near(s.Meters, 30, 0.5) {
		t.Errorf("snap 30 m off the road: %+v", s)
	}
	if got := res.Costs[0][0]; !near(got.Meters, 5, 0.2) {
		t.Errorf("the leg to the road counts in the route: %+v", got)
	}
	if s := res.Sources[1]; s.OK || !strings.Contains(s.Reason, "within 2000 m") || res.Costs[1][0].OK {
		t.Errorf("far away: %+v %+v", s, res.Costs[1][0])
	}
	if s := res.Sources[2]; s.OK || s.Reason == "" {
		t.Errorf("NaN: %+v", s)
	}
	// the end of the one-way stub snaps to the network cars can leave
	end := n.at(4)
	res = g.Route(Request{Sources: [][2]float64{end}, Targets: [][2]float64{a}, Costing: Auto})
	if !res.Costs[0][0].OK || res.Sources[0].Meters < 100 {
		t.Errorf("stub end: %+v %+v", res.Sources[0], res.Costs[0][0])
	}
	if s := g.Route(Request{Sources: [][2]float64{end}, Targets: [][2]float64{a}, Costing: Pedestrian}).Sources[0]; s.Meters > 1 {
		t.Errorf("a pedestrian may walk the stub: snapped %+v", s)
	}
}

// randomNet is a grid of streets with random classes, one-ways, signals
// and restrictions.
func randomNet(t *testing.T, rng *rand.Rand, size int) *net {
	n := newNet(t)
	id := func(r, c int) int64 { return int64(r*size + c + 1) }
	for r := 0; r < size; r++ {
		for c := 0; c < size; c++ {
			var tags []string
			if rng.IntN(8) == 0 {
				tags = []string{"highway", "traffic_signals"}
			}
			n.node(id(r, c), 40+float64(r)*0.0009+rng.Float64()*0.0002, -83+float64(c)*0.0011+rng.Float64()*0.0002, tags...)
		}
	}
	classes := []string{"residential", "tertiary", "secondary", "primary", "service", "footway", "cycleway", "living_street"}
	wid := int64(1000)
	type seg struct{ w, a, b int64 }
	var segs []seg
	add := func(a, b int64) {
		if rng.IntN(10) == 0 {
			return
		}
		tags := "highway " + classes[rng.IntN(len(classes))]
		switch rng.IntN(6) {
		case 0:
			tags += " oneway yes"
		case 1:
			tags += " oneway -1"
		}
		if rng.IntN(10) == 0 {
			tags += " maxspeed 20_mph"
		}
		wid++
		n.way(wid, strings.ReplaceAll(tags, "_", ""), a, b)
		segs = append(segs, seg{wid, a, b})
	}
	for r := 0; r < size; r++ {
		for c := 0; c < size; c++ {
			if c+1 < size {
				add(id(r, c), id(r, c+1))
			}
			if r+1 < size {
				add(id(r, c), id(r+1, c))
			}
		}
	}
	for range size {
		s1, s2 := segs[rng.IntN(len(segs))], segs[rng.IntN(len(segs))]
		for _, via := range []int64{s1.a, s1.b} {
			if via == s2.a || via == s2.b {
				kind := "no_left_turn"
				if rng.IntN(3) == 0 {
					kind = "only_straight_on"
				}
				n.restrict(kind, s1.w, via, s2.w)
			}
		}
	}
	return n
}

// TestHierarchyMatchesDijkstra: on random networks, the hierarchy's
// answers are those of a plain Dijkstra over the same turn graph, for
// every costing and every pair of random locations.
func TestHierarchyMatchesDijkstra(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := 0; round < 6; round++ {
		n := randomNet(t, rng, 6+round)
		g := n.graph()
		pts := make([][2]float64, 25)
		for i := range pts {
			pts[i] = [2]float64{40 + rng.Float64()*0.0009*float64(5+round), -83 + rng.Float64()*0.0011*float64(5+round)}
		}
		if round == 0 { // a location twice, and on a junction
			pts[1], pts[2] = pts[0], n.at(8)
		}
		for c := Costing(0); c < numCostings; c++ {
			res := g.Route(Request{Sources: pts, Targets: pts, Costing: c})
			cg, _ := g.costing(c)
			var srcs, dsts [][]phantom
			for _, p := range pts {
				ss, ok := g.snap(p[0], p[1], MaxSnapM, func(e int32) bool { return (cg.keep[2*e] || cg.keep[2*e+1]) && g.startable(e, c) })
				var sp, dp []phantom
				if ok {
					for _, s := range ss {
						sp, dp = append(sp, cg.phantoms(g, s, true)...), append(dp, cg.phantoms(g, s, false)...)
					}
				}
				srcs, dsts = append(srcs, sp), append(dsts, dp)
			}
			a, _ := g.network(c, g.wayFilter(c, defaultTruck, 0))
			ref := plainTable(a, srcs, dsts)
			for i := range pts {
				for j := range pts {
					a, b := res.Costs[i][j], ref[i][j]
					if a.OK != b.OK || a.weight != b.weight {
						t.Fatalf("round %d %s %d→%d: hierarchy %+v, Dijkstra %+v", round, c, i, j, a, b)
					}
					if res.Sources[i].OK && res.Targets[j].OK && !a.OK {
						t.Errorf("round %d %s %d→%d: both snapped, no route", round, c, i, j)
					}
				}
			}
		}
	}
}

func TestTurnCurve(t *testing.T) {
	m := turnModels[Auto]
	prev := -1.0
	for a := 0.0; a <= 180; a += 15 {
		r, l := m.turnSeconds(a), m.turnSeconds(-a)
		if r < prev || l < r || r > m.penalty || l > m.penalty {
			t.Errorf("angle %v: right %.2f left %.2f", a, r, l)
		}
		prev = r
	}
	if s := turnModels[Pedestrian].turnSeconds(90); s != 0 {
		t.Errorf("pedestrians pay %v s to turn", s)
	}
	if fmt.Sprint(Auto, Truck, Bicycle, Pedestrian, Costing(9)) != "auto truck bicycle pedestrian costing(9)" {
		t.Errorf("costing names: %v", fmt.Sprint(Auto, Truck, Bicycle, Pedestrian, Costing(9)))
	}
}

// TestTruckLimits: each posted limit closes a road to a truck bigger
// than posted and leaves it open to a smaller one, the request's size
// deciding (fields left out take the default truck's).
func TestTruckLimits(t *testing.T) {
	for _, tc := range []struct {
		tags         string
		size         TruckSize
		defaultUnder bool // the default truck (4.11 m, 2.6 m, 21.9 m, 36.3 t)
		requestUnder bool // the truck of the request's size
	}{
		{"maxheight 3.5", TruckSize{Height: 3}, false, true},
		{"maxweight 20", TruckSize{Weight: 15}, false, true},
		{"maxweight 40", TruckSize{Weight: 44}, true, false},
		{"maxweight:hgv 30", TruckSize{Weight: 25}, false, true},
		{"maxlength 18", TruckSize{Length: 16}, false, true},
		{"maxlength 25", TruckSize{Length: 30}, true, false},
		{"maxwidth 2.5", TruckSize{Width: 2.4}, false, true},
		{"maxwidth 3", TruckSize{Width: 3.5}, true, false},
		{"maxwidth 3", TruckSize{Height: 3, Weight: 50}, true, true},
	} {
		// A to B over the limited road, or the long way round
		n := newNet(t)
		n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40.003, -83).node(4, 40.003, -82.998)
		n.way(10, "highway primary "+tc.tags, 1, 2)
		n.way(11, "highway primary", 1, 3, 4, 2)
		g := n.graph()
		a, b := n.along(1, 3, 0.05), n.along(4, 2, 0.95)
		short := n.meters(1, 2) + 2*0.05*n.meters(1, 3)
		long := n.meters(1, 3, 4, 2) - 2*0.05*n.meters(1, 3)
		under := func(c Cost) bool { return c.OK && near(c.Meters, short, 1) }
		round := func(c Cost) bool { return c.OK && near(c.Meters, long, 1) }
		if got := route(g, Truck, a, b); under(got) != tc.defaultUnder || !under(got) && !round(got) {
			t.Errorf("%s, default truck: %+v, want under the limit %v (%.0f m, else %.0f m)", tc.tags, got, tc.defaultUnder, short, long)
		}
		size := tc.size
		res := g.Route(Request{Sources: [][2]float64{a}, Targets: [][2]float64{b}, Costing: Truck, Truck: &size})
		if got := res.Costs[0][0]; under(got) != tc.requestUnder || !under(got) && !round(got) {
			t.Errorf("%s, truck %+v: %+v, want under the limit %v (%.0f m, else %.0f m)", tc.tags, tc.size, got, tc.requestUnder, short, long)
		}
		if got := route(g, Auto, a, b); !under(got) {
			t.Errorf("%s, a car: %+v, want the short road", tc.tags, got)
		}
	}
}

// islandNet is a square of two-way primary roads 1–4–3–2 with a short
// road 1–2 posted for 20 t, and north of it a side street 5–6, entered by
// the one-way 4→5 and left by the one-way 6→3, which is posted for 40 t:
//
//	5 ── 6      40.005
//	↑    ↓      (6→3 maxweight 40)
//	4 ── 3      40.003
//	|    |
//	1 ── 2      40.000 (maxweight 20)
//
// The default truck (36.3 t) may leave the side street; a 44 t truck may
// enter it and never leave.
func islandNet(t *testing.T) *net {
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40.003, -82.998).node(4, 40.003, -83)
	n.node(5, 40.005, -83).node(6, 40.005, -82.998)
	n.way(10, "highway primary maxweight 20", 1, 2)
	n.way(11, "highway primary", 1, 4, 3, 2)
	n.way(12, "highway residential oneway yes", 4, 5)
	n.way(13, "highway residential", 5, 6)
	n.way(14, "highway residential oneway yes maxweight 40", 6, 3)
	return n
}

// TestTruckSnapsToItsOwnNetwork: a truck whose size closes other roads
// than the default truck's snaps onto the largest strongly connected
// part of its own network, so a location on a street it could enter and
// never leave is placed on the roads it can leave, and every pair of
// snapped locations has a route.
func TestTruckSnapsToItsOwnNetwork(t *testing.T) {
	n := islandNet(t)
	g := n.graph()
	side := n.along(5, 6, 0.5) // on the side street
	main := n.along(1, 4, 0.2) // on the square
	toSquare := n.meters(4, 5) // from the side street to the square's north side
	pts := [][2]float64{side, main}
	def := g.Route(Request{Sources: pts, Targets: pts, Costing: Truck})
	heavy := g.Route(Request{Sources: pts, Targets: pts, Costing: Truck, Truck: &TruckSize{Weight: 44}})
	for i, r := range []Result{def, heavy} {
		for j := range pts {
			if !r.Sources[j].OK || !r.Targets[j].OK {
				t.Fatalf("result %d, location %d not snapped: %+v %+v", i, j, r.Sources[j], r.Targets[j])
			}
			for k := range pts {
				if !r.Costs[j][k].OK {
					t.Errorf("result %d, %d→%d: both snapped, no route: %+v", i, j, k, r.Costs[j][k])
				}
			}
		}
	}
	if s := def.Sources[0]; s.Meters > 0.5 {
		t.Errorf("default truck: the side street location snapped %.1f m away, want on it", s.Meters)
	}
	if s := heavy.Sources[0]; !near(s.Meters, toSquare, 1) {
		t.Errorf("44 t truck: the side street location snapped %.1f m away, want %.1f m, onto the square", s.Meters, toSquare)
	}
	if s := heavy.Sources[1]; s.Meters > 0.5 {
		t.Errorf("44 t truck: the location on the square snapped %.1f m away", s.Meters)
	}
	// a truck light enough for the short road 1–2 has a network of its
	// own too, and the side street is part of it
	light := g.Route(Request{Sources: pts, Targets: pts, Costing: Truck, Truck: &TruckSize{Weight: 15}})
	if s := light.Sources[0]; !s.OK || s.Meters > 0.5 || !light.Costs[0][1].OK || !light.Costs[1][0].OK {
		t.Errorf("15 t truck: %+v %+v", light.Sources[0], light.Costs)
	}
	// testdata/trucks.osm.pbf, which the API's tests serve, is this network
	fx, err := Load(filepath.Join("testdata", "trucks.osm.pbf"), Options{Costings: []Costing{Truck}})
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []*TruckSize{nil, {Weight: 44}, {Weight: 15}} {
		req := Request{Sources: pts, Targets: pts, Costing: Truck, Truck: size}
		if got, want := fx.Route(req), g.Route(req); !reflect.DeepEqual(got, want) {
			t.Errorf("trucks.osm.pbf, truck %+v: %+v, the hand-built network %+v", size, got, want)
		}
	}
}

// uTurnNet is the plus junction with the south spoke one-way into C,
// only_straight_on from it, and the north spoke ending as end says:
// "dead end" at node 30, halfway to N, joined to nothing; "junction" at
// N on the ring road; "barrier" at N through a bollard at node 31,
// halfway; "leads out" at node 32, halfway, where the only other way on
// is a one-way stub 32→33 no car can leave. It returns the net and the
// node where a car coming north turns round, if it may.
func uTurnNet(t *testing.T, end string) (*net, int64) {
	n := plus(t)
	n.x.ways[0].tags["oneway"] = "yes" // way 10, 5→1
	north := &n.x.ways[1]              // way 11, 1–3
	turn := int64(3)
	switch end {
	case "dead end":
		n.node(30, 40.0005, -83)
		north.refs, turn = []int64{1, 30}, 30
	case "barrier":
		n.node(31, 40.0005, -83, "barrier", "bollard")
		north.refs, turn = []int64{1, 31, 3}, 31
	case "leads out":
		n.node(32, 40.0005, -83).node(33, 40.0005, -82.9995)
		north.refs, turn = []int64{1, 32}, 32
		n.way(15, "highway residential oneway yes", 32, 33)
	case "junction":
	default:
		t.Fatalf("end %q", end)
	}
	return n.restrict("only_straight_on", 10, 1, 11), turn
}

// uTurn is the turn from node a to node b round onto the way back, in
// costing c's turn graph: its cost beyond driving the edge back, seconds,
// the angle the turn curve reads, and false when c may not turn round
// there.
func uTurn(g *Graph, c Costing, n *net, a, b int64) (sec, angle float64, ok bool) {
	n.t.Helper()
	pa, pb := n.at(a), n.at(b)
	at := func(k int32, p [2]float64) bool { return g.lat[k] == p[0] && g.lon[k] == p[1] }
	u := int32(-1)
	for e := int32(0); e < int32(len(g.tail)); e++ {
		first, last := g.ptFirst[e], g.ptFirst[e+1]-1
		switch {
		case at(first, pa) && at(last, pb):
			u = 2 * e
		case at(first, pb) && at(last, pa):
			u = 2*e + 1
		}
	}
	if u < 0 {
		n.t.Fatalf("no edge %d–%d", a, b)
	}
	_, inB := g.nodeBearings(u)
	outB, _ := g.nodeBearings(u ^ 1)
	angle = math.Mod(outB-inB+540, 360) - 180
	arcs, _ := g.network(c, g.wayFilter(c, defaultTruck, 0))
	for i := arcs.first[u]; i < arcs.first[u+1]; i++ {
		if arcs.tw[i].to == u^1 {
			back, _, _ := g.edgeCost(u^1, c)
			return (float64(arcs.tw[i].w) - back) / 10, angle, true
		}
	}
	return 0, angle, false
}

// TestUTurns: cars and trucks turn round only at a dead end, at a
// barrier, or where every other way on leads out of the network, for 20
// and 30 s on top of the turn curve at a full reversal; cyclists (20 s)
// and pedestrians (2 s) turn round at any junction.
func TestUTurns(t *testing.T) {
	for _, tc := range []struct {
		end     string
		c       Costing
		ok      bool
		penalty float64 // seconds, beyond the turn curve
	}{
		{"dead end", Auto, true, 20}, {"dead end", Truck, true, 30}, {"dead end", Bicycle, true, 20}, {"dead end", Pedestrian, true, 2},
		{"junction", Auto, false, 0}, {"junction", Truck, false, 0}, {"junction", Bicycle, true, 20}, {"junction", Pedestrian, true, 2},
		{"barrier", Auto, true, 20}, {"barrier", Truck, true, 30}, {"barrier", Bicycle, true, 20}, {"barrier", Pedestrian, true, 2},
		{"leads out", Auto, true, 20}, {"leads out", Truck, true, 30}, {"leads out", Bicycle, true, 20}, {"leads out", Pedestrian, true, 2},
	} {
		n, end := uTurnNet(t, tc.end)
		g := n.graph()
		sec, angle, ok := uTurn(g, tc.c, n, 1, end)
		if ok != tc.ok {
			t.Errorf("%s, %s: may turn round %v, want %v", tc.end, tc.c, ok, tc.ok)
			continue
		}
		if want := tc.penalty + turnModels[tc.c].turnSeconds(angle); ok && !near(sec, want, 0.06) {
			t.Errorf("%s, %s: turning round costs %.2f s, want %.2f s (%.0f s and the curve at %.0f°)", tc.end, tc.c, sec, want, tc.penalty, angle)
		}
	}
	if s := turnModels[Pedestrian].turnSeconds(180); s != 0 {
		t.Errorf("pedestrians pay %v s for the turn itself", s)
	}
	// routes: from the south spoke, only straight on, to the west spoke.
	// A car goes up the north spoke, turns round where it may and comes
	// back to turn right; at the junction N it may not, and goes round
	// the ring instead.
	for _, tc := range []struct {
		c       Costing
		kmh     float64
		penalty float64
	}{{Auto, 25, 20}, {Truck, 20, 30}} {
		m := turnModels[tc.c]
		for _, end := range []string{"dead end", "barrier", "leads out", "junction"} {
			n, turn := uTurnNet(t, end)
			g := n.graph()
			from, to := n.along(5, 1, 0.5), n.along(4, 1, 0.5)
			got := route(g, tc.c, from, to)
			ends := n.meters(5, 1)/2 + n.meters(4, 1)/2
			if end == "junction" {
				if want := ends + n.meters(1, 3, 7, 4); !got.OK || !near(got.Meters, want, 1) {
					t.Errorf("%s, %s: %+v, want round the ring, %.1f m", tc.c, end, got, want)
				}
				continue
			}
			want := ends + 2*n.meters(1, turn)
			_, angle, _ := uTurn(g, tc.c, n, 1, turn)
			sec := want/(tc.kmh/3.6) + m.turnSeconds(0) + m.turnSeconds(90) + tc.penalty + m.turnSeconds(angle)
			if !got.OK || !near(got.Meters, want, 1) || !near(got.Seconds, sec, 0.3) {
				t.Errorf("%s, %s: %+v, want to turn round at node %d: %.1f m, %.1f s", tc.c, end, got, turn, want, sec)
			}
		}
	}
}
