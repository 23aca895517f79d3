package routing_test

import (
	"path/filepath"
	"testing"

	"github.com/fleethub/fleethub/api/routing"
)

func columbus(tb testing.TB) *routing.Graph {
	tb.Helper()
	p, _ := filepath.Abs("../../../shared/data/osm/us-oh-columbus.osm.pbf")
	g, err := routing.Load(p)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func TestMatrixColumbus(t *testing.T) {
	g := columbus(t)
	if g.Nodes() < 1000 {
		t.Fatalf("graph of %d nodes", g.Nodes())
	}
	t.Logf("%d nodes", g.Nodes())
	pts := [][2]float64{{39.9612, -82.9988}, {39.9700, -83.0050}, {39.9550, -82.9900}}
	m := g.Matrix(pts, pts, "auto")
	for i := range pts {
		if m[i][i].Distance == nil || *m[i][i].Distance > 0.5 {
			t.Errorf("self distance %d: %v", i, m[i][i].Distance)
		}
		for j := range pts {
			if m[i][j].Distance == nil {
				t.Fatalf("no route %d→%d", i, j)
			}
			// a road route is at least the straight line, and not absurdly longer
			if *m[i][j].Time < 0 {
				t.Errorf("negative time")
			}
		}
	}
	if *m[0][1].Distance < 0.9 || *m[0][1].Distance > 3 {
		t.Errorf("0→1 distance %v km (straight line about 1.1 km)", *m[0][1].Distance)
	}
	walk := g.Matrix(pts[:1], pts[1:2], "pedestrian")
	if *walk[0][0].Time <= *m[0][1].Time {
		t.Errorf("walking %v s not slower than driving %v s", *walk[0][0].Time, *m[0][1].Time)
	}
	far := g.Matrix([][2]float64{{0, 0}}, pts[:1], "auto")
	if far[0][0].Distance != nil {
		t.Errorf("a point far from every road got a route")
	}
}

// BenchmarkMatrix50 is a 50×50 auto matrix on the Columbus extract.
func BenchmarkMatrix50(b *testing.B) {
	g := columbus(b)
	pts := make([][2]float64, 50)
	for i := range pts {
		pts[i] = [2]float64{39.94 + float64(i%10)*0.005, -83.02 + float64(i/10)*0.008}
	}
	b.ReportAllocs()
	for b.Loop() {
		g.Matrix(pts, pts, "auto")
	}
}
