package mapmatch

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestSimulationTable reports, on each shared extract, the share of
// fixes matched to the right OSM way and the median error of the
// matched route's length, for sampling every 1 to 30 s and Gaussian
// noise of 5 to 30 m on each axis (20 random drives of 5 km each); it
// asserts nothing beyond what TestSimulatedDrives does: it is the table
// in docs/routing.md, with -v.
func TestSimulationTable(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("a report: run it with -v, without -race")
	}
	dts, noises := []float64{1, 5, 15, 30}, []float64{5, 10, 20, 30}
	for _, name := range extracts {
		m := New(extractGraph(t, name), routing.Auto, Config{})
		var b strings.Builder
		fmt.Fprintf(&b, "%s: right way %% / median length error %% by sampling (rows) and noise (columns %v m)\n", name, noises)
		for _, dt := range dts {
			fmt.Fprintf(&b, "| | %.0f s |", dt)
			for _, sigma := range noises {
				sc := simulate(m, rand.New(rand.NewPCG(uint64(dt), uint64(sigma))), 20, dt, sigma)
				fmt.Fprintf(&b, " %.1f / %.1f |", 100*sc.share(), 100*sc.medianLengthErr())
			}
			b.WriteString("\n")
		}
		t.Log(b.String())
	}
}
