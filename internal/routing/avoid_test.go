package routing

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The avoid network: from A (1) to B (2) a motorway (the quickest), a
// toll primary road (next) and a residential detour; from C (20) to D
// (21) a ferry of 5 minutes and a long road round the bay; C hangs off A.
// Spurs 7–1 and 2–8, 23–20 and 21–24 hold the locations.
//
//	      22               40.035
//	   /      \
//	23 20 ~~~~ 21 24       40.02 (ferry 20–21)
//	   |
//	   |  3                40.0032
//	7  1 ====== 2  8       40 (motorway 1–2)
//	      4                39.997 (toll 1–4–2)
var (
	avoidNodes = []osmNode{
		{1, 40, -83}, {2, 40, -82.99}, {3, 40.0032, -82.995}, {4, 39.997, -82.995},
		{7, 40, -83.001}, {8, 40, -82.989},
		{20, 40.02, -83}, {21, 40.02, -82.99}, {22, 40.035, -82.995}, {23, 40.02, -83.001}, {24, 40.02, -82.989},
	}
	avoidWays = []osmWay{
		{10, []int64{1, 2}, []string{"highway", "motorway", "oneway", "no"}},
		{11, []int64{1, 4, 2}, []string{"highway", "primary", "toll", "yes"}},
		{12, []int64{1, 3, 2}, []string{"highway", "residential"}},
		{13, []int64{7, 1}, []string{"highway", "residential"}},
		{14, []int64{2, 8}, []string{"highway", "residential"}},
		{15, []int64{1, 20}, []string{"highway", "residential"}},
		{16, []int64{20, 21}, []string{"route", "ferry", "duration", "00:05"}},
		{17, []int64{20, 22, 21}, []string{"highway", "residential"}},
		{18, []int64{23, 20}, []string{"highway", "residential"}},
		{19, []int64{21, 24}, []string{"highway", "residential"}},
	}
)

// avoidPBF is the avoid network as an extract (testdata/avoid.osm.pbf).
func avoidPBF() []byte {
	f := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	return appendFileBlock(f, "OSMData", dataBlock(100, 0, 0, nil, avoidNodes, avoidWays), false)
}

func avoidNet(t *testing.T) *net {
	n := newNet(t)
	for _, p := range avoidNodes {
		n.node(p.id, p.lat, p.lon)
	}
	for _, w := range avoidWays {
		n.x.ways = append(n.x.ways, way{id: w.id, refs: w.refs, tags: tagMap(w.tags)})
	}
	return n
}

func routeAvoiding(g *Graph, c Costing, avoid Avoid, from, to [2]float64) Cost {
	return g.MatrixAvoiding([][2]float64{from}, [][2]float64{to}, c, avoid)[0][0]
}

// TestAvoid: leaving motorways, toll roads or ferries out changes the
// route and its cost, each set on its own graph.
func TestAvoid(t *testing.T) {
	n := avoidNet(t)
	g := n.graph()
	a, b := n.along(7, 1, 0.5), n.along(2, 8, 0.5)
	spurs := n.meters(7, 1)/2 + n.meters(2, 8)/2
	for _, tc := range []struct {
		avoid Avoid
		via   []int64
	}{
		{0, []int64{1, 2}}, {AvoidTolls, []int64{1, 2}}, {AvoidFerries, []int64{1, 2}},
		{AvoidHighways, []int64{1, 4, 2}}, {AvoidHighways | AvoidTolls, []int64{1, 3, 2}},
		{AvoidHighways | AvoidTolls | AvoidFerries, []int64{1, 3, 2}},
	} {
		got := routeAvoiding(g, Auto, tc.avoid, a, b)
		if want := spurs + n.meters(tc.via...); !got.OK || !near(got.Meters, want, 1) {
			t.Errorf("auto avoiding %q: %+v, want %.0f m via %v", tc.avoid, got, want, tc.via)
		}
	}
	// a truck of its own size (answered without the hierarchy: the road
	// round the bay is posted for 40 t) avoids too
	posted := avoidNet(t)
	posted.x.ways[7].tags["maxweight"] = "40"
	sized := posted.graph().Route(Request{Sources: [][2]float64{a}, Targets: [][2]float64{b}, Costing: Truck, Truck: &TruckSize{Height: 3, Weight: 50}, Avoid: AvoidHighways | AvoidTolls})
	if got, want := sized.Costs[0][0], spurs+n.meters(1, 3, 2); !got.OK || !near(got.Meters, want, 1) {
		t.Errorf("a 50 t truck avoiding highways and tolls: %+v, want %.0f m", got, want)
	}
	plain, detour := routeAvoiding(g, Auto, 0, a, b), routeAvoiding(g, Auto, AvoidHighways|AvoidTolls, a, b)
	if detour.Seconds < plain.Seconds+60 {
		t.Errorf("the detour takes %.0f s, the motorway %.0f s", detour.Seconds, plain.Seconds)
	}
	// the ferry: 5 minutes, or the long way round without it
	c, d := n.along(23, 20, 0.5), n.along(21, 24, 0.5)
	ends := n.meters(23, 20)/2 + n.meters(21, 24)/2
	for _, cost := range []Costing{Auto, Bicycle, Pedestrian} {
		kmh := map[Costing]float64{Auto: 25, Bicycle: 15, Pedestrian: 5}[cost]
		ferry := routeAvoiding(g, cost, 0, c, d)
		if !ferry.OK || !near(ferry.Meters, ends+n.meters(20, 21), 1) || !near(ferry.Seconds, 300+ends/(kmh/3.6), 3) {
			t.Errorf("%s by ferry: %+v, want %.0f m in %.0f s", cost, ferry, ends+n.meters(20, 21), 300+ends/(kmh/3.6))
		}
		road := routeAvoiding(g, cost, AvoidFerries, c, d)
		if want := ends + n.meters(20, 22, 21); !road.OK || !near(road.Meters, want, 1) {
			t.Errorf("%s avoiding ferries: %+v, want the road, %.0f m", cost, road, want)
		}
	}
	// no location is placed on a ferry
	res := g.Route(Request{Sources: [][2]float64{n.along(20, 21, 0.5)}, Targets: [][2]float64{d}, Costing: Pedestrian})
	if s := res.Sources[0]; !s.OK || s.Meters < 100 {
		t.Errorf("a location on the ferry line snapped %+v, want onto a road", s)
	}
	// kinds not defined avoid nothing
	if got := routeAvoiding(g, Auto, 1<<6, a, b); !near(got.Meters, plain.Meters, 0.1) {
		t.Errorf("an undefined avoid kind changed the route: %+v", got)
	}
}

func TestAvoidNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Avoid
		ok   bool
	}{{"tolls", AvoidTolls, true}, {"highways", AvoidHighways, true}, {"ferries", AvoidFerries, true}, {"toll", 0, false}, {"", 0, false}} {
		if a, ok := ParseAvoid(tc.name); a != tc.a || ok != tc.ok {
			t.Errorf("ParseAvoid(%q) = %v, %v", tc.name, a, ok)
		}
	}
	if s := (AvoidTolls | AvoidFerries).String(); s != "tolls+ferries" {
		t.Errorf("String: %q", s)
	}
	if !reflect.DeepEqual(AvoidNames(), []string{"tolls", "highways", "ferries"}) {
		t.Errorf("AvoidNames: %v", AvoidNames())
	}
	for _, tc := range []struct {
		v    string
		want float64
	}{{"00:05", 300}, {"1:30", 5400}, {"0:01:30", 90}, {"45", 2700}, {"PT1H30M", 5400}, {"PT90S", 90}, {"x", 0}, {"", 0}, {"1:2:3:4", 0}, {"PT5", 0}} {
		if got := parseDuration(tc.v); got != tc.want {
			t.Errorf("parseDuration(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestAvoidSetIsSaved: a graph without an avoid set's roads is built on
// first use, saved in a file of its own, and read back by the next open.
func TestAvoidSetIsSaved(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "avoid.osm.pbf")
	if err := os.WriteFile(src, avoidPBF(), 0o644); err != nil {
		t.Fatal(err)
	}
	n := avoidNet(t)
	pts := [][2]float64{n.along(7, 1, 0.5), n.along(2, 8, 0.5)}
	first, err := Load(src, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := first.MatrixAvoiding(pts, pts, Auto, AvoidHighways)
	// the extract's ferry is read: 5 minutes across
	if got := first.Matrix([][2]float64{n.at(20)}, [][2]float64{n.at(21)}, Pedestrian)[0][0]; !got.OK || !near(got.Seconds, 300, 1) {
		t.Errorf("the ferry of the extract: %+v, want 300 s", got)
	}
	if _, c := first.LoadedAvoiding(Auto, AvoidHighways); c {
		t.Errorf("the first open read an avoid graph it had just built")
	}
	saved, _ := filepath.Glob(filepath.Join(dir, "roads-*-"+profileVersion+".auto-avoid-highways"))
	if len(saved) != 1 {
		t.Fatalf("saved %v, want the auto graph without highways", saved)
	}
	again, err := Load(src, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.MatrixAvoiding(pts, pts, Auto, AvoidHighways); !reflect.DeepEqual(got, want) {
		t.Errorf("the saved graph answers %v, the built one %v", got, want)
	}
	if _, c := again.LoadedAvoiding(Auto, AvoidHighways); !c {
		t.Errorf("the second open built the avoid graph again")
	}
	// a file holding another set is not taken for this one
	b, err := os.ReadFile(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(saved[0], "avoid-highways", "avoid-tolls", 1)
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	third, err := Load(src, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	third.MatrixAvoiding(pts, pts, Auto, AvoidTolls)
	if _, c := third.LoadedAvoiding(Auto, AvoidTolls); c {
		t.Errorf("the tolls graph was read from the highways file")
	}
}
