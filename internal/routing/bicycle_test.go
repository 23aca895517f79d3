package routing

import (
	"math"
	"strings"
	"testing"
)

// bikeWay is the bicycle's speed forward and backward on a way with
// these tags ("key value key value…", "5_mph" for "5 mph"), 0 where it
// may not go.
func bikeWay(tags string) (fwd, bwd float64) {
	kv := strings.Fields(tags)
	for i := range kv {
		kv[i] = strings.ReplaceAll(kv[i], "_mph", " mph")
	}
	f, b := wayRules(tagMap(kv), Bicycle)
	if f.rate != 1 && f.usable() || b.rate != 1 && b.usable() {
		return -1, -1 // the bicycle weighs a way by its time only
	}
	return float64(f.kmh), float64(b.kmh)
}

// TestBicycleWayRules: OSRM's bicycle profile, rule by rule: speeds per
// class, pushing, surfaces, maxspeed, access, one-ways and cycle lanes.
func TestBicycleWayRules(t *testing.T) {
	for _, tc := range []struct {
		tags     string
		fwd, bwd float64
	}{
		// speeds per class
		{"highway cycleway", 15, 15}, {"highway primary", 15, 15}, {"highway residential", 15, 15},
		{"highway service service alley", 15, 15}, {"highway track", 12, 12}, {"highway path", 13, 13},
		{"highway trunk", 0, 0}, {"highway motorway", 0, 0}, {"highway bridleway", 0, 0},
		// pushing where riding is not allowed
		{"highway footway", 4, 4}, {"highway pedestrian", 4, 4}, {"highway steps", 2, 2},
		{"highway footway foot no", 0, 0}, {"highway trunk foot yes", 4, 4},
		{"highway pedestrian area yes", 4, 4}, {"highway bridleway foot:forward yes", 4, 0},
		{"highway footway bicycle yes", 15, 15}, {"highway footway bicycle designated", 15, 15},
		{"highway residential bicycle dismount", 4, 4}, {"highway steps bicycle dismount", 4, 4},
		// surfaces cap riding and pushing
		{"highway residential surface gravel", 6, 6}, {"highway path surface ground", 10, 10},
		{"highway cycleway surface paving_stones", 10, 10}, {"highway track surface asphalt", 12, 12},
		{"highway residential surface dirt", 8, 8}, {"highway footway surface sand", 3, 3},
		// a posted maxspeed below the bicycle's caps it; zone codes do not
		{"highway service maxspeed 5_mph", 8.05, 8.05}, {"highway service maxspeed US:urban", 15, 15},
		{"highway service maxspeed:forward 10 maxspeed 20", 10, 15},
		// access: bicycle, vehicle, access
		{"highway residential access private", 0, 0}, {"highway residential access delivery", 0, 0},
		{"highway residential bicycle use_sidepath", 0, 0}, {"highway residential access no bicycle yes", 15, 15},
		{"highway residential access psv", 15, 15}, {"highway residential access destination", 15, 15},
		{"highway residential access customers", 15, 15}, {"highway residential vehicle no", 0, 0},
		{"highway residential motor_vehicle no", 15, 15},
		// left out whatever the class
		{"highway construction", 0, 0}, {"highway residential construction yes", 0, 0},
		{"highway residential construction minor", 15, 15}, {"highway residential proposed primary", 0, 0},
		{"highway residential impassable yes", 0, 0},
		// one-ways: pushed against, except roundabouts and motorways
		{"highway residential oneway yes", 15, 4}, {"highway residential oneway -1", 4, 15},
		{"highway residential oneway yes foot no", 15, 0}, {"highway tertiary junction roundabout", 15, 0},
		{"highway residential oneway yes oneway:bicycle no", 15, 15}, {"highway residential oneway:bicycle yes", 15, 4},
		{"highway residential oneway yes cycleway opposite", 15, 15},
		{"highway residential oneway yes cycleway:left opposite_lane", 15, 15},
		{"highway residential oneway yes cycleway:right lane", 15, 4},
		{"highway residential oneway -1 cycleway lane", 4, 15},
		// a cycle lane opens a road the bicycle would not ride
		{"highway trunk cycleway lane", 15, 15}, {"highway trunk cycleway:right lane", 15, 0},
		{"highway trunk cycleway:both track", 15, 15},
		// ferries at 5 km/h
		{"route ferry", 5, 5}, {"route ferry bicycle no", 0, 0},
	} {
		f, b := bikeWay(tc.tags)
		if math.Abs(f-tc.fwd) > 0.01 || math.Abs(b-tc.bwd) > 0.01 {
			t.Errorf("%q: %.2f / %.2f km/h, want %.2f / %.2f", tc.tags, f, b, tc.fwd, tc.bwd)
		}
	}
}

