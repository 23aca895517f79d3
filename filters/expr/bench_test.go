package expr_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

const benchPrograms = 10_000

// benchIndex returns an index of 10,000 random programs over 2,000
// vehicles (80% per-vehicle, 19.9% category- or data-type-only, 0.1%
// wildcards; see gen.spec) and 1,024 messages.
func benchIndex(b *testing.B) (*expr.Index[int], []*expr.Program, []*event.Envelope) {
	g := &gen{r: rand.New(rand.NewPCG(1, 2)), vehicles: 2000}
	ix := new(expr.Index[int])
	progs := make([]*expr.Program, benchPrograms)
	for i := range progs {
		progs[i] = g.program()
		ix.Add(i, progs[i])
	}
	envs := make([]*event.Envelope, 1024)
	for i := range envs {
		envs[i] = g.envelope()
	}
	return ix, progs, envs
}

func BenchmarkIndexMatch(b *testing.B) {
	ix, _, envs := benchIndex(b)
	out := make([]int, 0, benchPrograms)
	matched := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		out = ix.Match(envs[i%len(envs)], out[:0])
		matched += len(out)
	}
	b.ReportMetric(float64(matched)/float64(b.N), "matches/op")
}

func BenchmarkIndexMatchParallel(b *testing.B) {
	ix, _, envs := benchIndex(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		out := make([]int, 0, benchPrograms)
		for i := 0; pb.Next(); i++ {
			out = ix.Match(envs[i%len(envs)], out[:0])
		}
	})
}

// BenchmarkScanMatch is what the index saves: every program's Match.
func BenchmarkScanMatch(b *testing.B) {
	_, progs, envs := benchIndex(b)
	out := make([]int, 0, benchPrograms)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		env := envs[i%len(envs)]
		out = out[:0]
		for j, p := range progs {
			if p.Match(env) {
				out = append(out, j)
			}
		}
	}
}

// BenchmarkIndexAdd adds and removes one program in an index of 10,000.
func BenchmarkIndexAdd(b *testing.B) {
	ix, _, _ := benchIndex(b)
	g := &gen{r: rand.New(rand.NewPCG(9, 9)), vehicles: 2000}
	progs := make([]*expr.Program, 256)
	for i := range progs {
		progs[i] = g.program()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ix.Add(-1, progs[i%len(progs)])
		ix.Remove(-1)
	}
}

func BenchmarkProgramMatch(b *testing.B) {
	p, err := expr.Compile(expr.Spec{
		Kind:       expr.KindEvent,
		Categories: []string{event.CategorySafety, event.CategoryEmergency},
		Severities: []string{"high", "critical"},
		VehicleIDs: []string{"veh_1", "veh_2", "veh_3"},
		Timezone:   "America/New_York", BusinessHoursOnly: true,
		Conditions: []expr.Condition{
			cond("event_data.deceleration_g", ">", 0.5),
			cond("event_data.weather_condition", "in", []any{"rain", "snow"}),
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	env := harshBraking()
	env.Event.Timestamp = env.Event.Timestamp.Add(5 * 60 * 60 * 1e9) // 10:30 in New York
	if !p.Match(env) {
		b.Fatal("no match")
	}
	b.ReportAllocs()
	for b.Loop() {
		p.Match(env)
	}
}

func BenchmarkCompile(b *testing.B) {
	s := expr.Spec{Kind: expr.KindEvent, VehicleIDs: []string{"veh_1"}, Categories: []string{event.CategorySafety},
		Conditions: []expr.Condition{cond("event_data.deceleration_g", ">", 0.5)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := expr.Compile(s); err != nil {
			b.Fatal(err)
		}
	}
}
