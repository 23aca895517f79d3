package mapmatch

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// sharedData is rel under ../shared/data, the real data beside the
// repository; without it the test skips, except under CI=true.
func sharedData(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", rel))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			tb.Fatalf("%s is missing, and CI must run the tests on the real data: %v", p, err)
		}
		tb.Skipf("skipping: %s is missing", p)
	}
	return p
}

var columbus struct {
	once sync.Once
	g    *routing.Graph
	err  error
}

func columbusGraph(tb testing.TB) *routing.Graph {
	path := sharedData(tb, filepath.Join("osm", "us-oh-columbus.osm.pbf"))
	columbus.once.Do(func() { columbus.g, columbus.err = routing.Load(path, routing.Options{Costings: []routing.Costing{}}) })
	if columbus.err != nil {
		tb.Fatal(columbus.err)
	}
	return columbus.g
}

// drive is a simulated trip: a random drive over the roads cars may use
// (no U-turn where another way on exists, onto service roads only where
// nothing else goes on), a fix every dt seconds at
// 90 % of each road's limit (at most 80 km/h) with Gaussian noise of
// sigma meters on each axis, and the way each fix was truly on.
func drive(n *network, rng *rand.Rand, meters, dt, sigma float64) (pts []Point, ways []int64) {
	var de int32 = -1
	for de < 0 {
		e := int32(rng.IntN(len(n.fwd)))
		if n.fwd[e] {
			de = 2 * e
		} else if n.bwd[e] {
			de = 2*e + 1
		}
	}
	var driven, next float64
	for driven < meters {
		e, back := de/2, de%2 == 1
		road := n.roads.EdgeRoad(int(e), back)
		step := min(road.LimitKmh*0.9, 80) / 3.6 * dt
		l := n.length(e)
		for ; next <= l; next += step {
			off := next
			if back {
				off = l - next
			}
			x, y := n.along(e, off)
			x, y = x+rng.NormFloat64()*sigma, y+rng.NormFloat64()*sigma
			lat, lon := n.latLon(x, y)
			pts, ways = append(pts, Point{Lat: lat, Lon: lon, Accuracy: sigma}), append(ways, road.WayID)
		}
		next -= l
		driven += l
		end := n.head[e]
		if back {
			end = n.tail[e]
		}
		outs := n.out[n.outFirst[end]:n.outFirst[end+1]]
		if len(outs) == 0 {
			break
		}
		de = pick(n, outs, e, rng)
	}
	return pts, ways
}

// pick is the way on: a random one of the roads leaving the junction
// other than the one arrived on, service roads (parking aisles,
// driveways) only when there is nothing else.
func pick(n *network, outs []int32, from int32, rng *rand.Rand) int32 {
	var through, service []int32
	for _, o := range outs {
		switch {
		case o/2 == from:
		case n.roads.EdgeRoad(int(o/2), o%2 == 1).Class == routing.ClassService:
			service = append(service, o)
		default:
			through = append(through, o)
		}
	}
	if len(through) > 0 {
		return through[rng.IntN(len(through))]
	}
	if len(service) > 0 {
		return service[rng.IntN(len(service))]
	}
	return outs[0]
}

// TestSimulatedDrives: on the Columbus extract, random drives of 5 km
// sampled every 5 s with 10 m of noise on each axis are matched onto the
// road (the OSM way) they were on for at least 90 % of their fixes (92 to
// 93 % over seeds; the misses are within 30 m of the right way, near
// junctions of residential streets), and the confidence is clearly lower
// where the match is wrong.
func TestSimulatedDrives(t *testing.T) {
	m := New(columbusGraph(t), routing.Auto, Config{})
	rng := rand.New(rand.NewPCG(7, 29))
	right, all := 0, 0
	var confRight, confWrong float64
	for trip := 0; trip < 40; trip++ {
		pts, ways := drive(m.net, rng, 5000, 5, 10)
		tr := m.Trace()
		var out []Match
		for _, p := range pts {
			out = append(out, tr.Add(p)...)
		}
		out = append(out, tr.Flush()...)
		if len(out) != len(pts) {
			t.Fatalf("%d matches for %d fixes", len(out), len(pts))
		}
		for i, mt := range out {
			all++
			if mt.Matched && mt.WayID == ways[i] {
				right++
				confRight += mt.Confidence
			} else {
				confWrong += mt.Confidence
			}
		}
	}
	share := float64(right) / float64(all)
	confRight, confWrong = confRight/float64(right), confWrong/float64(all-right)
	t.Logf("%d fixes, %.1f%% on the right road; mean confidence %.2f on the right road, %.2f on a wrong one", all, 100*share, confRight, confWrong)
	if share < 0.9 {
		t.Errorf("%.1f%% of the fixes on the right road, want at least 90%%", 100*share)
	}
	if confRight < confWrong+0.2 {
		t.Errorf("confidence %.2f on the right road and %.2f on a wrong one: it does not tell them apart", confRight, confWrong)
	}
}

// BenchmarkMatch: fixes matched per second, one trace after another, on
// the Columbus extract (5 s sampling, 10 m noise).
func BenchmarkMatch(b *testing.B) {
	m := New(columbusGraph(b), routing.Auto, Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	var traces [][]Point
	total := 0
	for range 20 {
		pts, _ := drive(m.net, rng, 5000, 5, 10)
		traces, total = append(traces, pts), total+len(pts)
	}
	b.ResetTimer()
	for range b.N {
		for _, pts := range traces {
			tr := m.Trace()
			for _, p := range pts {
				tr.Add(p)
			}
			tr.Flush()
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}
