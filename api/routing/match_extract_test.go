package routing_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apirouting "github.com/fleethub/fleethub/api/routing"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
)

// sharedData is rel under ../shared/data, beside the repository; without
// it the test skips, except under CI=true.
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
	m    *mapmatch.Matcher
	err  error
}

func columbusGraph(tb testing.TB) (*routing.Graph, *mapmatch.Matcher) {
	path := sharedData(tb, filepath.Join("osm", "us-oh-columbus.osm.pbf"))
	columbus.once.Do(func() {
		columbus.g, columbus.err = routing.Load(path, routing.Options{Costings: []routing.Costing{}})
		if columbus.err == nil {
			columbus.m = mapmatch.New(columbus.g, routing.Auto, mapmatch.Config{})
		}
	})
	if columbus.err != nil {
		tb.Fatal(columbus.err)
	}
	return columbus.g, columbus.m
}

// drive is a trace of n fixes a second apart of a car driving 15 m/s
// over g's car roads from a random edge (no U-turn where another way
// goes on), each fix up to 4 m off the road, and the way of each fix.
func drive(g *routing.Graph, rng *rand.Rand, n int, t0 time.Time) ([]point, []int64) {
	out := map[int][]int{} // junction -> directed edges (2e forward, 2e+1 backward)
	for e := range g.Edges() {
		t, h := g.EdgeEnds(e)
		f, b := g.EdgeOpen(e, routing.Auto)
		if f {
			out[t] = append(out[t], 2*e)
		}
		if b {
			out[h] = append(out[h], 2*e+1)
		}
	}
	var de int
	for {
		e := rng.IntN(g.Edges())
		if f, _ := g.EdgeOpen(e, routing.Auto); f && g.EdgeRoad(e, false).Class <= routing.ClassResidential {
			de = 2 * e
			break
		}
	}
	var pts []point
	var ways []int64
	next := 0.0
	for len(pts) < n {
		e, back := de/2, de%2 == 1
		lat, lon := g.EdgePoints(e, nil, nil)
		if back {
			slices.Reverse(lat)
			slices.Reverse(lon)
		}
		way := g.EdgeRoad(e, back).WayID
		for k := 0; k+1 < len(lat) && len(pts) < n; k++ {
			mx := 111_194.93 * math.Cos(lat[k]*math.Pi/180)
			dx, dy := (lon[k+1]-lon[k])*mx, (lat[k+1]-lat[k])*111_194.93
			l := math.Hypot(dx, dy)
			for ; next <= l && len(pts) < n; next += 15 {
				f := next / math.Max(l, 1e-9)
				nx, ny := 4*(rng.Float64()*2-1), 4*(rng.Float64()*2-1)
				p := point{"latitude": lat[k] + f*(lat[k+1]-lat[k]) + ny/111_194.93, "longitude": lon[k] + f*(lon[k+1]-lon[k]) + nx/mx,
					"timestamp": t0.Add(time.Duration(len(pts)) * time.Second).Format(time.RFC3339), "accuracy_m": 5}
				pts, ways = append(pts, p), append(ways, way)
			}
			next -= l
		}
		t, h := g.EdgeEnds(e)
		end := h
		if back {
			end = t
		}
		var on []int
		for _, o := range out[end] {
			if o/2 != e {
				on = append(on, o)
			}
		}
		if len(on) == 0 {
			on = out[end]
		}
		if len(on) == 0 {
			break
		}
		de = on[rng.IntN(len(on))]
	}
	return pts, ways
}

// TestMatchColumbus: drives of 300 fixes over the Columbus extract, each
// fix up to 4 m off its road, sent to /match: nearly every fix lies on
// the way it was driven on, and the matched route is about as long as
// the drive.
func TestMatchColumbus(t *testing.T) {
	g, m := columbusGraph(t)
	url := startServer(t, apirouting.New(g, m))
	rng := rand.New(rand.NewPCG(7, 11))
	right, all := 0, 0
	for range 5 {
		pts, ways := drive(g, rng, 300, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
		a := matchTrace(t, url, pts)
		for i, tp := range a.Data.Tracepoints {
			all++
			if tp.Matched && *tp.WayID == ways[i] {
				right++
			}
		}
		driven := 15 * float64(len(pts)-1)
		total := 0.0
		for _, mt := range a.Data.Matchings {
			total += mt.DistanceM
			seg := 0.0
			for _, s := range mt.Segments {
				seg += s.DistanceM
				if len(s.Geometry.Coordinates) < 2 || s.SpeedLimitKmh <= 0 || len(s.WayIDs) != 1 {
					t.Errorf("segment %+v", s)
				}
			}
			if math.Abs(seg-mt.DistanceM) > 1 {
				t.Errorf("segments add up to %v m, the matching to %v", seg, mt.DistanceM)
			}
		}
		if total < 0.85*driven || total > 1.15*driven {
			t.Errorf("matched %v m of a %v m drive (%d matchings)", total, driven, len(a.Data.Matchings))
		}
	}
	if share := float64(right) / float64(all); share < 0.9 {
		t.Errorf("%.1f%% of the fixes on the way driven, want at least 90%%", 100*share)
	}
}

// BenchmarkMatchHTTP1000 posts a 1,000-fix trace on the Columbus extract
// to /match over HTTP, one request at a time, and reports the latency's
// median and 99th percentile.
func BenchmarkMatchHTTP1000(b *testing.B) {
	g, m := columbusGraph(b)
	url := startServer(b, apirouting.New(g, m))
	pts, _ := drive(g, rand.New(rand.NewPCG(3, 5)), 1000, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	body := point{"costing": "auto", "points": pts}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if status, out := post(b, url, body); status != 200 {
			b.Fatalf("%d %s", status, out)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
}