// TestBicycleNodes: only barrier=yes, walls and fences and an access tag
// that closes the way (not on a crossing) stop a bicycle at a node.
func TestBicycleNodes(t *testing.T) {
	for _, tc := range []struct {
		tags  string
		block bool
	}{
		{"barrier bollard", false}, {"barrier stile", false}, {"barrier kissing_gate", false}, {"barrier turnstile", false},
		{"barrier gate", false}, {"barrier cycle_barrier", false}, {"barrier hedge", false},
		{"barrier yes", true}, {"barrier wall", true}, {"barrier fence", true},
		{"barrier gate access private", true}, {"bicycle no", true}, {"access delivery", true},
		{"barrier fence bicycle yes", false}, {"highway crossing bicycle no", false}, {"access psv barrier bollard", false},
	} {
		if got := nodeBlocks(tagMap(strings.Fields(tc.tags)), Bicycle); got != tc.block {
			t.Errorf("%q blocks bicycles: %v, want %v", tc.tags, got, tc.block)
		}
	}
}

// TestBicycleTakesTheQuickestRoad: a primary road straight between two
// places and a quiet residential detour a third longer: the bicycle
// rides the primary road (OSRM's bicycle weighs time, not busyness), and
// the answer's time is that route's own.
func TestBicycleTakesTheQuickestRoad(t *testing.T) {
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.99).node(3, 40.0032, -82.995)
	n.way(10, "highway primary", 1, 2).way(11, "highway residential", 1, 3, 2)
	n.node(4, 40, -83.001).node(5, 40, -82.989)
	n.way(12, "highway residential", 4, 1).way(13, "highway residential", 2, 5)
	g := n.graph()
	if d, p := n.meters(1, 3, 2), n.meters(1, 2); d < 1.2*p || d > 1.4*p {
		t.Fatalf("detour %.0f m against %.0f m", d, p)
	}
	got := route(g, Bicycle, n.along(4, 1, 0.5), n.along(2, 5, 0.5))
	want := n.meters(4, 1)/2 + n.meters(1, 2) + n.meters(2, 5)/2
	if !got.OK || !near(got.Meters, want, 1) || !near(got.Seconds, want/(15/3.6), 1) {
		t.Errorf("bicycle: %+v, want the primary road, %.0f m in %.0f s", got, want, want/(15/3.6))
	}
	// gravel makes the primary road slower than the detour
	n.x.ways[0].tags["surface"] = "gravel"
	g = n.graph()
	got = route(g, Bicycle, n.along(4, 1, 0.5), n.along(2, 5, 0.5))
	if !got.OK || got.Meters < n.meters(1, 3, 2) {
		t.Errorf("bicycle on gravel: %+v, want the detour", got)
	}
}

// TestBicycleDismount: a bicycle=dismount bridge is pushed at 4 km/h.
func TestBicycleDismount(t *testing.T) {
	n := newNet(t)
	n.node(1, 40, -83).node(2, 40, -82.998).node(3, 40, -82.996)
	n.way(10, "highway residential", 1, 2).way(11, "highway residential bicycle dismount", 2, 3)
	g := n.graph()
	got := route(g, Bicycle, n.at(1), n.at(3))
	want := n.meters(1, 2)/(15/3.6) + n.meters(2, 3)/(bikeWalkKmh/3.6)
	if !got.OK || !near(got.Seconds, want, 1) {
		t.Errorf("bicycle over a dismount bridge: %+v, want %.1f s", got, want)
	}
}
