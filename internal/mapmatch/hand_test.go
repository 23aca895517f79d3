package mapmatch

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// handNet is a hand-built road network in meters east (x) and north (y)
// of 40°N 83°W.
type handNet struct {
	nodes int
	edges []handEdge
}

type handEdge struct {
	pts        [][2]float64 // x, y
	tail, head int
	way        int64
	class      routing.RoadClass
	kmh        [2]float64 // forward, backward
	fwd, bwd   bool
}

const mPerDeg = 111_194.93

func toLatLon(x, y float64) (float64, float64) {
	return 40 + y/mPerDeg, -83 + x/(mPerDeg*math.Cos(40*math.Pi/180))
}

// road adds a two-way road through pts from junction tail to head.
func (h *handNet) road(way int64, tail, head int, kmh float64, pts ...[2]float64) *handEdge {
	h.nodes = max(h.nodes, tail+1, head+1)
	h.edges = append(h.edges, handEdge{pts: pts, tail: tail, head: head, way: way, class: routing.ClassResidential,
		kmh: [2]float64{kmh, kmh}, fwd: true, bwd: true})
	return &h.edges[len(h.edges)-1]
}

func (h *handNet) Edges() int { return len(h.edges) }
func (h *handNet) Nodes() int { return h.nodes }
func (h *handNet) EdgePoints(e int, lat, lon []float64) ([]float64, []float64) {
	for _, p := range h.edges[e].pts {
		a, b := toLatLon(p[0], p[1])
		lat, lon = append(lat, a), append(lon, b)
	}
	return lat, lon
}
func (h *handNet) EdgeEnds(e int) (int, int) { return h.edges[e].tail, h.edges[e].head }
func (h *handNet) EdgeOpen(e int, _ routing.Costing) (bool, bool) {
	return h.edges[e].fwd, h.edges[e].bwd
}
func (h *handNet) EdgeRoad(e int, backward bool) routing.Road {
	d := 0
	if backward {
		d = 1
	}
	ed := h.edges[e]
	return routing.Road{WayID: ed.way, Class: ed.class, LimitKmh: ed.kmh[d], Posted: true}
}

// matchAll matches points given in meters, accuracy acc, and checks that
// every point gets exactly one match, in order.
func matchAll(t *testing.T, r Roads, acc float64, xy ...[2]float64) []Match {
	t.Helper()
	tr := New(r, routing.Auto, Config{}).Trace()
	var out []Match
	for _, p := range xy {
		lat, lon := toLatLon(p[0], p[1])
		out = append(out, tr.Add(Point{Lat: lat, Lon: lon, Accuracy: acc})...)
	}
	out = append(out, tr.Flush()...)
	if len(out) != len(xy) {
		t.Fatalf("%d matches for %d points", len(out), len(xy))
	}
	for i, m := range out {
		if m.Index != i {
			t.Fatalf("match %d is of point %d", i, m.Index)
		}
	}
	return out
}

// wobble is a deterministic noise in [-a, a].
func wobble(i int, a float64) float64 { return a * math.Sin(float64(i)*2.3) }

// TestParallelRoads: two roads 20 m apart joined at their ends; a car on
// one whose fixes stray up to 11 m towards the other (nearer to it for
// some) stays on its own road, both ways round.
func TestParallelRoads(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	h.road(2, 2, 3, 30, [2]float64{0, 20}, [2]float64{1000, 20})
	h.road(3, 0, 2, 30, [2]float64{0, 0}, [2]float64{0, 20})
	h.road(4, 1, 3, 30, [2]float64{1000, 0}, [2]float64{1000, 20})
	for _, tc := range []struct {
		way  int64
		y, s float64 // the road's y, towards the other road
	}{{1, 0, 1}, {2, 20, -1}} {
		var pts [][2]float64
		for i := 0; i < 18; i++ {
			off := 3.0
			if i%3 == 1 {
				off = 11 // 9 m from the other road
			} else if i%3 == 2 {
				off = -4
			}
			pts = append(pts, [2]float64{100 + 45*float64(i), tc.y + tc.s*off})
		}
		for _, m := range matchAll(t, h, 8, pts...) {
			if !m.Matched || m.WayID != tc.way {
				t.Errorf("road %d: point %d matched to way %d (%v)", tc.way, m.Index, m.WayID, m.Matched)
			}
			if m.LimitKmh != map[int64]float64{1: 50, 2: 30}[tc.way] {
				t.Errorf("road %d: point %d limit %v", tc.way, m.Index, m.LimitKmh)
			}
		}
	}
}

