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
