package mapmatch

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestHeadingScore: a course along a road costs nothing, either way
// along a two-way road but only its own way along a one-way; a course
// across it costs at most the outlier floor (about 3.4).
func TestHeadingScore(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{500, 0}) // east–west, two-way
	one := h.road(2, 2, 3, 50, [2]float64{0, 100}, [2]float64{0, 600})
	one.bwd = false // one-way north
	n := newNetwork(h, routing.Auto)
	at := func(x, y float64) *candidate {
		px, py := n.plane(toLatLon(x, y))
		cs := n.candidates(px, py, 50, 10, nil)
		if len(cs) == 0 {
			t.Fatalf("no candidate at %v, %v", x, y)
		}
		return &cs[0]
	}
	deg := math.Pi / 180
	ew, ns := at(250, 3), at(2, 300)
	cases := []struct {
		name string
		c    *candidate
		h    float64
		lo   float64
		hi   float64
	}{
		{"east on a two-way road", ew, 90 * deg, -1e-9, 1e-9},
		{"west on a two-way road", ew, 270 * deg, -1e-9, 1e-9},
		{"10° off", ew, 100 * deg, -0.2, -0.05},
		{"north across it", ew, 0, -3.5, -3.2},
		{"north on a one-way north", ns, 0, -1e-9, 1e-9},
		{"south on a one-way north", ns, 180 * deg, -3.5, -3.2},
	}
	for _, c := range cases {
		if got := n.headingScore(c.c, c.h); got < c.lo || got > c.hi {
			t.Errorf("%s: %.3f, want %.2f to %.2f", c.name, got, c.lo, c.hi)
		}
	}
	if _, ok := headingOf(Point{Heading: 90, HasHeading: true, Speed: 1, HasSpeed: true}); ok {
		t.Error("a course read at 1 m/s")
	}
	if _, ok := headingOf(Point{Heading: 90, HasHeading: true}); ok {
		t.Error("a course read without a speed")
	}
}

// TestHeadingAtJunction: fixes of a car driving east along a road pass
// a cross street, a fix every 5 s; three fixes near the junction lie
// 30 m up the cross street, nearer it than the road. Without courses
// some go onto the cross street; with the course the car reported (east,
// at 12 m/s) they stay on the road it drove.
func TestHeadingAtJunction(t *testing.T) {
	const crossY = 30
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{500, 0})
	h.road(2, 1, 2, 50, [2]float64{500, 0}, [2]float64{1000, 0})
	h.road(3, 1, 3, 30, [2]float64{500, 0}, [2]float64{500, 400})
	var pts []Point
	for i, x := range []float64{300, 360, 420, 498, 503, 497, 560, 620, 680} {
		y := wobble(i, 2)
		if x > 490 && x < 510 {
			y = crossY // up the cross street
		}
		lat, lon := toLatLon(x, y)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 8, Time: 1.8e9 + 5*float64(i), Speed: 12, HasSpeed: true, Heading: 90, HasHeading: true})
	}
	onCross := func(pts []Point) int {
		tr := New(h, routing.Auto, Config{}).Trace()
		var ms []Match
		for _, p := range pts {
			ms = append(ms, tr.Add(p)...)
		}
		ms = append(ms, tr.Flush()...)
		n := 0
		for _, m := range ms {
			if m.WayID == 3 {
				n++
			}
		}
		return n
	}
	plain := make([]Point, len(pts))
	for i, p := range pts {
		p.HasHeading = false
		plain[i] = p
	}
	if n := onCross(plain); n == 0 {
		t.Fatalf("without courses no fix went onto the cross street: the test shows nothing")
	}
	if n := onCross(pts); n != 0 {
		t.Errorf("with the car's course east, %d fixes on the cross street", n)
	}
}