// TestUTurn: a car drives east along a road posted 50 eastbound and 30
// westbound, past a side street, turns round and comes back: every
// point is on the road, near where it was, with the limit of the
// direction it drove.
func TestUTurn(t *testing.T) {
	h := &handNet{}
	main := h.road(1, 0, 1, 0, [2]float64{0, 0}, [2]float64{500, 0})
	main.kmh = [2]float64{50, 30}
	main = h.road(1, 1, 2, 0, [2]float64{500, 0}, [2]float64{1000, 0})
	main.kmh = [2]float64{50, 30}
	h.road(2, 1, 3, 30, [2]float64{500, 0}, [2]float64{500, 300})
	var pts [][2]float64
	var east []bool
	for x := 100.0; x <= 700; x += 40 {
		pts, east = append(pts, [2]float64{x, wobble(len(pts), 5)}), append(east, true)
	}
	for x := 680.0; x >= 100; x -= 40 {
		pts, east = append(pts, [2]float64{x, wobble(len(pts), 5)}), append(east, false)
	}
	for i, m := range matchAll(t, h, 5, pts...) {
		if !m.Matched || m.WayID != 1 {
			t.Errorf("point %d matched to way %d (%v)", i, m.WayID, m.Matched)
			continue
		}
		if x, _ := h.xy(m); math.Abs(x-pts[i][0]) > 10 {
			t.Errorf("point %d at x=%.0f matched at x=%.0f", i, pts[i][0], x)
		}
		turning := pts[i][0] > 650
		if want := map[bool]float64{true: 50, false: 30}[east[i]]; !turning && m.LimitKmh != want {
			t.Errorf("point %d (east %v) limit %v, want %v", i, east[i], m.LimitKmh, want)
		}
	}
}

// xy is a match's place in meters.
func (h *handNet) xy(m Match) (float64, float64) {
	return (m.Lon + 83) * mPerDeg * math.Cos(40*math.Pi/180), (m.Lat - 40) * mPerDeg
}

// TestGPSJump: one fix of a car on a road jumps 400 m onto another road
// it cannot have reached; the fixes before and after stay on the car's
// road, and a fix 2 km from any road is unmatched.
func TestGPSJump(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{2000, 0})
	h.road(2, 2, 3, 30, [2]float64{0, 400}, [2]float64{2000, 400})
	var pts [][2]float64
	for i := 0; i < 30; i++ {
		pts = append(pts, [2]float64{50 + 50*float64(i), wobble(i, 6)})
	}
	pts[10] = [2]float64{550, 403}
	pts[20] = [2]float64{1050, 2000}
	for i, m := range matchAll(t, h, 10, pts...) {
		switch i {
		case 10:
			if m.Matched && m.WayID != 2 {
				t.Errorf("the jump matched to way %d", m.WayID)
			}
		case 20:
			if m.Matched {
				t.Errorf("a fix 2 km off the roads matched to way %d", m.WayID)
			}
		default:
			if !m.Matched || m.WayID != 1 {
				t.Errorf("point %d matched to way %d (%v)", i, m.WayID, m.Matched)
			}
		}
	}
}

// TestLag: without the paths' meeting, a point's match comes out, final,
// once Lag more points have arrived (the bound of the wait); Flush gives
// the rest. (With it, on this lone road, each point is final as the next
// comes: TestDecidedWhenPathsMeet.)
func TestLag(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{2000, 0})
	m := New(h, routing.Auto, Config{Lag: 3})
	m.convergeAfter = 1 << 30
	tr := m.Trace()
	got := 0
	for i := 0; i < 10; i++ {
		lat, lon := toLatLon(100+50*float64(i), 2)
		out := tr.Add(Point{Lat: lat, Lon: lon})
		got += len(out)
		if want := max(0, i+1-3); got != want || tr.Pending() != i+1-got {
			t.Fatalf("after %d points %d final, %d pending; want %d final", i+1, got, tr.Pending(), want)
		}
	}
	if out := tr.Flush(); len(out) != 3 || out[2].Index != 9 || tr.Pending() != 0 {
		t.Errorf("flush gave %d matches, last %+v", len(out), out)
	}
}

