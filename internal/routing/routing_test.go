package routing_test

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/routing"
)

// sharedData returns the path of rel under ../shared/data, the real data
// kept beside the repository. Without it the test skips, except under
// CI=true, where it fails: CI always has the data.
func sharedData(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", rel))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			tb.Fatalf("%s is missing, and CI must run the tests on the real data: %v", p, err)
		}
		tb.Skipf("skipping: %s is missing (the real data beside the repository, in ../shared/data)", p)
	}
	return p
}

// The nodes of testdata/tiny.osm.pbf; fixture_test.go draws the network.
var at = map[int][2]float64{
	1: {40.000, -83.000}, 2: {40.001, -83.000}, 3: {40.002, -83.000},
	4: {40.002, -83.001}, 5: {40.000, -83.001},
	7: {40.003, -83.000}, 8: {40.004, -83.000},
}

func tiny(tb testing.TB) *routing.Graph {
	tb.Helper()
	g, err := routing.Load(filepath.Join("testdata", "tiny.osm.pbf"))
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// length is the length in meters of the path through the given nodes.
func length(path []int) float64 {
	m := 0.0
	for i := 1; i < len(path); i++ {
		a, b := at[path[i-1]], at[path[i]]
		m += geo.Distance(geo.Point{Lat: a[0], Lon: a[1]}, geo.Point{Lat: b[0], Lon: b[1]})
	}
	return m
}

func TestMatrixTiny(t *testing.T) {
	g := tiny(t)
	if g.Nodes() != 7 {
		t.Errorf("%d nodes, want 7 (the nodes of roads, without 99)", g.Nodes())
	}
	for _, tc := range []struct {
		name     string
		costing  routing.Costing
		from, to int
		path     []int   // nil: no route
		kmh      float64 // speed on every edge of the path
	}{
		{"two-way then one-way", routing.Auto, 1, 3, []int{1, 2, 3}, 30},
		{"one-way 2→3 forces the detour", routing.Auto, 3, 1, []int{3, 4, 5, 1}, 30},
		{"oneway=-1 forbids 1→5", routing.Auto, 1, 5, []int{1, 2, 3, 4, 5}, 30},
		{"oneway=-1 allows 5→1", routing.Auto, 5, 1, []int{5, 1}, 30},
		{"self", routing.Auto, 1, 1, []int{1}, 30},
		{"footway closes the island to cars", routing.Auto, 1, 8, nil, 0},
		{"footway closes the mainland to cars", routing.Auto, 7, 1, nil, 0},
		{"inside the island", routing.Auto, 8, 7, []int{8, 7}, 30},
		{"truck is slower", routing.Truck, 1, 3, []int{1, 2, 3}, 25},
		{"bicycle keeps to one-way streets", routing.Bicycle, 3, 1, []int{3, 4, 5, 1}, 16},
		{"no bicycles on footways", routing.Bicycle, 1, 8, nil, 0},
		{"pedestrians ignore one-way streets", routing.Pedestrian, 3, 1, []int{3, 2, 1}, 5},
		{"pedestrians ignore oneway=-1", routing.Pedestrian, 1, 5, []int{1, 5}, 5},
		{"pedestrians take the footway", routing.Pedestrian, 1, 8, []int{1, 2, 3, 7, 8}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := g.Matrix([][2]float64{at[tc.from]}, [][2]float64{at[tc.to]}, tc.costing)
			if len(m) != 1 || len(m[0]) != 1 {
				t.Fatalf("matrix %v", m)
			}
			got := m[0][0]
			if tc.path == nil {
				if got.OK {
					t.Errorf("%s %d→%d: %+v, want no route", tc.costing, tc.from, tc.to, got)
				}
				return
			}
			meters := length(tc.path)
			sec := meters / (tc.kmh / 3.6)
			// edges keep their length as float32: a centimeter is plenty
			if !got.OK || math.Abs(got.Meters-meters) > 0.01 || math.Abs(got.Seconds-sec) > 0.01 {
				t.Errorf("%s %d→%d: %+v, want %.2f m %.2f s along %v", tc.costing, tc.from, tc.to, got, meters, sec, tc.path)
			}
		})
	}
}

// TestMatrixLegs: a location off the road pays the leg to its node at the
// costing's residential speed, at least 5 km/h.
func TestMatrixLegs(t *testing.T) {
	g := tiny(t)
	off := [2]float64{39.9995, -83.000} // 55.6 m south of node 1
	leg := geo.Distance(geo.Point{Lat: off[0], Lon: off[1]}, geo.Point{Lat: at[1][0], Lon: at[1][1]})
	for _, tc := range []struct {
		costing routing.Costing
		path    []int
		kmh     float64
	}{
		{routing.Auto, []int{1, 2, 3}, 30},
		{routing.Pedestrian, []int{1, 2, 3}, 5},
	} {
		got := g.Matrix([][2]float64{off}, [][2]float64{at[3]}, tc.costing)[0][0]
		meters := length(tc.path) + leg
		sec := meters / (tc.kmh / 3.6)
		if !got.OK || math.Abs(got.Meters-meters) > 0.01 || math.Abs(got.Seconds-sec) > 0.01 {
			t.Errorf("%s: %+v, want %.2f m %.2f s", tc.costing, got, meters, sec)
		}
	}
}

