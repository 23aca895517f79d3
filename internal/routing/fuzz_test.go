package routing_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// FuzzReadPBF: on any bytes Read returns a graph or an error, never both
// and never neither, and never panics; a graph it returns answers a query.
// Seeds in testdata/fuzz/FuzzReadPBF (written by TestWriteFixture -update).
func FuzzReadPBF(f *testing.F) {
	f.Fuzz(checkRead)
}

// FuzzReadXML: on any bytes the XML reader hands on only nodes whose
// coordinates are in range, or returns an error, and never panics; Read,
// which recognises the format by content, behaves as in FuzzReadPBF.
// Seeds in testdata/fuzz/FuzzReadXML (written by TestWriteFixture -update).
func FuzzReadXML(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		pts, err := routing.XMLNodes(data)
		for _, p := range pts {
			if err == nil && !(math.Abs(p[0]) <= 90 && math.Abs(p[1]) <= 180) {
				t.Fatalf("node at %v", p)
			}
		}
		checkRead(t, data)
	})
}

// checkRead: Read returns a graph or an error, never both and never
// neither; a graph it returns answers a query.
func checkRead(t *testing.T, data []byte) {
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
}

// FuzzRules: any tags give each costing a speed that is zero or a finite
// positive number, a rate in (0, 1] where the way is usable, and readings
// of maxspeed and of the truck limits that are finite and not negative.
// Tags are fuzzed as "key=value;key=value".
func FuzzRules(f *testing.F) {
	for _, s := range []string{
		"highway=residential;oneway=yes", "highway=primary;maxspeed=30 mph;cycleway=lane",
		"highway=footway;bicycle=yes", "highway=service;service=parking_aisle;access=private",
		"highway=motorway_link;maxspeed:forward=50;maxspeed:backward=abc", "highway=secondary;oneway=-1;oneway:bicycle=no",
		"highway=residential;maxheight=13'6\";maxweight=8000 lbs", "highway=steps;foot=use_sidepath", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags := routing.ParseTags(s)
		for _, c := range []routing.Costing{routing.Auto, routing.Truck, routing.Bicycle, routing.Pedestrian} {
			for _, r := range routing.WayRules(tags, c) {
				if math.IsNaN(r.Kmh) || math.IsInf(r.Kmh, 0) || r.Kmh < 0 || r.Kmh > 300 {
					t.Fatalf("%q %s: speed %v", s, c, r.Kmh)
				}
				if r.Kmh > 0 && (r.Rate <= 0 || r.Rate > 1) {
					t.Fatalf("%q %s: rate %v", s, c, r.Rate)
				}
			}
		}
		for _, v := range routing.Limits(tags) {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%q: limit %v", s, v)
			}
		}
	})
}

// FuzzSavedGraph: any bytes in place of a saved graph either load as a
// graph that answers a query or are refused; never a panic.
func FuzzSavedGraph(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := routing.DecodeSaved(b)
		if (g == nil) == (err == nil) {
			t.Fatalf("DecodeSaved = %v, %v", g, err)
		}
		if g != nil {
			pts := [][2]float64{{40.000, -83.000}, {40.002, -83.000}}
			g.Matrix(pts, pts, routing.Auto)
		}
	})
}
