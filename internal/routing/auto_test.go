package routing

import (
	"math"
	"strings"
	"testing"
)

// TestPrivateServiceRoads: as OSRM's car profile, a location beside a
// private service road is placed on the nearest other road, while a car
// may still drive the service road to reach what lies on it; a private
// residential street and bicycles and pedestrians keep snapping as before.
func TestPrivateServiceRoads(t *testing.T) {
	n := newNet(t)
	// a public street 1–2 and, 100 m north, a private driveway 3–4 off a
	// public link 2–5–4
	n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40.0009, -83).node(4, 40.0009, -82.998).node(5, 40.00045, -82.998)
	n.way(10, "highway residential", 1, 2).way(11, "highway service access private", 3, 4).way(12, "highway residential", 2, 5, 4)
	g := n.graph()
	beside := n.along(3, 4, 0.3) // on the driveway itself
	res := g.Route(Request{Sources: [][2]float64{beside}, Targets: [][2]float64{n.at(1)}, Costing: Auto})
	if s := res.Sources[0]; !s.OK || s.Meters < 40 {
		t.Errorf("auto snapped onto the private service road: %+v", s)
	}
	for _, c := range []Costing{Truck} {
		res := g.Route(Request{Sources: [][2]float64{beside}, Targets: [][2]float64{n.at(1)}, Costing: c})
		if s := res.Sources[0]; !s.OK || s.Meters < 40 {
			t.Errorf("%s snapped onto the private service road: %+v", c, s)
		}
	}
	n.x.ways[1].tags = tagMap(strings.Fields("highway residential access private"))
	g = n.graph()
	res = g.Route(Request{Sources: [][2]float64{beside}, Targets: [][2]float64{n.at(1)}, Costing: Auto})
	if s := res.Sources[0]; !s.OK || s.Meters > 1 || !res.Costs[0][0].OK {
		t.Errorf("a private residential street: %+v %+v, want the location on it", s, res.Costs[0][0])
	}
	if noStartOf(tagMap(strings.Fields("highway service access private"))) != 1<<Auto|1<<Truck ||
		noStartOf(tagMap(strings.Fields("highway service access private motor_vehicle yes"))) != 0 ||
		noStartOf(tagMap(strings.Fields("highway service service driveway"))) != 0 {
		t.Errorf("noStartOf")
	}
}

// TestCarSurfaces: the surface, tracktype and smoothness cap a car's
// speed, posted or not, as OSRM's car profile.
func TestCarSurfaces(t *testing.T) {
	for _, tc := range []struct {
		tags string
		kmh  float64
	}{
		{"highway residential", 25}, {"highway residential surface asphalt", 25}, {"highway primary surface unpaved", 40},
		{"highway primary surface gravel maxspeed 80", 40}, {"highway secondary surface compacted", 55},
		{"highway secondary surface paving_stones", 55}, {"highway primary surface paving_stones", 60},
		{"highway residential surface mud", 10}, {"highway service tracktype grade5", 15},
		{"highway primary tracktype grade2", 40}, {"highway primary smoothness very_bad", 20},
		{"highway primary smoothness impassable", 0}, {"highway primary surface sand smoothness horrible", 10},
	} {
		f, _ := wayRules(tagMap(strings.Fields(tc.tags)), Auto)
		if math.Abs(float64(f.kmh)-tc.kmh) > 0.01 {
			t.Errorf("%q: %.1f km/h, want %.1f", tc.tags, f.kmh, tc.kmh)
		}
	}
}

// TestNarrowRoads: a road 3 m wide or less, or with one lane for both
// directions, weighs double its time for cars; a side road 1.25 times.
func TestNarrowRoads(t *testing.T) {
	for _, tc := range []struct {
		tags string
		rate float64
	}{
		{"highway residential", 1}, {"highway residential width 3", 0.5}, {"highway residential width 2.5", 0.5},
		{"highway residential width 4", 1}, {"highway residential lanes 1", 0.5}, {"highway residential lanes 1 oneway yes", 1},
		{"highway residential lanes 2", 1}, {"highway residential side_road yes", 0.8}, {"highway service service alley lanes 1", 0.5},
		{"highway residential width narrow", 1},
	} {
		f, _ := wayRules(tagMap(strings.Fields(tc.tags)), Auto)
		if math.Abs(float64(f.rate)-tc.rate) > 0.001 || !near(float64(f.kmh), 25, 10) {
			t.Errorf("%q: rate %.2f, want %.2f", tc.tags, f.rate, tc.rate)
		}
	}
	// between a one-lane two-way street and a wide one a third longer,
	// the car takes the wide one, and its time is that route's own
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.99).node(3, 40.0032, -82.995).node(4, 40, -83.001).node(5, 40, -82.989)
	n.way(10, "highway residential lanes 1", 1, 2).way(11, "highway residential", 1, 3, 2)
	n.way(12, "highway residential", 4, 1).way(13, "highway residential", 2, 5)
	g := n.graph()
	got := route(g, Auto, n.along(4, 1, 0.5), n.along(2, 5, 0.5))
	want := n.meters(4, 1)/2 + n.meters(1, 3, 2) + n.meters(2, 5)/2
	if !got.OK || !near(got.Meters, want, 1) || got.Seconds > want/(25/3.6)+15 {
		t.Errorf("car beside a one-lane street: %+v, want the wide street, %.0f m", got, want)
	}
}
