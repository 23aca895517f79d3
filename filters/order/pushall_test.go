package order_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/order"
)

// TestAppendPushAll: pushing a run of items at once releases what
// pushing them one after the other would, item by item, also when the
// run brings new sources beyond MaxSources (a source forgotten by one
// push and pushed to again later in the run), copies, late items and
// gaps given up on for MaxBuffered.
func TestAppendPushAll(t *testing.T) {
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			cfg := order.Config{MaxBuffered: 1 + rng.IntN(6), MaxSources: 1 + rng.IntN(6), MaxWait: time.Second}
			one, _ := order.New[int](cfg)
			all, _ := order.New[int](cfg)
			now := time.Unix(1_700_000_000, 0)
			next := map[string]int64{}
			var dst []order.Item[int]
			var ends []int
			v := 0
			for range 40 {
				items := make([]order.Pushed[int], rng.IntN(12))
				for i := range items {
					src := fmt.Sprintf("s%d", rng.IntN(8))
					next[src]++
					seq := next[src] + int64(rng.IntN(4)) - 1 // ahead, at, behind or a copy
					v++
					items[i] = order.Pushed[int]{Source: src, Seq: max(seq, 1), Value: v}
				}
				dst, ends = dst[:0], ends[:0]
				dst = append(dst, order.Item[int]{Value: -1}) // something before: kept
				dst, ends = all.AppendPushAll(dst, ends, items, now)
				if dst[0].Value != -1 || len(ends) != len(items) {
					t.Fatalf("AppendPushAll changed dst's items before its own or gave %d ends for %d items", len(ends), len(items))
				}
				from := 1
				for i, it := range items {
					want := one.Push(it.Source, it.Seq, it.Value, now)
					got := dst[from:ends[i]]
					if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
						t.Fatalf("item %d (%s:%d) released %v, one at a time %v", i, it.Source, it.Seq, got, want)
					}
					from = ends[i]
				}
				if len(dst) != from {
					t.Fatalf("%d items released after the last end", len(dst)-from)
				}
				now = now.Add(time.Duration(rng.IntN(800)) * time.Millisecond)
				if got, want := all.Expire(now), one.Expire(now); !slices.Equal(got, want) {
					t.Fatalf("Expire released %v, one at a time %v", got, want)
				}
				if all.Buffered() != one.Buffered() || all.Sources() != one.Sources() {
					t.Fatalf("buffered %d, sources %d; one at a time %d, %d", all.Buffered(), all.Sources(), one.Buffered(), one.Sources())
				}
			}
		})
	}
}