// TestMatrixFarFromRoads: a location more than MaxSnapM from every road
// has no route, as source or target, and does not spoil the other cells.
func TestMatrixFarFromRoads(t *testing.T) {
	g := tiny(t)
	far := [2]float64{0, 0}
	m := g.Matrix([][2]float64{far, at[1]}, [][2]float64{at[3], far}, routing.Auto)
	if m[0][0].OK || m[0][1].OK || m[1][1].OK {
		t.Errorf("a location far from every road got a route: %+v", m)
	}
	if !m[1][0].OK {
		t.Errorf("1→3 lost its route beside a far location: %+v", m[1][0])
	}
	if m := g.Matrix(nil, [][2]float64{at[1]}, routing.Auto); len(m) != 0 {
		t.Errorf("no sources: %v", m)
	}
}

// TestMatrixConcurrent: a loaded graph answers concurrent queries, each
// as it answers alone (run with -race).
func TestMatrixConcurrent(t *testing.T) {
	g := tiny(t)
	var pts [][2]float64
	for _, p := range at {
		pts = append(pts, p)
	}
	want := map[routing.Costing][][]routing.Cost{}
	costings := []routing.Costing{routing.Auto, routing.Truck, routing.Bicycle, routing.Pedestrian}
	for _, c := range costings {
		want[c] = g.Matrix(pts, pts, c)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		c := costings[i%len(costings)]
		wg.Go(func() {
			if got := g.Matrix(pts, pts, c); !reflect.DeepEqual(got, want[c]) {
				t.Errorf("%s: concurrent answer %v, alone %v", c, got, want[c])
			}
		})
	}
	wg.Wait()
}

func TestParseCosting(t *testing.T) {
	for _, name := range []string{"auto", "truck", "bicycle", "pedestrian"} {
		c, ok := routing.ParseCosting(name)
		if !ok || c.String() != name {
			t.Errorf("ParseCosting(%q) = %v, %v", name, c, ok)
		}
	}
	for _, name := range []string{"", "hovercraft", "Auto"} {
		if _, ok := routing.ParseCosting(name); ok {
			t.Errorf("ParseCosting(%q) accepted", name)
		}
	}
}

const columbusPBF = "osm/us-oh-columbus.osm.pbf"

func TestMatrixColumbus(t *testing.T) {
	g, err := routing.Load(sharedData(t, columbusPBF))
	if err != nil {
		t.Fatal(err)
	}
	if g.Nodes() < 1000 {
		t.Fatalf("graph of %d nodes", g.Nodes())
	}
	t.Logf("%d nodes", g.Nodes())
	pts := [][2]float64{{39.9612, -82.9988}, {39.9700, -83.0050}, {39.9550, -82.9900}}
	m := g.Matrix(pts, pts, routing.Auto)
	for i := range pts {
		if !m[i][i].OK || m[i][i].Meters > 500 {
			t.Errorf("self distance %d: %+v", i, m[i][i])
		}
		for j := range pts {
			if !m[i][j].OK {
				t.Fatalf("no route %d→%d", i, j)
			}
			if m[i][j].Seconds < 0 {
				t.Errorf("negative time")
			}
		}
	}
	if m[0][1].Meters < 900 || m[0][1].Meters > 3000 {
		t.Errorf("0→1 distance %v m (straight line about 1.1 km)", m[0][1].Meters)
	}
	walk := g.Matrix(pts[:1], pts[1:2], routing.Pedestrian)
	if walk[0][0].Seconds <= m[0][1].Seconds {
		t.Errorf("walking %v s not slower than driving %v s", walk[0][0].Seconds, m[0][1].Seconds)
	}
	far := g.Matrix([][2]float64{{0, 0}}, pts[:1], routing.Auto)
	if far[0][0].OK {
		t.Errorf("a point far from every road got a route")
	}
}

// BenchmarkMatrix: every node to every node of the tiny fixture, and a
// 50×50 auto matrix on the Columbus extract when it is there.
func BenchmarkMatrix(b *testing.B) {
	b.Run("tiny-7x7", func(b *testing.B) {
		g := tiny(b)
		var pts [][2]float64
		for _, p := range at {
			pts = append(pts, p)
		}
		b.ReportAllocs()
		for b.Loop() {
			g.Matrix(pts, pts, routing.Auto)
		}
	})
	b.Run("columbus-50x50", func(b *testing.B) {
		g, err := routing.Load(sharedData(b, columbusPBF))
		if err != nil {
			b.Fatal(err)
		}
		pts := make([][2]float64, 50)
		for i := range pts {
			pts[i] = [2]float64{39.94 + float64(i%10)*0.005, -83.02 + float64(i/10)*0.008}
		}
		b.ReportAllocs()
		for b.Loop() {
			g.Matrix(pts, pts, routing.Auto)
		}
	})
}
