package mapmatch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestMatchRoute: a car drives east along one road, turns north at the
// junction onto another and a fix lies 2 km from every road: the trace
// is two runs split at that fix (reported unmatched), the first run's
// route goes along road 1 then road 2 with their limits, its length is
// the distance driven on the roads, and its geometry passes the corner.
func TestMatchRoute(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	h.road(2, 1, 2, 30, [2]float64{1000, 0}, [2]float64{1000, 1000})
	h.road(3, 1, 3, 70, [2]float64{1000, 0}, [2]float64{2000, 0})
	var pts []Point
	add := func(x, y float64) {
		lat, lon := toLatLon(x, y)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5})
	}
	for x := 200.0; x <= 950; x += 50 {
		add(x, wobble(len(pts), 3))
	}
	for y := 50.0; y <= 600; y += 50 {
		add(1000+wobble(len(pts), 3), y)
	}
	add(3000, 3000) // far from every road
	add(1000, 700)
	add(1000, 750)
	res := New(h, routing.Auto, Config{}).Match(pts)
	if len(res.Matches) != len(pts) {
		t.Fatalf("%d matches for %d fixes", len(res.Matches), len(pts))
	}
	far := len(pts) - 3
	if res.Matches[far].Matched {
		t.Errorf("the far fix matched to way %d", res.Matches[far].WayID)
	}
	if len(res.Runs) != 2 || res.Runs[0].First != 0 || res.Runs[0].Last != far-1 || res.Runs[1].First != far+1 || res.Runs[1].Last != far+2 {
		t.Fatalf("runs %+v", res.Runs)
	}
	r := res.Runs[0]
	if len(r.Segments) != 2 || r.Segments[0].WayID != 1 || r.Segments[1].WayID != 2 ||
		r.Segments[0].LimitKmh != 50 || r.Segments[1].LimitKmh != 30 || !r.Segments[0].Posted {
		t.Fatalf("segments %+v", r.Segments)
	}
	// from x=200 to the corner (800 m) and up to y=600 (600 m)
	if math.Abs(r.Meters-1400) > 10 || math.Abs(r.Segments[0].Meters-800) > 10 || math.Abs(r.Segments[1].Meters-600) > 10 {
		t.Errorf("route %v m (%v + %v), want 1400 (800 + 600)", r.Meters, r.Segments[0].Meters, r.Segments[1].Meters)
	}
	s0, s1 := r.Segments[0], r.Segments[1]
	if s0.Start != 0 || s1.End != float64(far-1) || math.Abs(s0.End-s1.Start) > 1e-9 || s0.End <= 15 || s0.End >= 16 {
		t.Errorf("segments placed %v-%v and %v-%v along the trace", s0.Start, s0.End, s1.Start, s1.End)
	}
	cx, cy := h.xy(Match{Lat: s0.Lat[len(s0.Lat)-1], Lon: s0.Lon[len(s0.Lon)-1]})
	if math.Abs(cx-1000) > 0.5 || math.Abs(cy) > 0.5 || s1.Lat[0] != s0.Lat[len(s0.Lat)-1] {
		t.Errorf("the first segment ends at (%.1f, %.1f), want the corner", cx, cy)
	}
	if r2 := res.Runs[1]; len(r2.Segments) != 1 || math.Abs(r2.Meters-50) > 5 {
		t.Errorf("second run %+v", r2)
	}
}

// TestMatchOneWayBack: on a one-way road a later fix a little behind the
// previous one (noise) is kept on the road and held at the previous
// fix's place, not routed round the block: the route is the 150 m
// driven.
func TestMatchOneWayBack(t *testing.T) {
	h := &handNet{}
	e := h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	e.bwd = false
	var pts []Point
	for _, x := range []float64{100, 150, 200, 195, 250} {
		lat, lon := toLatLon(x, 2)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5})
	}
	res := New(h, routing.Auto, Config{}).Match(pts)
	if len(res.Runs) != 1 || math.Abs(res.Runs[0].Meters-150) > 2 {
		t.Errorf("runs %+v, want one of 150 m", res.Runs)
	}
}

// BenchmarkMatchTrace1000 matches a simulated 1,000-fix drive (a fix a second,
// 10 m of noise) on the Columbus extract, route geometry included.
func BenchmarkMatchTrace1000(b *testing.B) {
	m := New(columbusGraph(b), routing.Auto, Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	var pts []Point
	for len(pts) < 1000 {
		p := drive(m.net, rng, 20000, 1, 10).pts
		pts = append(pts, p...)
	}
	pts = pts[:1000]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m.Match(pts)
	}
	b.ReportMetric(float64(b.N*len(pts))/b.Elapsed().Seconds(), "points/s")
}