// TestTentative: the points waiting in the window have a road already,
// which Add then confirms; Tentative changes nothing. (The paths'
// meeting is left out, so that all four points wait.)
func TestTentative(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{2000, 0})
	h.road(2, 1, 2, 30, [2]float64{2000, 0}, [2]float64{2000, 1000})
	m := New(h, routing.Auto, Config{})
	m.convergeAfter = 1 << 30
	tr := m.Trace()
	for i := 0; i < 4; i++ {
		lat, lon := toLatLon(100+60*float64(i), 3)
		tr.Add(Point{Lat: lat, Lon: lon})
	}
	tent := tr.Tentative()
	if len(tent) != 4 || tr.Pending() != 4 || tr.Added() != 4 {
		t.Fatalf("%d tentative, %d pending, %d added", len(tent), tr.Pending(), tr.Added())
	}
	final := tr.Flush()
	for i := range tent {
		if tent[i].Index != i || tent[i].WayID != 1 || tent[i] != final[i] {
			t.Errorf("point %d: tentative %+v, final %+v", i, tent[i], final[i])
		}
	}
}

// TestRoadAt: a lone location takes the nearest road's class and the
// lower of its limits; one far from every road has none.
func TestRoadAt(t *testing.T) {
	h := &handNet{}
	r := h.road(1, 0, 1, 0, [2]float64{0, 0}, [2]float64{1000, 0})
	r.kmh = [2]float64{50, 30}
	h.road(2, 2, 3, 90, [2]float64{0, 60}, [2]float64{1000, 60})
	h.edges[1].class = routing.ClassTrunk
	m := New(h, routing.Auto, Config{})
	for _, tc := range []struct {
		y     float64
		limit float64
		class string
		ok    bool
	}{{5, 30, "residential", true}, {50, 90, "trunk", true}, {400, 0, "", false}} {
		lat, lon := toLatLon(500, tc.y)
		limit, class, ok := m.RoadAt(lat, lon, 5)
		if limit != tc.limit || class != tc.class || ok != tc.ok {
			t.Errorf("%v m north: %v %q %v, want %v %q %v", tc.y, limit, class, ok, tc.limit, tc.class, tc.ok)
		}
	}
}

// TestLongLagSmoothed: a lag longer than the smoother's buffers, with
// times, matches every fix onto its road.
func TestLongLagSmoothed(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{2000, 0})
	tr := New(h, routing.Auto, Config{Lag: 40}).Trace()
	var out []Match
	for i := range 100 {
		lat, lon := toLatLon(15*float64(i), wobble(i, 5))
		out = append(out, tr.Add(Point{Lat: lat, Lon: lon, Accuracy: 5, Time: 1.8e9 + float64(i)})...)
	}
	out = append(out, tr.Flush()...)
	if len(out) != 100 {
		t.Fatalf("%d matches for 100 fixes", len(out))
	}
	for i, m := range out {
		if !m.Matched || m.WayID != 1 {
			t.Errorf("fix %d matched to way %d (%v)", i, m.WayID, m.Matched)
		}
	}
}

// TestSlowVehicleNotHeld: a car crawling at 5 m/s, a fix a second with
// 5 m of accuracy, has fixes that lie a little behind the one before
// (noise, not a stand): each point is still final Lag fixes after it.
// The same places 5 s apart are a vehicle that stood at times, and the
// points before a fix that seems to stand wait for more. (The paths'
// meeting is left out, so that only the window decides.)
func TestSlowVehicleNotHeld(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{3000, 0})
	var xs []float64
	for i := range 40 {
		xs = append(xs, 100+5*float64(i)+wobble(i, 4))
	}
	back := 0
	for i := 1; i < len(xs); i++ {
		if xs[i] < xs[i-1] {
			back++
		}
	}
	if back < 3 {
		t.Fatalf("only %d fixes behind the one before: the test shows nothing", back)
	}
	// late is how many times a point was not final Lag fixes after it
	late := func(dt float64) int {
		m := New(h, routing.Auto, Config{Lag: 4})
		m.convergeAfter = 1 << 30
		tr := m.Trace()
		got, late := 0, 0
		for i, x := range xs {
			lat, lon := toLatLon(x, wobble(i+3, 3))
			got += len(tr.Add(Point{Lat: lat, Lon: lon, Accuracy: 5, Time: 1.8e9 + dt*float64(i)}))
			if got < max(0, i+1-4) {
				late++
			}
		}
		return late
	}
	if n := late(1); n != 0 {
		t.Errorf("a fix a second: %d times a point waited beyond the window (%d fixes behind the one before)", n, back)
	}
	if n := late(5); n == 0 {
		t.Errorf("fixes 5 s apart: no point waited for the fixes that seem to stand")
	}
}
