package routing

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
)

// TestRealExtracts: on each extract of ../shared/data/osm, for every
// costing, every pair of snapped random locations has a route, no route
// is shorter than the straight line, the hierarchy answers what a plain
// Dijkstra over the turn graph answers, and the graph saved under the
// cache directory loads back to the same answers.
func TestRealExtracts(t *testing.T) {
	if raceOn {
		// see race_on_test.go; the costings' concurrent build is checked
		// under the detector on the fixtures (TestSavedGraphIsLoaded)
		t.Skip("runs in make test's pass without the race detector, on all four extracts")
	}
	names := []string{"us-oh-columbus.osm.pbf", "us-ny-queens-village.osm.pbf", "us-or-portland-central-roads.osm.pbf", "us-ca-west-oakland.osm.bz2"}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			path := SharedData(t, filepath.Join("osm", name))
			dir := t.TempDir()
			start := time.Now()
			all := []Costing{Auto, Truck, Bicycle, Pedestrian}
			g, err := Load(path, Options{CacheDir: dir, Costings: all})
			if err != nil {
				t.Fatal(err)
			}
			built := time.Since(start)
			start = time.Now()
			again, err := Load(path, Options{CacheDir: dir, Costings: all})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d edges, %d junctions; built in %v, loaded from the cache in %v", g.Edges(), g.Nodes(), built, time.Since(start))
			files, _ := filepath.Glob(filepath.Join(dir, "roads-*"))
			if len(files) != 5 {
				t.Fatalf("cache files %v, want the network and four costings", files)
			}
			pts := randomPoints(g, 40, rand.New(rand.NewPCG(3, uint64(len(name)))))
			for c := Costing(0); c < numCostings; c++ {
				res := g.Route(Request{Sources: pts, Targets: pts, Costing: c})
				if !reflect.DeepEqual(again.Route(Request{Sources: pts, Targets: pts, Costing: c}), res) {
					t.Errorf("%s: the saved graph answers differently", c)
				}
				snapped := 0
				for i := range pts {
					if res.Sources[i].OK {
						snapped++
					}
					for j := range pts {
						k := res.Costs[i][j]
						if res.Sources[i].OK && res.Targets[j].OK && !k.OK {
							t.Errorf("%s %d→%d: both snapped, no route", c, i, j)
						}
						line := geo.Distance(geo.Point{Lat: pts[i][0], Lon: pts[i][1]}, geo.Point{Lat: pts[j][0], Lon: pts[j][1]})
						if k.OK && k.Meters < line-res.Sources[i].Meters-res.Targets[j].Meters-1 {
							t.Errorf("%s %d→%d: %.0f m, shorter than the straight line %.0f m", c, i, j, k.Meters, line)
						}
					}
				}
				if snapped < len(pts)*3/4 {
					t.Errorf("%s: only %d of %d locations snapped", c, snapped, len(pts))
				}
				cg, _ := g.costing(c)
				var srcs, dsts [][]phantom
				for _, p := range pts[:8] {
					ss, _ := g.snap(p[0], p[1], MaxSnapM, func(e int32) bool { return (cg.keep[2*e] || cg.keep[2*e+1]) && g.startable(e, c) })
					var sp []phantom
					for _, s := range ss {
						sp = append(sp, cg.phantoms(g, s, true)...)
					}
					srcs = append(srcs, sp)
				}
				for _, p := range pts {
					ss, _ := g.snap(p[0], p[1], MaxSnapM, func(e int32) bool { return (cg.keep[2*e] || cg.keep[2*e+1]) && g.startable(e, c) })
					var dp []phantom
					for _, s := range ss {
						dp = append(dp, cg.phantoms(g, s, false)...)
					}
					dsts = append(dsts, dp)
				}
				a, _ := g.network(c, g.wayFilter(c, defaultTruck, 0))
				ref := plainTable(a, srcs, dsts)
				for i := range srcs {
					for j := range dsts {
						if a, b := res.Costs[i][j], ref[i][j]; a.OK != b.OK || a.weight != b.weight {
							t.Errorf("%s %d→%d: hierarchy %+v, Dijkstra %+v", c, i, j, a, b)
						}
					}
				}
			}
		})
	}
}

// randomPoints are n locations spread over the middle of the graph's
// bounding box.
func randomPoints(g *Graph, n int, rng *rand.Rand) [][2]float64 {
	minLat, minLon, maxLat, maxLon := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := range g.lat {
		minLat, maxLat = min(minLat, g.lat[i]), max(maxLat, g.lat[i])
		minLon, maxLon = min(minLon, g.lon[i]), max(maxLon, g.lon[i])
	}
	dLat, dLon := maxLat-minLat, maxLon-minLon
	pts := make([][2]float64, n)
	for i := range pts {
		pts[i] = [2]float64{minLat + dLat*(0.15+0.7*rng.Float64()), minLon + dLon*(0.15+0.7*rng.Float64())}
	}
	return pts
}

