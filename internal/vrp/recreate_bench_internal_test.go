package vrp

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/cputime"
)

// BenchmarkRuinRecreate times the annealing's iteration, the search's
// most frequent work: a candidate forked from a plan, strings of stops
// removed around a random stop and every one inserted again at its
// cheapest position, the candidate priced and dropped. The plan is one a
// short search found, on MeasureRate's instance and, when the data is
// beside the repository, on Solomon's R101, RC105 and R201. It reports
// the processor time of a work unit (ns/unit) and the units an iteration
// counts (the processor time of the benchmark's thread where it can be
// read, as MeasureRate), so that a change that makes a unit cheaper without changing
// what it decides shows as fewer ns/unit and the same units/op.
//
//	go test -run '^$' -bench RuinRecreate -count 5 ./internal/vrp/
func BenchmarkRuinRecreate(b *testing.B) {
	cases := []struct {
		name string
		in   func() (*Instance, error)
	}{
		{"rate", func() (*Instance, error) { return rateInstance(), nil }},
	}
	for _, name := range []string{"R101", "RC105", "R201"} {
		path := filepath.Join("..", "..", "..", "shared", "data", "vrp", "solomon", name+".txt")
		cases = append(cases, struct {
			name string
			in   func() (*Instance, error)
		}{name, func() (*Instance, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return ParseSolomon(f)
		}})
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			in, err := tc.in()
			if err != nil {
				b.Skip(err)
			}
			p := in.Problem()
			p.MinimizeVehicles = true
			t := newTables(p)
			w := newWorker(t, 0, 1, time.Now().Add(time.Hour))
			_, best := w.search(budget{work: 4_000_000, iters: math.MaxInt32, until: time.Now().Add(time.Hour)})
			from := w.work
			// The thread's processor time, where it can be read: on a
			// busy machine the elapsed time counts other work too.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c0, cpu := cputime.Thread()
			b.ResetTimer()
			for b.Loop() {
				cand := w.fork(best)
				w.recreate(cand, w.ruin(cand), false)
				w.total(cand)
				w.drop(cand)
			}
			spent := b.Elapsed()
			if c1, _ := cputime.Thread(); cpu {
				spent = c1 - c0
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(w.work-from), "ns/unit")
			b.ReportMetric(float64(w.work-from)/float64(b.N), "units/op")
		})
	}
}
