package mapmatch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// addAll adds the points given in meters (accuracy acc, no times) to a
// trace of m one by one and returns, for each, the matches that became
// final when it was added.
func addAll(m *Matcher, acc float64, xy ...[2]float64) (*Trace, [][]Match) {
	tr := m.Trace()
	var outs [][]Match
	for _, p := range xy {
		lat, lon := toLatLon(p[0], p[1])
		outs = append(outs, tr.Add(Point{Lat: lat, Lon: lon, Accuracy: acc}))
	}
	return tr, outs
}

// TestDecidedWhenPathsMeet: a street with a side street off it; the
// fixes run along the street well clear of the side street. Every
// candidate of each new fix comes from the same candidate of the fix
// before, so each fix is final as soon as the next one has come, not
// Lag fixes later.
func TestDecidedWhenPathsMeet(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	h.road(2, 1, 2, 50, [2]float64{1000, 0}, [2]float64{2000, 0})
	h.road(3, 1, 3, 30, [2]float64{1000, 0}, [2]float64{1000, 800})
	var xy [][2]float64
	for i := range 12 {
		xy = append(xy, [2]float64{100 + 60*float64(i), wobble(i, 4)})
	}
	tr, outs := addAll(New(h, routing.Auto, Config{}), 5, xy...)
	for i, out := range outs {
		want := 1
		if i == 0 {
			want = 0
		}
		if len(out) != want || want == 1 && out[0].Index != i-1 {
			t.Fatalf("after fix %d: %d final (%+v), want fix %d alone", i, len(out), out, i-1)
		}
		if want == 1 && (!out[0].Matched || out[0].WayID != 1) {
			t.Errorf("fix %d on way %d", i-1, out[0].WayID)
		}
	}
	if tr.Pending() != 1 {
		t.Errorf("%d pending, want 1", tr.Pending())
	}
}

// TestParallelRoadsWait: two one-way roads the same way 20 m apart,
// joined by a link at each end, the fixes halfway between them: a path
// along each stays as likely to the last fix, so the paths do not meet
// and the first fix waits for Lag more (the bound of the wait). Once it
// is decided, the other road's path leaves the decided road, and the
// fixes after it are final as their next one comes.
func TestParallelRoadsWait(t *testing.T) {
	h := &handNet{}
	a := h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{2000, 0})
	a.bwd = false
	b := h.road(2, 2, 3, 50, [2]float64{0, 20}, [2]float64{2000, 20})
	b.bwd = false
	h.road(3, 0, 2, 30, [2]float64{0, 0}, [2]float64{0, 20})
	h.road(4, 1, 3, 30, [2]float64{2000, 0}, [2]float64{2000, 20})
	var xy [][2]float64
	for i := range 12 {
		xy = append(xy, [2]float64{200 + 60*float64(i), 10 + wobble(i, 2)})
	}
	const lag = 4
	tr, outs := addAll(New(h, routing.Auto, Config{Lag: lag}), 8, xy...)
	final := 0
	for i, out := range outs {
		if i < lag && len(out) > 0 {
			t.Fatalf("after fix %d: %d final (%+v), want none before %d more fixes", i, len(out), out, lag)
		}
		for _, m := range out {
			if m.Index != final {
				t.Fatalf("after fix %d: fix %d final, want %d", i, m.Index, final)
			}
			final++
		}
		if i >= lag && final != i {
			t.Errorf("after fix %d: %d final, want %d", i, final, i)
		}
	}
	if tr.Pending() != 1 {
		t.Errorf("%d pending, want 1", tr.Pending())
	}
}

