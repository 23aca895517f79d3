package expr_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

// bruteForce matches env against every program.
func bruteForce(progs map[string]*expr.Program, env *event.Envelope) []string {
	var out []string
	for id, p := range progs {
		if p.Match(env) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func indexMatch(ix *expr.Index[string], env *event.Envelope) []string {
	out := ix.Match(env, nil)
	slices.Sort(out)
	return out
}

func TestIndexEqualsBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		g := &gen{r: rand.New(rand.NewPCG(seed, seed)), vehicles: 200}
		var ix expr.Index[string]
		progs := map[string]*expr.Program{}
		check := func(stage string) {
			t.Helper()
			for range 500 {
				env := g.envelope()
				want, got := bruteForce(progs, env), indexMatch(&ix, env)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d, %s: index %v, brute force %v", seed, stage, got, want)
				}
			}
		}
		for i := range 2000 {
			id := fmt.Sprintf("s%d", i)
			progs[id] = g.program()
			ix.Add(id, progs[id])
		}
		check("after adds")
		// Replace some, remove some.
		for i := range 500 {
			id := fmt.Sprintf("s%d", g.r.IntN(2000))
			if i%2 == 0 {
				progs[id] = g.program()
				ix.Add(id, progs[id])
				continue
			}
			_, had := progs[id]
			delete(progs, id)
			if ix.Remove(id) != had {
				t.Fatalf("Remove(%s) != %v", id, had)
			}
		}
		check("after changes")
		if ix.Len() != len(progs) {
			t.Fatalf("Len = %d, want %d", ix.Len(), len(progs))
		}
		for id := range progs {
			ix.Remove(id)
		}
		if got := ix.Match(g.envelope(), nil); len(got) != 0 {
			t.Fatalf("empty index matched %v", got)
		}
	}
}

func TestIndexKinds(t *testing.T) {
	var ix expr.Index[string]
	ix.Add("ev", mustCompile(t, expr.Spec{Kind: expr.KindEvent}))
	ix.Add("tel", mustCompile(t, expr.Spec{Kind: expr.KindTelemetry}))
	ix.Add("never", mustCompile(t, expr.Spec{Kind: expr.KindEvent, VehicleIDs: []string{"veh_1"},
		Conditions: []expr.Condition{cond("source.vehicle_id", "=", "veh_2")}}))
	if got := indexMatch(&ix, harshBraking()); !slices.Equal(got, []string{"ev"}) {
		t.Errorf("event matched %v", got)
	}
	if got := indexMatch(&ix, engine("veh_1", 1, 1)); !slices.Equal(got, []string{"tel"}) {
		t.Errorf("telemetry matched %v", got)
	}
	if got := ix.Match(nil, nil); got != nil {
		t.Errorf("nil envelope matched %v", got)
	}
	var empty expr.Index[int]
	if got := empty.Match(harshBraking(), nil); got != nil {
		t.Errorf("zero index matched %v", got)
	}
	if !ix.Remove("never") || ix.Remove("never") {
		t.Error("Remove of a never-matching program")
	}
	// A telemetry message without a vehicle id, and a program asking for
	// exactly that.
	ix.Add("novehicle", mustCompile(t, expr.Spec{Kind: expr.KindTelemetry,
		Conditions: []expr.Condition{cond("vehicle_id", "=", "")}}))
	if got := indexMatch(&ix, engine("", 1, 1)); !slices.Equal(got, []string{"novehicle", "tel"}) {
		t.Errorf("telemetry without a vehicle matched %v", got)
	}
}

func TestIndexMatchDoesNotAllocate(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(7, 7)), vehicles: 500}
	var ix expr.Index[int]
	for i := range 5000 {
		ix.Add(i, g.program())
	}
	envs := make([]*event.Envelope, 64)
	for i := range envs {
		envs[i] = g.envelope()
	}
	out := make([]int, 0, 5000)
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		out = ix.Match(envs[i%len(envs)], out[:0])
		i++
	}); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
}

// TestIndexConcurrent runs Match while programs come and go (run with
// -race). Programs that stay are always found.
func TestIndexConcurrent(t *testing.T) {
	var ix expr.Index[string]
	stay := mustCompile(t, expr.Spec{Kind: expr.KindEvent, VehicleIDs: []string{"veh_1"}})
	ix.Add("stay", stay)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := harshBraking()
			var out []string
			for {
				select {
				case <-stop:
					return
				default:
				}
				out = ix.Match(env, out[:0])
				if !slices.Contains(out, "stay") {
					t.Errorf("reader %d: stay missing from %v", w, out)
					return
				}
			}
		}()
	}
	g := &gen{r: rand.New(rand.NewPCG(3, 3)), vehicles: 5}
	for i := range 3000 {
		id := fmt.Sprintf("s%d", i%300)
		if i%3 == 2 {
			ix.Remove(id)
		} else {
			ix.Add(id, g.program())
		}
	}
	close(stop)
	wg.Wait()
}