// TestMatchRouteThroughUnseenRoads: fixes 400 m apart on a chain of
// 200 m roads: the route names every road between them, those no fix
// lies on too, each 200 m long but the first (150 m) and the last
// (50 m), and places them along the trace by distance.
func TestMatchRouteThroughUnseenRoads(t *testing.T) {
	h := &handNet{}
	for i := range 5 {
		h.road(int64(i+1), i, i+1, 50, [2]float64{200 * float64(i), 0}, [2]float64{200 * float64(i+1), 0})
	}
	var pts []Point
	for _, x := range []float64{50, 450, 850} {
		lat, lon := toLatLon(x, 3)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5})
	}
	res := New(h, routing.Auto, Config{}).Match(pts)
	if len(res.Runs) != 1 {
		t.Fatalf("runs %+v", res.Runs)
	}
	segs := res.Runs[0].Segments
	if len(segs) != 5 {
		t.Fatalf("%d segments, want 5: %+v", len(segs), segs)
	}
	for i, s := range segs {
		want := [5]float64{150, 200, 200, 200, 50}[i]
		if s.WayID != int64(i+1) || math.Abs(s.Meters-want) > 1 {
			t.Errorf("segment %d: way %d, %v m; want way %d, %v m", i, s.WayID, s.Meters, i+1, want)
		}
	}
	// road 3 begins 350 m into the 400 m from fix 0 to fix 1
	if math.Abs(segs[2].Start-0.875) > 0.01 {
		t.Errorf("road 3 starts at %v along the trace, want 0.875", segs[2].Start)
	}
	if math.Abs(segs[2].End-1.375) > 0.01 || segs[4].End != 2 {
		t.Errorf("road 3 ends at %v, road 5 at %v; want 1.375 and 2", segs[2].End, segs[4].End)
	}
}

// TestMatchGeometryBends: one road bending through two inner points,
// driven both ways: the geometry runs from the first fix's place through
// the bends and the middle fix's place, in the order driven, and the
// length is the road's between the fixes.
func TestMatchGeometryBends(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{300, 0}, [2]float64{300, 300}, [2]float64{600, 300})
	fix := func(xy ...[2]float64) []Point {
		var pts []Point
		for _, p := range xy {
			lat, lon := toLatLon(p[0], p[1])
			pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5})
		}
		return pts
	}
	m := New(h, routing.Auto, Config{})
	for _, tc := range []struct {
		pts  []Point
		line [][2]float64
	}{
		{fix([2]float64{100, 2}, [2]float64{302, 150}, [2]float64{500, 302}), [][2]float64{{100, 0}, {300, 0}, {300, 150}, {300, 300}, {500, 300}}},
		{fix([2]float64{500, 302}, [2]float64{302, 150}, [2]float64{100, 2}), [][2]float64{{500, 300}, {300, 300}, {300, 150}, {300, 0}, {100, 0}}},
	} {
		res := m.Match(tc.pts)
		if len(res.Runs) != 1 || len(res.Runs[0].Segments) != 1 || math.Abs(res.Runs[0].Meters-700) > 1 {
			t.Fatalf("runs %+v, want one of 700 m on one road", res.Runs)
		}
		s := res.Runs[0].Segments[0]
		var got [][2]float64
		for k := range s.Lat {
			x, y := h.xy(Match{Lat: s.Lat[k], Lon: s.Lon[k]})
			got = append(got, [2]float64{math.Round(x), math.Round(y)})
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.line) {
			t.Errorf("geometry %v, want %v", got, tc.line)
		}
	}
}

