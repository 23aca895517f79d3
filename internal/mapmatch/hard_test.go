package mapmatch

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestOverpass: a road crosses over another without a junction; a car
// driving east along the lower road, its fixes straying towards the
// bridge's road where they cross, stays on its own road, and the route
// does not leave it.
func TestOverpass(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	h.road(2, 2, 3, 80, [2]float64{500, -500}, [2]float64{500, 500}) // the bridge: no junction at (500, 0)
	var pts [][2]float64
	for i := range 20 {
		x := 50 + 45*float64(i)
		dx := 0.0
		if math.Abs(x-500) < 60 { // the fixes near the crossing pulled onto the bridge's line
			dx = 500 - x
		}
		pts = append(pts, [2]float64{x + dx*0.8, wobble(i, 6)})
	}
	for i, m := range matchAll(t, h, 10, pts...) {
		if !m.Matched || m.WayID != 1 {
			t.Errorf("point %d (%.0f, %.0f) matched to way %d (%v)", i, pts[i][0], pts[i][1], m.WayID, m.Matched)
		}
	}
	res := New(h, routing.Auto, Config{}).Match(points(pts, 10))
	if len(res.Runs) != 1 || len(res.Runs[0].Segments) != 1 || res.Runs[0].Segments[0].WayID != 1 {
		t.Errorf("runs %+v, want one on way 1", res.Runs)
	}
}

// TestLoop: a car drives round a one-way loop at the end of a street
// (its one edge starts and ends at the same junction) and back out: every
// fix on the right way, and the route is the distance driven.
func TestLoop(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{500, 0})
	var ring [][2]float64
	for k := 0; k <= 24; k++ { // a circle of radius 100 m through (500, 0), anticlockwise
		a := math.Pi + 2*math.Pi*float64(k)/24
		ring = append(ring, [2]float64{600 + 100*math.Cos(a), 100 * math.Sin(a)})
	}
	ring[24] = ring[0]
	loop := h.road(2, 1, 1, 30, ring...)
	loop.bwd = false
	var pts [][2]float64
	var ways []int64
	for x := 100.0; x < 500; x += 40 {
		pts, ways = append(pts, [2]float64{x, wobble(len(pts), 4)}), append(ways, 1)
	}
	for k := 2; k < 24; k += 2 {
		pts, ways = append(pts, ring[k]), append(ways, 2)
	}
	for x := 460.0; x > 100; x -= 40 {
		pts, ways = append(pts, [2]float64{x, wobble(len(pts), 4)}), append(ways, 1)
	}
	for i, m := range matchAll(t, h, 5, pts...) {
		if !m.Matched || m.WayID != ways[i] {
			t.Errorf("point %d (%.0f, %.0f) matched to way %d (%v), want %d", i, pts[i][0], pts[i][1], m.WayID, m.Matched, ways[i])
		}
	}
	res := New(h, routing.Auto, Config{}).Match(points(pts, 5))
	want := 500 - pts[0][0] + 500 - pts[len(pts)-1][0] // out to the loop, and back to the last fix
	for k := 1; k < len(ring); k++ {                   // round it
		want += math.Hypot(ring[k][0]-ring[k-1][0], ring[k][1]-ring[k-1][1])
	}
	if len(res.Runs) != 1 || math.Abs(res.Runs[0].Meters-want) > 15 {
		t.Errorf("runs %+v, want one of %.0f m", res.Runs, want)
	}
}

// TestStopAtLight: a car drives east, stands 8 m before a junction for
// 30 fixes (a red light) while its fixes scatter up to 7 m, then drives
// on onto the next way: every fix on the way it was on, and the route
// is the distance driven, not the scatter of the fixes while it stood.
func TestStopAtLight(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{500, 0})
	h.road(2, 1, 2, 50, [2]float64{500, 0}, [2]float64{1000, 0})
	h.road(3, 1, 3, 30, [2]float64{500, 0}, [2]float64{500, 400})
	h.road(4, 1, 4, 30, [2]float64{500, 0}, [2]float64{500, -400})
	var pts [][2]float64
	var ways []int64
	for x := 100.0; x < 492; x += 30 {
		pts, ways = append(pts, [2]float64{x, wobble(len(pts), 4)}), append(ways, 1)
	}
	for i := range 30 {
		pts, ways = append(pts, [2]float64{492 + wobble(i, 7), wobble(i+5, 7)}), append(ways, 1)
	}
	for x := 530.0; x < 900; x += 30 {
		pts, ways = append(pts, [2]float64{x, wobble(len(pts), 4)}), append(ways, 2)
	}
	for i, m := range matchAll(t, h, 5, pts...) {
		if !m.Matched || m.WayID != ways[i] {
			t.Errorf("point %d (%.0f, %.0f) matched to way %d (%v), want %d", i, pts[i][0], pts[i][1], m.WayID, m.Matched, ways[i])
		}
	}
	res := New(h, routing.Auto, Config{}).Match(points(pts, 5))
	want := pts[len(pts)-1][0] - pts[0][0]
	if len(res.Runs) != 1 || math.Abs(res.Runs[0].Meters-want) > 20 {
		t.Errorf("runs %+v, want one of %.0f m", res.Runs, want)
	}
}

