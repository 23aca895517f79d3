package routing_test

import (
	"bytes"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// FuzzReadPBF: on any bytes Read returns a graph or an error, never both
// and never neither, and never panics; a graph it returns answers a query.
// Seeds in testdata/fuzz/FuzzReadPBF (written by TestWriteFixture -update).
func FuzzReadPBF(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := routing.Read(bytes.NewReader(data))
		if (g == nil) == (err == nil) {
			t.Fatalf("Read = %v, %v", g, err)
		}
		if g == nil {
			return
		}
		if g.Nodes() == 0 {
			t.Fatalf("a graph without nodes")
		}
		pts := [][2]float64{{40.000, -83.000}, {40.002, -83.000}}
		if m := g.Matrix(pts, pts, routing.Pedestrian); len(m) != 2 || len(m[1]) != 2 {
			t.Fatalf("matrix %v", m)
		}
	})
}
