package ratelimit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/testredis"
)

// benchLimit admits one request per 60µs per key after a burst of 100, so
// tight loops measure the deny path as well as the allow path.
var benchLimit = ratelimit.Limit{Rate: 1_000_000, Burst: 100}

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("fhk_live_%016x", i)
	}
	return keys
}

func BenchmarkMemoryAllow(b *testing.B) {
	ctx := context.Background()

	b.Run("one_key", func(b *testing.B) {
		m := ratelimit.NewMemory(nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Allow(ctx, "fhk_live_0", benchLimit); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("one_key_parallel", func(b *testing.B) {
		m := ratelimit.NewMemory(nil)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := m.Allow(ctx, "fhk_live_0", benchLimit); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})

	// Buckets that are never full again between visits: the steady state,
	// where every call finds its bucket.
	steady := ratelimit.Limit{Rate: 1000, Burst: 1_000_000} // 60ms per token
	b.Run("many_keys_parallel", func(b *testing.B) {
		benchMemoryManyKeys(b, steady)
	})
	// Buckets full again before their next visit (65536 keys, 6ms refill),
	// so the lazy sweep evicts them and Allow recreates them: the cost of
	// bounded memory under churn.
	b.Run("many_keys_parallel_churn", func(b *testing.B) {
		benchMemoryManyKeys(b, benchLimit)
	})
}

func benchMemoryManyKeys(b *testing.B, lim ratelimit.Limit) {
	ctx := context.Background()
	m := ratelimit.NewMemory(nil)
	keys := benchKeys(1 << 16)
	for _, k := range keys {
		if _, err := m.Allow(ctx, k, lim); err != nil {
			b.Fatal(err)
		}
	}
	var worker atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := worker.Add(1) * 7919
		for pb.Next() {
			i++
			if _, err := m.Allow(ctx, keys[i&(1<<16-1)], lim); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkRedisAllow(b *testing.B) {
	c := testredis.Connect(b, testredis.Options(b))
	rl := ratelimit.NewRedis(c, testredis.Prefix(b, c, "rl"))
	ctx := context.Background()

	b.Run("one_key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rl.Allow(ctx, "fhk_live_0", benchLimit); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("many_keys_parallel", func(b *testing.B) {
		keys := benchKeys(1 << 10)
		var worker atomic.Uint64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := worker.Add(1) * 7919
			for pb.Next() {
				i++
				if _, err := rl.Allow(ctx, keys[i&(1<<10-1)], benchLimit); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
