package mapmatch

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestSimulationTable reports, on each shared extract, the share of
// fixes matched to the right OSM way for sampling every 1 to 30 s and
// Gaussian noise of 5 to 30 m on each axis (20 random drives of 5 km
// each); it asserts nothing beyond what TestSimulatedDrives does: it is
// the table in docs/routing.md, with -v.
func TestSimulationTable(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("a report: run it with -v, without -race")
	}
	dts, noises := []float64{1, 5, 15, 30}, []float64{5, 10, 20, 30}
	for _, name := range []string{"us-oh-columbus.osm.pbf", "us-ny-queens-village.osm.pbf", "us-or-portland-central-roads.osm.pbf"} {
		g, err := routing.Load(sharedData(t, filepath.Join("osm", name)), routing.Options{Costings: []routing.Costing{}})
		if err != nil {
			t.Fatal(err)
		}
		m := New(g, routing.Auto, Config{})
		var b strings.Builder
		fmt.Fprintf(&b, "%s: right way %% by sampling (rows) and noise (columns %v m)\n", name, noises)
		for _, dt := range dts {
			fmt.Fprintf(&b, "%4.0f s", dt)
			for _, sigma := range noises {
				rng := rand.New(rand.NewPCG(uint64(dt), uint64(sigma)))
				right, all := 0, 0
				for range 20 {
					pts, ways := drive(m.net, rng, 5000, dt, sigma)
					tr := m.Trace()
					var out []Match
					for _, p := range pts {
						out = append(out, tr.Add(p)...)
					}
					out = append(out, tr.Flush()...)
					for i, mt := range out {
						all++
						if mt.Matched && mt.WayID == ways[i] {
							right++
						}
					}
				}
				fmt.Fprintf(&b, " %5.1f", 100*float64(right)/float64(all))
			}
			b.WriteString("\n")
		}
		t.Log(b.String())
	}
}