// TestCacheDamage: a saved file that was cut short, flipped or written
// by other rules is never read; Load builds that part again and saves it
// afresh. A costing nobody asked for is neither built nor saved.
func TestCacheDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join("testdata", "tiny.osm.pbf")
	g, err := Load(path, Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "roads-*-"+profileVersion+".*"))
	if len(files) != 2 {
		t.Fatalf("cache files %v, want the network and auto", files)
	}
	pts := [][2]float64{{40, -83}, {40.002, -83}}
	want := g.Matrix(pts, pts, Auto)
	for _, f := range files {
		good, _ := os.ReadFile(f)
		for name, bad := range map[string][]byte{
			"short":   good[:len(good)/2],
			"flipped": append(append([]byte{}, good[:len(good)-3]...), good[len(good)-3]^0xff, good[len(good)-2], good[len(good)-1]),
			"magic":   append([]byte("XXXXXXXX"), good[8:]...),
			"empty":   {},
		} {
			if err := os.WriteFile(f, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			g, err := Load(path, Options{CacheDir: dir})
			if err != nil {
				t.Fatalf("%s %s: %v", filepath.Base(f), name, err)
			}
			if got := g.Matrix(pts, pts, Auto); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: %v, want %v", filepath.Base(f), name, got, want)
			}
			if b, _ := os.ReadFile(f); len(b) != len(good) {
				t.Errorf("%s %s: not written again", filepath.Base(f), name)
			}
		}
	}
	// the pedestrian costing is built on first use, and saved then
	if got := g.Matrix(pts, pts, Pedestrian); !got[0][1].OK {
		t.Errorf("pedestrian on first use: %v", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "roads-*-"+profileVersion+".pedestrian")); len(files) != 1 {
		t.Errorf("pedestrian not saved: %v", files)
	}
	if _, err := decodeCosting(mustRead(t, filepath.Join(filepath.Dir(files[0]), filepath.Base(files[0]))), g.Edges()+1, Auto); err == nil {
		t.Errorf("a costing saved for another network was read")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSavedGraphIsLoaded: a second open of the same extract reads the
// saved network and hierarchies instead of building them, and answers
// the same; a costing first asked for later is built once, then read;
// a changed extract or a changed version of the road rules is built
// afresh, beside the files of the old one.
func TestSavedGraphIsLoaded(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "city.osm.pbf")
	if err := os.WriteFile(src, tinyPBF(), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(opts Options) *Graph {
		t.Helper()
		opts.CacheDir = dir
		g, err := Load(src, opts)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	loaded := func(what string, g *Graph, c Costing, wantNet, wantCost bool) {
		t.Helper()
		if net, cost := g.Loaded(c); net != wantNet || cost != wantCost {
			t.Errorf("%s: network loaded %v, %s loaded %v; want %v, %v", what, net, c, cost, wantNet, wantCost)
		}
	}
	files := func(glob string) int {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dir, glob))
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	pts := [][2]float64{{40, -83}, {40.001, -83}, {40.002, -83}}
	first := open(Options{})
	loaded("first open", first, Auto, false, false)
	if n := files("roads-*-" + profileVersion + ".*"); n != 2 {
		t.Fatalf("%d files saved, want the network and auto", n)
	}
	want := first.Matrix(pts, pts, Auto)
	again := open(Options{})
	loaded("second open", again, Auto, true, true)
	loaded("second open", again, Pedestrian, true, false) // not asked for yet
	if got := again.Matrix(pts, pts, Auto); !reflect.DeepEqual(got, want) {
		t.Errorf("the saved graph answers %v, the built one %v", got, want)
	}
	walk := again.Matrix(pts, pts, Pedestrian) // built on first use, and saved
	loaded("pedestrian on first use", again, Pedestrian, true, false)
	third := open(Options{Costings: []Costing{Auto, Pedestrian}})
	loaded("third open", third, Auto, true, true)
	loaded("third open", third, Pedestrian, true, true)
	if got := third.Matrix(pts, pts, Pedestrian); !reflect.DeepEqual(got, walk) {
		t.Errorf("the saved pedestrian graph answers %v, the built one %v", got, walk)
	}

	// the same file name with other content: way 10 (1–2) posted 10 km/h
	ways := slices.Clone(tinyWays)
	ways[0].tags = append(slices.Clone(ways[0].tags), "maxspeed", "10")
	var f []byte
	f = appendFileBlock(f, "OSMHeader", headerBlock(), false)
	f = appendFileBlock(f, "OSMData", dataBlock(100, 0, 0, tinyNodes[:3], tinyNodes[3:5], nil), false)
	f = appendFileBlock(f, "OSMData", dataBlock(1000, 40e9, -83e9, nil, tinyNodes[5:], ways), true)
	if err := os.WriteFile(src, f, 0o644); err != nil {
		t.Fatal(err)
	}
	changed := open(Options{})
	loaded("changed extract", changed, Auto, false, false)
	if got := changed.Matrix(pts, pts, Auto); got[0][1].Seconds <= want[0][1].Seconds {
		t.Errorf("changed extract: 1→2 takes %.1f s, as before (%.1f s): the old graph was read", got[0][1].Seconds, want[0][1].Seconds)
	}
	if n := files("roads-*-" + profileVersion + ".roads"); n != 2 {
		t.Errorf("%d saved networks, want the old extract's and the new one's", n)
	}
	loaded("changed extract, second open", open(Options{}), Auto, true, true)

	// other road rules: built again, saved under their own name
	other := open(Options{version: "p-other"})
	loaded("other rules", other, Auto, false, false)
	if n := files("roads-*-p-other.*"); n != 2 {
		t.Errorf("%d files saved for the other rules, want the network and auto", n)
	}
	loaded("other rules, second open", open(Options{version: "p-other"}), Auto, true, true)
	loaded("the first rules still", open(Options{}), Auto, true, true)
	if _, c := first.Loaded(Costing(9)); c {
		t.Errorf("an unknown costing reports loaded")
	}
}