// points are fixes at the places given in meters, accuracy acc.
func points(xy [][2]float64, acc float64) []Point {
	out := make([]Point, len(xy))
	for i, p := range xy {
		lat, lon := toLatLon(p[0], p[1])
		out[i] = Point{Lat: lat, Lon: lon, Accuracy: acc}
	}
	return out
}

// TestWaitBeforeCrossStreet: a car brakes to wait 8 m before a junction
// for longer than the lag, its fixes (with times, a second apart)
// scattered up to 16 m around where it stands, four of them nearer the
// cross street than its own road, then drives straight on: the fixes
// while it waits are on the road it waits on, as where it went on shows
// (and the others too, but within 5 m of the junction), and the route is
// the distance driven.
func TestWaitBeforeCrossStreet(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{500, 0})
	h.road(2, 1, 2, 50, [2]float64{500, 0}, [2]float64{1000, 0})
	h.road(3, 1, 3, 30, [2]float64{500, 0}, [2]float64{500, 400})
	var pts [][2]float64
	var ways []int64
	for _, x := range []float64{380, 394, 407, 419, 430, 440, 459, 466, 476, 483, 488, 491} { // braking
		pts, ways = append(pts, [2]float64{x, wobble(len(pts), 3)}), append(ways, 1)
	}
	for _, p := range [][2]float64{{480, 4}, {503, 9}, {497, -5}, {504, 10}, {481, -3}, {502, -7}, {486, 2}, {503, 6}, {490, -9}, {499, 11}, {483, -6}, {476, -8}} {
		pts, ways = append(pts, p), append(ways, 1)
	}
	for i := 1; i < 20; i++ { // away at 2 m/s², then at 14 m/s
		x := 492 + float64(i*i)
		if i > 7 {
			x = 492 + 49 + 14*float64(i-7)
		}
		way := int64(1)
		if x > 500 {
			way = 2
		}
		pts, ways = append(pts, [2]float64{x, wobble(i, 3)}), append(ways, way)
	}
	fixes := points(pts, 8)
	for i := range fixes {
		fixes[i].Time = 1.8e9 + float64(i)
	}
	res := New(h, routing.Auto, Config{}).Match(fixes)
	for i, m := range res.Matches {
		moving := i < 12 || i >= 24
		if moving && math.Abs(pts[i][0]-500) < 5 {
			continue // a fix taken within 5 m of the junction: either way
		}
		if !m.Matched || m.WayID != ways[i] {
			t.Errorf("fix %d (%.0f, %.0f) matched to way %d (%v), want %d", i, pts[i][0], pts[i][1], m.WayID, m.Matched, ways[i])
		}
	}
	want := pts[len(pts)-1][0] - pts[0][0]
	if len(res.Runs) != 1 || math.Abs(res.Runs[0].Meters-want) > 20 {
		t.Errorf("runs %+v, want one of %.0f m", res.Runs, want)
	}
}

// TestNoRouteFasterThanAVehicle: a car drives east along a road at 25
// m/s, a fix a second; one fix strays 125 m north, beside a service road
// that loops north of the road. Reaching the loop and coming back is a
// route of 145 m each way within a second, which no vehicle drives: the
// stray fix is read as a GPS jump (the trace is cut around it), not as a
// detour up the loop and back, so the routes add up to no more than the
// distance driven and every other fix is on the road.
func TestNoRouteFasterThanAVehicle(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 72, [2]float64{0, 0}, [2]float64{500, 0})
	h.road(1, 1, 2, 72, [2]float64{500, 0}, [2]float64{1000, 0})
	h.road(2, 1, 3, 20, [2]float64{500, 0}, [2]float64{500, 120}, [2]float64{700, 120}, [2]float64{700, 0})
	h.road(1, 3, 2, 72, [2]float64{700, 0}, [2]float64{1000, 0})
	var pts []Point
	stray := -1
	for i := range 30 {
		x, y := 100+25*float64(i), wobble(i, 3)
		if x == 525 {
			y, stray = 125, i
		}
		lat, lon := toLatLon(x, y)
		pts = append(pts, Point{Lat: lat, Lon: lon, Accuracy: 5, Time: 1000 + float64(i)})
	}
	res := New(h, routing.Auto, Config{}).Match(pts)
	var meters float64
	for _, r := range res.Runs {
		meters += r.Meters
	}
	if driven := 25.0 * 29; meters > driven+10 {
		t.Errorf("routes of %.0f m in all for %.0f m driven: %+v", meters, driven, res.Runs)
	}
	for i, m := range res.Matches {
		if i != stray && (!m.Matched || m.WayID != 1) {
			t.Errorf("fix %d matched to way %d (%v), want the road", i, m.WayID, m.Matched)
		}
	}
}