// TestEarlyDecisionsExact: deciding a fix where its paths meet changes
// no decision. On random drives over a hand-built grid, and on simulated
// drives over the Columbus extract when it is there, at fixes 1, 5 and
// 30 s apart, the matches (without times, so not smoothed: the chosen
// candidates themselves) are those of the window without the rule, and
// with a window that never fills those of the whole trace decided at
// its end, on every drive where no path left the roads decided before
// it (where one did, the window goes on from the best path whatever
// was decided, and the two may differ there).
func TestEarlyDecisionsExact(t *testing.T) {
	nets := []Roads{gridNet(20, 150)}
	if testing.Short() || raceOn {
		t.Log("the extract left out (-short, -race)")
	} else {
		nets = append(nets, columbusGraph(t))
	}
	for ni, r := range nets {
		early := New(r, routing.Auto, Config{})
		fixed := New(r, routing.Auto, Config{})
		fixed.convergeAfter = 1 << 30
		whole := New(r, routing.Auto, Config{Lag: 1 << 20})
		whole.convergeAfter = 1 << 30
		wholeEarly := New(r, routing.Auto, Config{Lag: 1 << 20})
		rng := rand.New(rand.NewPCG(3, uint64(ni)))
		fixes, drives, skipped, differ := 0, 0, 0, 0
		for _, set := range []struct{ dt, sigma float64 }{{1, 5}, {5, 10}, {30, 20}} {
			for range 8 {
				tp := drive(early.net, rng, 2000, set.dt, set.sigma)
				for i := range tp.pts {
					tp.pts[i].Time = 0
				}
				drives++
				e, be := matchOnline(early, tp.pts)
				f, bf := matchOnline(fixed, tp.pts)
				w, bw := matchOnline(whole, tp.pts)
				we, bwe := matchOnline(wholeEarly, tp.pts)
				if be+bf+bw+bwe > 0 {
					skipped++
					for i := range tp.pts {
						if e[i] != f[i] {
							differ++
						}
					}
					continue
				}
				for i := range tp.pts {
					fixes++
					if e[i] != f[i] {
						t.Errorf("net %d, %.0f s: fix %d decided early %+v, by the window %+v", ni, set.dt, i, e[i], f[i])
					}
					if we[i] != w[i] {
						t.Errorf("net %d, %.0f s: fix %d decided early in an endless window %+v, at the end %+v", ni, set.dt, i, we[i], w[i])
					}
				}
			}
		}
		t.Logf("net %d: %d fixes of %d drives the same; %d drives with a path that left the decided roads, %d fixes of them decided otherwise", ni, fixes, drives-skipped, skipped, differ)
		if skipped > drives/4 {
			t.Errorf("net %d: %d of %d drives with a path that left the decided roads", ni, skipped, drives)
		}
	}
}

// matchOnline is each point's match, decided online, and how many were
// decided on a path that left the roads decided before them.
func matchOnline(m *Matcher, pts []Point) ([]Match, int) {
	tr := m.Trace()
	var out []Match
	for _, p := range pts {
		out = append(out, tr.Add(p)...)
	}
	return append(out, tr.Flush()...), tr.broken
}

// gridNet is n×n junctions spaced apart meters, two-way streets between
// neighbours, every third street a one-way and a faster road.
func gridNet(n int, apart float64) *handNet {
	h := &handNet{}
	way := int64(1)
	id := func(i, j int) int { return i*n + j }
	for i := range n {
		for j := range n {
			p := [2]float64{float64(j) * apart, float64(i) * apart}
			if j+1 < n {
				e := h.road(way, id(i, j), id(i, j+1), 40, p, [2]float64{p[0] + apart, p[1]})
				if i%3 == 1 {
					e.bwd, e.kmh = false, [2]float64{60, 60}
				}
			}
			if i+1 < n {
				e := h.road(way+1, id(i, j), id(i+1, j), 40, p, [2]float64{p[0], p[1] + apart})
				if j%3 == 2 {
					e.fwd, e.kmh = false, [2]float64{60, 60}
				}
			}
		}
		way += 2
	}
	return h
}

// TestDecidedAcrossJunctionOfOneRoad: a street of one way in two edges
// either side of a junction with a side street; a car drives through
// it, a fix a second 15 m apart. The fixes within a sigma of the
// junction are decided before Lag more fixes have come: their smoothed
// place may still move onto the other edge, but that is the same road.
func TestDecidedAcrossJunctionOfOneRoad(t *testing.T) {
	h := &handNet{}
	h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{1000, 0})
	h.road(1, 1, 2, 50, [2]float64{1000, 0}, [2]float64{2000, 0})
	h.road(3, 1, 3, 30, [2]float64{1000, 0}, [2]float64{1000, 800})
	tr := New(h, routing.Auto, Config{}).Trace()
	decidedAt := map[int]int{}
	var xs []float64
	for i := range 30 {
		x := 800 + 15*float64(i) + 2
		xs = append(xs, x)
		lat, lon := toLatLon(x, wobble(i, 2))
		for _, m := range tr.Add(Point{Lat: lat, Lon: lon, Accuracy: 5, Time: 1.8e9 + float64(i)}) {
			decidedAt[m.Index] = i
			if !m.Matched || m.WayID != 1 {
				t.Errorf("fix %d on way %d", m.Index, m.WayID)
			}
		}
	}
	near := 0
	for i, x := range xs[:25] {
		if math.Abs(x-1000) > 5 {
			continue
		}
		near++
		if at, ok := decidedAt[i]; !ok || at-i >= DefaultLag {
			t.Errorf("fix %d, %.0f m from the junction: decided after %d fixes (%v), want fewer than %d", i, x-1000, at-i, ok, DefaultLag)
		}
	}
	if near == 0 {
		t.Fatal("no fix near the junction")
	}
}
