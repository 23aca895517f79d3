package routing_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/routing"
)

// The nodes of testdata/tiny.osm.pbf; fixture_test.go draws the network.
var at = map[int][2]float64{
	1: {40.000, -83.000}, 2: {40.001, -83.000}, 3: {40.002, -83.000},
	4: {40.002, -83.001}, 5: {40.000, -83.001},
	7: {40.003, -83.000}, 8: {40.004, -83.000},
}

func tiny(tb testing.TB) *routing.Graph {
	tb.Helper()
	g, err := routing.Load(filepath.Join("testdata", "tiny.osm.pbf"), routing.Options{})
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
	for _, tc := range []struct {
		name     string
		costing  routing.Costing
		from, to int
		path     []int
		kmh      float64 // speed on every edge of the path
	}{
		{"two-way then one-way", routing.Auto, 1, 3, []int{1, 2, 3}, 25},
		{"one-way 2→3 forces the detour", routing.Auto, 3, 1, []int{3, 4, 5, 1}, 25},
		{"oneway=-1 forbids 1→5", routing.Auto, 1, 5, []int{1, 2, 3, 4, 5}, 25},
		{"oneway=-1 allows 5→1", routing.Auto, 5, 1, []int{5, 1}, 25},
		{"self", routing.Auto, 1, 1, []int{1}, 25},
		{"truck is slower", routing.Truck, 1, 3, []int{1, 2, 3}, 20},
		{"bicycle rides round rather than push against the one-way", routing.Bicycle, 3, 1, []int{3, 4, 5, 1}, 15},
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
			meters := length(tc.path)
			sec := meters / (tc.kmh / 3.6)
			// turns cost a few seconds more at junctions of three roads
			if !got.OK || math.Abs(got.Meters-meters) > 0.2 || got.Seconds < sec-0.2 || got.Seconds > sec+8 {
				t.Errorf("%s %d→%d: %+v, want %.2f m and %.2f s (plus turns) along %v", tc.costing, tc.from, tc.to, got, meters, sec, tc.path)
			}
		})
	}
	// the island 7–8 is cut off from the roads cars can leave: a car
	// location there is put on the nearest road of the main network
	r := g.Route(routing.Request{Sources: [][2]float64{at[8]}, Targets: [][2]float64{at[1]}, Costing: routing.Auto})
	if s := r.Sources[0]; !s.OK || math.Abs(s.Meters-length([]int{8, 7, 3})) > 1 {
		t.Errorf("island location snapped %+v, want to node 3, %.0f m away", s, length([]int{8, 7, 3}))
	}
	bike := g.Matrix([][2]float64{at[1]}, [][2]float64{at[8]}, routing.Bicycle)[0][0]
	if !bike.OK || math.Abs(bike.Meters-length([]int{1, 2, 3, 7, 8})) > 0.2 {
		t.Errorf("bicycle pushed along the footway: %+v", bike)
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

// BenchmarkMatrix: every node to every node of the tiny fixture, and on
// the Columbus extract when it is there, 50×50 (the API's limit) and
// 1,000×1,000 (what the optimizer asks for) random locations by car.
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
	for _, n := range []int{50, 1000} {
		b.Run(fmt.Sprintf("columbus-%dx%d", n, n), func(b *testing.B) {
			g, err := routing.Load(routing.SharedData(b, "osm/us-oh-columbus.osm.pbf"), routing.Options{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			pts := make([][2]float64, n)
			for i := range pts {
				pts[i] = [2]float64{39.93 + rng.Float64()*0.1, -83.08 + rng.Float64()*0.15}
			}
			b.ReportAllocs()
			for b.Loop() {
				g.Matrix(pts, pts, routing.Auto)
			}
		})
	}
	// real_time_traffic's matrix: every other edge observed at 20 km/h
	// (one direction), a plain search per source until it has settled
	// every target: over the area of the matrices above, and within
	// about 2 km of downtown (a day's deliveries in a city)
	for _, tc := range []struct {
		name string
		n    int
		span float64
	}{{"observed-50x50", 50, 1}, {"observed-100x100", 100, 1}, {"observed-near-100x100", 100, 0.25}} {
		b.Run("columbus-"+tc.name, func(b *testing.B) {
			g, err := routing.Load(routing.SharedData(b, "osm/us-oh-columbus.osm.pbf"), routing.Options{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			pts := make([][2]float64, tc.n)
			for i := range pts {
				pts[i] = [2]float64{39.98 - 0.05*tc.span + rng.Float64()*0.1*tc.span, -83.005 - 0.075*tc.span + rng.Float64()*0.15*tc.span}
			}
			obs := func(e int, backward bool) (float64, bool) { return 20, e%2 == 0 && !backward }
			b.ReportAllocs()
			for b.Loop() {
				g.MatrixObserved(pts, pts, routing.Auto, 0, obs)
			}
		})
	}
}

// BenchmarkBuild: the graph of the Columbus extract from the .osm.pbf
// (build: the road network and every costing), and from the saved files
// (load: the network and auto, as the server starts by default; load-all:
// every costing), with the heap the loaded graph holds.
func BenchmarkBuild(b *testing.B) {
	path := routing.SharedData(b, "osm/us-oh-columbus.osm.pbf")
	all := []routing.Costing{routing.Auto, routing.Truck, routing.Bicycle, routing.Pedestrian}
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			if _, err := routing.Load(path, routing.Options{Costings: all}); err != nil {
				b.Fatal(err)
			}
		}
	})
	dir := b.TempDir()
	if _, err := routing.Load(path, routing.Options{CacheDir: dir, Costings: all}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		costings []routing.Costing
	}{{"load", nil}, {"load-all", all}} {
		b.Run(tc.name, func(b *testing.B) {
			var before, after runtime.MemStats
			var g *routing.Graph
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				var err error
				if g, err = routing.Load(path, routing.Options{CacheDir: dir, Costings: tc.costings}); err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "graph-MB")
			runtime.KeepAlive(g)
		})
	}
}
