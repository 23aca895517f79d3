package routing

import "testing"

// edgesOfWay lists the edges of the way with OSM id id.
func edgesOfWay(g *Graph, id int64) []int {
	var es []int
	for e := range g.tail {
		if g.ways[g.way[e]].id == id {
			es = append(es, e)
		}
	}
	return es
}

// TestObservedSpeeds: speeds measured on a road time it at those speeds
// and route by them. A motorway driven at 10 km/h A to B makes the toll
// road the quicker way A to B, while B to A, not observed, keeps the
// motorway; a motorway driven faster than its limit takes its length
// at that speed; without observations the answer is the hierarchy's.
func TestObservedSpeeds(t *testing.T) {
	n := avoidNet(t)
	g := n.graph()
	a, b := n.along(7, 1, 0.5), n.along(2, 8, 0.5)
	spurs := n.meters(7, 1)/2 + n.meters(2, 8)/2
	motorway := edgesOfWay(g, 10)
	if len(motorway) != 1 {
		t.Fatalf("motorway edges %v", motorway)
	}
	m := motorway[0]
	_, lon := g.EdgePoints(m, nil, nil)
	fwd := lon[0] == -83 // the edge runs from node 1 to node 2
	at := func(kmh float64, forward bool) Speeds {
		return func(e int, backward bool) (float64, bool) {
			if e == m && backward != (forward == fwd) {
				return kmh, true
			}
			return 0, false
		}
	}
	route := func(obs Speeds, from, to [2]float64) Cost {
		return g.Route(Request{Sources: [][2]float64{from}, Targets: [][2]float64{to}, Costing: Auto, Observed: obs}).Costs[0][0]
	}
	free := route(nil, a, b)
	if !free.OK || !near(free.Meters, spurs+n.meters(1, 2), 1) {
		t.Fatalf("free flow A to B: %+v", free)
	}
	none := route(func(int, bool) (float64, bool) { return 0, false }, a, b)
	if !near(none.Meters, free.Meters, 0.5) || !near(none.Seconds, free.Seconds, 0.5) {
		t.Errorf("no observation: %+v, the hierarchy %+v", none, free)
	}
	slow := route(at(10, true), a, b)
	if !slow.OK || !near(slow.Meters, spurs+n.meters(1, 4, 2), 1) || slow.Seconds <= free.Seconds {
		t.Errorf("motorway at 10 km/h A to B: %+v, want the toll road's %.0f m and more than %.0f s", slow, spurs+n.meters(1, 4, 2), free.Seconds)
	}
	back := route(at(10, true), b, a)
	if freeBack := route(nil, b, a); !near(back.Meters, freeBack.Meters, 0.5) || !near(back.Seconds, freeBack.Seconds, 0.5) {
		t.Errorf("B to A, observed only A to B: %+v, free flow %+v", back, freeBack)
	}
	// a location half way along the motorway: its half of the edge is
	// timed at the speed observed too
	mid := n.along(1, 2, 0.5)
	freeMid := route(nil, a, mid)
	at60 := route(at(60, true), a, mid)
	v := int32(2 * m)
	if !fwd {
		v++
	}
	_, d, _ := g.edgeCost(v, Auto)
	half := n.meters(1, 2) / 2
	if want := freeMid.Seconds - d/10/2 + half/(60/3.6); !near(at60.Meters, freeMid.Meters, 0.5) || !near(at60.Seconds, want, 0.6) {
		t.Errorf("to the motorway's middle at 60 km/h: %+v, want %.1f s (free flow %+v)", at60, want, freeMid)
	}
	fast := route(at(200, true), a, b)
	want := free.Seconds - d/10 + n.meters(1, 2)/(200/3.6)
	if !near(fast.Meters, free.Meters, 0.5) || !near(fast.Seconds, want, 0.5) {
		t.Errorf("motorway at 200 km/h: %+v, want %.1f s", fast, want)
	}
}
