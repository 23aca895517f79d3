package mapmatch

import (
	"flag"
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
				sc := simulate(m, nil, rand.New(rand.NewPCG(uint64(dt), uint64(sigma))), 20, dt, sigma)
				fmt.Fprintf(&b, " %.1f / %.1f |", 100*sc.share(), 100*sc.medianLengthErr())
			}
			b.WriteString("\n")
		}
		t.Log(b.String())
	}
}

// TestSimulationBound reports, on the drives of TestSimulatedDrives's
// two settings (seed 7, 29), how many fixes a matcher that knew the
// drive's path could put on the right way: each fix placed at its
// nearest point of the true path (within 150 m of where it was taken
// along the drive), alone, and those places smoothed as the matcher
// smooths them (the 6 fixes before and 5 after). A measurement, not a
// test: the bound quoted in docs/routing.md, printed with -v.
func BenchmarkSimulationBound(b *testing.B) {
	for b.Loop() {
		simulationBound(b)
	}
}

func simulationBound(t testing.TB) {
	for _, name := range extracts {
		m := New(extractGraph(t, name), routing.Auto, Config{})
		for _, set := range []struct{ dt, sigma float64 }{{5, 10}, {30, 20}} {
			rng := rand.New(rand.NewPCG(7, 29))
			fixes, alone, smoothed := 0, 0, 0
			for range 30 {
				tp := drive(m.net, rng, 5000, set.dt, set.sigma)
				ts, z, r := make([]float64, len(tp.pts)), make([]float64, len(tp.pts)), make([]float64, len(tp.pts))
				for i, p := range tp.pts {
					x, y := m.net.plane(p.Lat, p.Lon)
					ts[i], z[i], r[i] = p.Time, tp.nearest(m.net, i, x, y), set.sigma*set.sigma
					fixes++
					if tp.wayAt(m.net, z[i]) == tp.ways[i] {
						alone++
					}
				}
				u, v := make([]float64, len(z)), make([]float64, len(z))
				for i := range z {
					lo, hi := max(0, i-6), min(len(z), i+6)
					rts(ts[lo:hi], z[lo:hi], r[lo:hi], smoothAccel, u[:hi-lo], v[:hi-lo], nil)
					if tp.wayAt(m.net, u[i-lo]) == tp.ways[i] {
						smoothed++
					}
				}
			}
			t.Logf("%s, %.0f s, %.0f m: %d fixes; on the true path %.1f%% on the right way alone, %.1f%% smoothed",
				name, set.dt, set.sigma, fixes, 100*float64(alone)/float64(fixes), 100*float64(smoothed)/float64(fixes))
		}
	}
}

// BenchmarkSimulationSeeds reports TestSimulatedDrives's figures over
// seeds 1, 2, 3 and 7 (30 drives each): the share of fixes on the right
// way and the median length error at its two settings and at a fix a
// second with 5 m of noise, their mean over the seeds, and how many
// fixes had come after each fix when it was decided. A measurement, not
// a test: the range quoted in docs/routing.md, printed with -v.
func BenchmarkSimulationSeeds(bb *testing.B) {
	for bb.Loop() {
		simulationSeeds(bb)
	}
}

func simulationSeeds(t testing.TB) {
	var b strings.Builder
	for _, name := range extracts {
		seedsReport(&b, New(extractGraph(t, name), routing.Auto, Config{Beta: *simBeta}), extractNames(t, name), name)
	}
	t.Log("\n" + b.String())
}

// simSpeed: BenchmarkSimulationSeeds's fixes carry their true speed with
// this much Gaussian noise (m/s); below 0 they carry none.
var simSpeed = flag.Float64("sim.speed", -1, "BenchmarkSimulationSeeds: fixes carry their speed with this much Gaussian noise, m/s (below 0: no speed)")

// simCourse: the same for the fixes' course over the ground, degrees
// (read only with a speed).
var simCourse = flag.Float64("sim.course", -1, "BenchmarkSimulationSeeds: fixes carry their course with this much Gaussian noise, degrees (below 0: no course; read only with -sim.speed)")

var simBeta = flag.Float64("sim.beta", 0, "BenchmarkSimulationSeeds: Config.Beta (0: the default)")

// seedsSettings are BenchmarkSimulationSeeds's fix intervals and noises.
var seedsSettings = []struct{ dt, sigma float64 }{{1, 5}, {5, 10}, {30, 20}}

// seedsReport writes m's figures on extract name over the seeds.
func seedsReport(b *strings.Builder, m *Matcher, names map[int64]routing.WayName, name string) {
	for _, set := range seedsSettings {
		fmt.Fprintf(b, "%s, %.0f s, %.0f m: right way %% / median length error %% by seed:", name, set.dt, set.sigma)
		sum, same, street := 0.0, 0.0, 0.0
		var all simScore
		for _, seed := range []uint64{1, 2, 3, 7} {
			sc := simulateSensors(m, names, rand.New(rand.NewPCG(seed, 29)), 30, set.dt, set.sigma, *simSpeed, *simCourse)
			sum += sc.share()
			street += float64(sc.street) / float64(sc.fixes)
			all.streetOff = append(all.streetOff, sc.streetOff...)
			same += float64(sc.sameLimit) / float64(sc.fixes)
			fmt.Fprintf(b, " %.1f / %.2f (street %.1f);", 100*sc.share(), 100*sc.medianLengthErr(), 100*sc.streetShare())
			for k, n := range sc.decided {
				for len(all.decided) <= k {
					all.decided = append(all.decided, 0)
				}
				all.decided[k] += n
			}
			all.flushed += sc.flushed
			all.broken += sc.broken
		}
		fmt.Fprintf(b, " mean %.2f; on a road of the true one's class and limit %.2f; on the right street %.2f (another way of it: %d fixes, %s)\n",
			100*sum/4, 100*same/4, 100*street/4, len(all.streetOff), offQuantiles(all.streetOff))
		fmt.Fprintf(b, "  decided after fixes: p50 %d, p90 %d, p99 %d, max %d; by lag 0..5+:", all.lagQuantile(0.5), all.lagQuantile(0.9), all.lagQuantile(0.99), len(all.decided)-1)
		for _, sh := range all.lagShares(5) {
			fmt.Fprintf(b, " %.1f", 100*sh)
		}
		fmt.Fprintf(b, " %%; %d at a trace's end; %d on a path that left the roads decided before\n", all.flushed, all.broken)
	}
}
