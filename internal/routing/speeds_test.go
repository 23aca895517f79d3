package routing

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"
)

func TestPostedValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kmh  float32
		want bool
	}{
		{"50", 50, true}, {"50 km/h", 50, true}, {"30 mph", 48.28, true}, {"30mph", 48.28, true},
		{"DE:urban", 50, true}, {"de:rural", 100, true}, {"US:urban", 40.23, true}, {"GB:nsl_single", 96.56, true},
		{"40;50", 40, true}, {"none", 0, false}, {"signals", 0, false}, {"walk", 0, false},
		{"XX:urban", 0, false}, {"", 0, false}, {"-5", 0, false}, {"fast", 0, false},
	} {
		kmh, ok := postedValue(tc.in)
		if ok != tc.want || math.Abs(float64(kmh-tc.kmh)) > 0.01 {
			t.Errorf("postedValue(%q) = %v, %v; want %v, %v", tc.in, kmh, ok, tc.kmh, tc.want)
		}
	}
}

// TestPostedSpeeds reads a hand-made extract whose ways post their
// limits every way the parser knows, and some it must not read.
func TestPostedSpeeds(t *testing.T) {
	var nodes []osmNode
	for i := int64(0); i < 20; i++ {
		nodes = append(nodes, osmNode{i + 1, 40 + float64(i)*0.001, -83})
	}
	ways := []osmWay{
		{100, []int64{1, 2}, []string{"highway", "residential", "maxspeed", "40"}},
		{101, []int64{2, 3}, []string{"highway", "secondary", "maxspeed", "25 mph"}},
		{102, []int64{3, 4}, []string{"highway", "primary", "maxspeed:forward", "50", "maxspeed:backward", "30"}},
		{103, []int64{4, 5}, []string{"highway", "tertiary", "maxspeed", "DE:urban"}},
		{104, []int64{5, 6}, []string{"highway", "residential"}},
		{105, []int64{6, 7}, []string{"highway", "primary", "maxspeed:advisory", "30"}},
		{106, []int64{7, 8}, []string{"highway", "motorway_link", "maxspeed:conditional", "60 @ (wet)"}},
		{107, []int64{8, 9}, []string{"highway", "service", "maxspeed", "none"}},
		{108, []int64{9, 10}, []string{"highway", "trunk", "maxspeed", "60", "maxspeed:backward", "40"}},
		{109, []int64{10, 11}, []string{"highway", "unclassified", "maxspeed:type", "US:rural"}},
		{110, []int64{11, 12}, []string{"highway", "footway"}},
	}
	f := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	f = appendFileBlock(f, "OSMData", dataBlock(100, 0, 0, nil, nodes, ways), true)
	g, err := Read(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		class    RoadClass
		fwd, bwd float64
		posted   [2]bool
	}
	wants := map[int64]want{
		100: {ClassResidential, 40, 40, [2]bool{true, true}},
		101: {ClassSecondary, 40.23, 40.23, [2]bool{true, true}},
		102: {ClassPrimary, 50, 30, [2]bool{true, true}},
		103: {ClassTertiary, 50, 50, [2]bool{true, true}},
		104: {ClassResidential, 40, 40, [2]bool{}},
		105: {ClassPrimary, 72, 72, [2]bool{}},
		106: {ClassMotorway, 105, 105, [2]bool{}},
		107: {ClassService, 24, 24, [2]bool{}},
		108: {ClassTrunk, 60, 40, [2]bool{true, true}},
		109: {ClassUnclassified, 88.51, 88.51, [2]bool{true, true}},
		110: {ClassOther, 16, 16, [2]bool{}},
	}
	// saved and loaded back, the graph holds the same
	saved := filepath.Join(t.TempDir(), "speeds")
	if err := writeGeometry(saved, g); err != nil {
		t.Fatal(err)
	}
	back, err := readGeometry(saved)
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*Graph{"built": g, "loaded": back} {
		seen := map[int64]bool{}
		for e := 0; e < g.Edges(); e++ {
			f, b := g.EdgeRoad(e, false), g.EdgeRoad(e, true)
			w, ok := wants[f.WayID]
			if !ok {
				t.Fatalf("%s: edge %d on way %d", name, e, f.WayID)
			}
			seen[f.WayID] = true
			if f.Class != w.class || b.Class != w.class || math.Abs(f.LimitKmh-w.fwd) > 0.01 || math.Abs(b.LimitKmh-w.bwd) > 0.01 ||
				f.Posted != w.posted[0] || b.Posted != w.posted[1] {
				t.Errorf("%s: way %d: %+v / %+v, want %v %v/%v posted %v", name, f.WayID, f, b, w.class, w.fwd, w.bwd, w.posted)
			}
		}
		if len(seen) != len(wants) {
			t.Errorf("%s: ways %v, want %d", name, seen, len(wants))
		}
	}
}

// TestPostedSpeedsOnExtract: on a real extract a good share of the road
// length posts its limit, and every edge has a limit.
func TestPostedSpeedsOnExtract(t *testing.T) {
	path := SharedData(t, filepath.Join("osm", "us-oh-columbus.osm.pbf"))
	g, err := Load(path, Options{Costings: []Costing{}})
	if err != nil {
		t.Fatal(err)
	}
	var all, post, motor, motorPosted float64
	for e := 0; e < g.Edges(); e++ {
		r, m := g.EdgeRoad(e, false), g.EdgeMeters(e)
		if r.LimitKmh <= 0 {
			t.Fatalf("edge %d of way %d has no limit", e, r.WayID)
		}
		all += m
		if r.Posted {
			post += m
		}
		if r.Class >= ClassMotorway && r.Class <= ClassTertiary {
			motor += m
			if r.Posted {
				motorPosted += m
			}
		}
	}
	t.Logf("posted: %.1f%% of all road length, %.1f%% of motorway…tertiary", 100*post/all, 100*motorPosted/motor)
	if post/all < 0.05 || motorPosted/motor < 0.2 {
		t.Errorf("posted on %.1f%% of the length and %.1f%% of the main roads; the extract posts more", 100*post/all, 100*motorPosted/motor)
	}
}