// TestMatchLengthAgreesWithPlaces: three fixes 2.1 m apart along a road,
// either way along it, on a two-way road and against a one-way, with and
// without times: the run's length, its segments' lengths and its
// geometry's length are the distance between the places reported, and
// the geometry runs from the first place to the last. A first fix's
// direction is not known: a second fix a little behind it along the
// edge's points is driven that way, not held where the first stood while
// reported where it is.
func TestMatchLengthAgreesWithPlaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		oneWay bool    // open along the edge's points only, which run south
		dir    float64 // +1 north, -1 south
		times  bool
	}{
		{"two-way, north", false, 1, true},
		{"two-way, south", false, -1, true},
		{"two-way, north, no times", false, 1, false},
		{"two-way, south, no times", false, -1, false},
		{"against a one-way", true, 1, true},
		{"against a one-way, no times", true, 1, false},
		{"along a one-way", true, -1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &handNet{}
			e := h.road(1, 0, 1, 30, [2]float64{0, 1000}, [2]float64{0, 0})
			e.bwd = !tc.oneWay
			h.road(2, 1, 2, 30, [2]float64{0, 0}, [2]float64{-300, 0})
			h.road(3, 0, 3, 30, [2]float64{0, 1000}, [2]float64{300, 1000})
			var pts []Point
			for i := range 3 {
				lat, lon := toLatLon(1.5, 500+tc.dir*2.1*float64(i))
				p := Point{Lat: lat, Lon: lon, Accuracy: 5}
				if tc.times {
					p.Time = 1_700_000_000 + float64(i)
				}
				pts = append(pts, p)
			}
			res := New(h, routing.Auto, Config{}).Match(pts)
			if len(res.Runs) != 1 || res.Runs[0].First != 0 || res.Runs[0].Last != 2 {
				t.Fatalf("runs %+v", res.Runs)
			}
			moved := 0.0
			for i, m := range res.Matches {
				if !m.Matched || m.WayID != 1 {
					t.Fatalf("fix %d matched %v to way %d", i, m.Matched, m.WayID)
				}
				if i > 0 {
					x0, y0 := h.xy(res.Matches[i-1])
					x1, y1 := h.xy(m)
					moved += math.Hypot(x1-x0, y1-y0)
				}
			}
			r := res.Runs[0]
			segs, geom := 0.0, 0.0
			var gx, gy []float64
			for _, s := range r.Segments {
				segs += s.Meters
				for k := range s.Lat {
					x, y := h.xy(Match{Lat: s.Lat[k], Lon: s.Lon[k]})
					if n := len(gx); n > 0 {
						geom += math.Hypot(x-gx[n-1], y-gy[n-1])
					}
					gx, gy = append(gx, x), append(gy, y)
				}
			}
			if math.Abs(r.Meters-moved) > 0.05 || math.Abs(segs-moved) > 0.05 || math.Abs(geom-moved) > 0.05 {
				t.Errorf("run %.2f m, segments %.2f m, geometry %.2f m; the places reported are %.2f m apart", r.Meters, segs, geom, moved)
			}
			if moved > 0 {
				x0, y0 := h.xy(res.Matches[0])
				x2, y2 := h.xy(res.Matches[2])
				if n := len(gx) - 1; n < 1 || math.Hypot(gx[0]-x0, gy[0]-y0) > 0.05 || math.Hypot(gx[n]-x2, gy[n]-y2) > 0.05 {
					t.Errorf("geometry %v %v runs apart from the places (%.2f, %.2f) to (%.2f, %.2f)", gx, gy, x0, y0, x2, y2)
				}
			}
			t.Logf("places %.2f m apart, run %.2f m", moved, r.Meters)
		})
	}
}

// TestMatchHeldFixStaysHeld: where the route from one decided fix to
// the next holds the later one at the earlier one's place (a little
// behind it on their road, the way it was driven: not moved), the later
// one is reported at that place, where the route of no length leaves it,
// not at a place of its own that the route and its geometry never reach;
// the next fix's route starts there.
func TestMatchHeldFixStaysHeld(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 30, [2]float64{0, 0}, [2]float64{0, 1000})
	m := New(h, routing.Auto, Config{})
	var pts []Point
	var ms []Match
	for i, y := range []float64{500, 497, 510} {
		lat, lon := toLatLon(0, y)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5})
		c := candidate{edge: 0, off: y, moving: true}
		c.x, c.y = m.net.along(0, y)
		ms = append(ms, m.match(i, &c, 1))
	}
	res := m.result(pts, ms)
	if len(res.Runs) != 1 || len(res.Runs[0].Segments) != 1 {
		t.Fatalf("runs %+v", res.Runs)
	}
	_, y1 := h.xy(res.Matches[1])
	if math.Abs(y1-500) > 0.01 || math.Abs(res.Matches[1].Meters-3) > 0.01 || res.Matches[1].WayID != 1 {
		t.Errorf("the held fix placed at y %.2f, %.2f m from its fix, on way %d; want y 500, 3 m", y1, res.Matches[1].Meters, res.Matches[1].WayID)
	}
	r := res.Runs[0]
	s := r.Segments[0]
	_, g0 := h.xy(Match{Lat: s.Lat[0], Lon: s.Lon[0]})
	_, g1 := h.xy(Match{Lat: s.Lat[len(s.Lat)-1], Lon: s.Lon[len(s.Lon)-1]})
	if math.Abs(r.Meters-10) > 0.01 || math.Abs(s.Meters-10) > 0.01 || math.Abs(g0-500) > 0.01 || math.Abs(g1-510) > 0.01 {
		t.Errorf("run %.2f m, segment %.2f m from y %.2f to %.2f; the places are 500, 500 and 510", r.Meters, s.Meters, g0, g1)
	}
}
