package order_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/order"
)

// BenchmarkSequencerManySources: in-order pushes from 1,000 sources in
// turn, as the pipeline pushes a tenant's events, each into a slice
// reused (AppendPush).
func BenchmarkSequencerManySources(b *testing.B) {
	s, _ := order.New[*int](order.Config{})
	now := time.Now()
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("veh-%04d", i)
	}
	seqs := make([]int64, len(names))
	var out []order.Item[*int]
	v := new(int)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % len(names)
		seqs[j]++
		if out = s.AppendPush(out[:0], names[j], seqs[j], v, now); len(out) != 1 {
			b.Fatalf("push %d of %s released %d items", seqs[j], names[j], len(out))
		}
	}
}

// BenchmarkSequencerPushAll: runs of 512 in-order pushes (AppendPushAll)
// from 100,000 sources (the default MaxSources), each run's sources
// spread over them, so that their records are rarely in a cache; ns/op
// is per run.
func BenchmarkSequencerPushAll(b *testing.B) {
	s, _ := order.New[*int](order.Config{})
	now := time.Now()
	names := make([]string, order.DefaultMaxSources)
	for i := range names {
		names[i] = fmt.Sprintf("veh-%06d", i)
	}
	seqs := make([]int64, len(names))
	v := new(int)
	items := make([]order.Pushed[*int], 512)
	var out []order.Item[*int]
	var ends []int
	j := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for k := range items {
			seqs[j]++
			items[k] = order.Pushed[*int]{Source: names[j], Seq: seqs[j], Value: v}
			j = (j + 7919) % len(names) // a prime: every source in turn, far apart
		}
		b.StartTimer()
		if out, ends = s.AppendPushAll(out[:0], ends[:0], items, now); len(out) != len(items) {
			b.Fatalf("%d pushes released %d items", len(items), len(out))
		}
	}
}
