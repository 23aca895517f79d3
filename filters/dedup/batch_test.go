package dedup_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/internal/testredis"
)

// oneByOne is a window without ClaimAll: dedup.ClaimAll claims one id
// after the other.
type oneByOne struct{ dedup.Window }

// testClaimAll: ClaimAll answers what Claim would one id after the
// other: an id recorded is Duplicate, one claimed InFlight (also when it
// is listed twice), a new one Unseen and claimed; an empty id claims
// nothing. ForgetAll forgets records and claims.
func testClaimAll(t *testing.T, w dedup.Window) {
	ctx := t.Context()
	if err := w.Done(ctx, "ca_done"); err != nil {
		t.Fatal(err)
	}
	if st, err := w.Claim(ctx, "ca_claimed"); err != nil || st != dedup.Unseen {
		t.Fatalf("Claim(ca_claimed) = %v, %v", st, err)
	}
	ids := []string{"ca_new", "ca_done", "ca_claimed", "ca_twice", "ca_twice"}
	states := make([]dedup.State, len(ids))
	if err := dedup.ClaimAll(ctx, w, ids, states); err != nil {
		t.Fatal(err)
	}
	want := []dedup.State{dedup.Unseen, dedup.Duplicate, dedup.InFlight, dedup.Unseen, dedup.InFlight}
	if !slices.Equal(states, want) {
		t.Fatalf("ClaimAll(%q) = %v, want %v", ids, states, want)
	}
	for _, id := range []string{"ca_new", "ca_twice"} {
		if st, err := w.Claim(ctx, id); err != nil || st != dedup.InFlight {
			t.Errorf("Claim(%s) after ClaimAll = %v, %v; want InFlight", id, st, err)
		}
	}
	if err := dedup.ForgetAll(ctx, w, "ca_new", "ca_done"); err != nil {
		t.Fatal(err)
	}
	if err := w.Done(ctx, "ca_twice"); err != nil {
		t.Fatal(err)
	}
	states = states[:4]
	if err := dedup.ClaimAll(ctx, w, []string{"ca_new", "ca_done", "ca_twice", "ca_claimed"}, states); err != nil {
		t.Fatal(err)
	}
	if want := []dedup.State{dedup.Unseen, dedup.Unseen, dedup.Duplicate, dedup.InFlight}; !slices.Equal(states, want) {
		t.Errorf("ClaimAll after ForgetAll and Done = %v, want %v", states, want)
	}
	if err := dedup.ForgetAll(ctx, w, "ca_claimed", ""); !errors.Is(err, dedup.ErrEmptyID) {
		t.Errorf("ForgetAll with an empty id = %v, want ErrEmptyID", err)
	}
	if err := dedup.ForgetAll(ctx, w); err != nil {
		t.Errorf("ForgetAll of no id: %v", err)
	}

	if err := dedup.ClaimAll(ctx, w, []string{"ca_empty", ""}, make([]dedup.State, 2)); !errors.Is(err, dedup.ErrEmptyID) {
		t.Errorf("ClaimAll with an empty id = %v, want ErrEmptyID", err)
	}
	if st, err := w.Claim(ctx, "ca_empty"); err != nil || st != dedup.Unseen {
		t.Errorf("ClaimAll with an empty id claimed another: Claim = %v, %v", st, err)
	}
	if err := dedup.ClaimAll(ctx, w, nil, nil); err != nil {
		t.Errorf("ClaimAll of no id: %v", err)
	}
}

func TestClaimAllInMemory(t *testing.T) {
	for _, w := range inMemory {
		t.Run(w.name, func(t *testing.T) { testClaimAll(t, w.new(100, time.Minute)) })
		t.Run(w.name+"/OneByOne", func(t *testing.T) { testClaimAll(t, oneByOne{w.new(100, time.Minute)}) })
		t.Run(w.name+"/Failover", func(t *testing.T) { testClaimAll(t, dedup.NewFailover(downWindow{}, w.new(100, time.Minute))) })
	}
}

func TestClaimAllRedis(t *testing.T) {
	c := testredis.Client(t)
	prefix := testredis.Prefix(t, c, "dedup")
	t.Run("Redis", func(t *testing.T) { testClaimAll(t, dedup.NewRedis(c, prefix, time.Minute)) })
	t.Run("Failover", func(t *testing.T) {
		testClaimAll(t, dedup.NewFailover(dedup.NewRedis(c, prefix+"f:", time.Minute), dedup.NewCompact(100, time.Minute)))
	})
	// a Redis that has not loaded the script yet: ClaimAll sends it
	if err := c.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	w := dedup.NewRedis(c, prefix+"flushed:", time.Minute)
	states := make([]dedup.State, 2)
	if err := w.ClaimAll(t.Context(), []string{"a", "a"}, states); err != nil {
		t.Fatalf("ClaimAll without the script loaded: %v", err)
	}
	if want := []dedup.State{dedup.Unseen, dedup.InFlight}; !slices.Equal(states, want) {
		t.Errorf("ClaimAll = %v, want %v", states, want)
	}
}

func TestClaimAllRedisError(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	w := dedup.NewRedis(c, "", 0)
	if err := w.ClaimAll(t.Context(), []string{"x"}, make([]dedup.State, 1)); err == nil {
		t.Error("ClaimAll without a Redis returned no error")
	}
	if err := w.ForgetAll(t.Context(), "x"); err == nil {
		t.Error("ForgetAll without a Redis returned no error")
	}
}

// BenchmarkCompactClaimAllFull10M: as BenchmarkCompactClaimDoneFull10M
// in batches of 512 new ids, as the pipeline claims and records a bus
// batch's events: ClaimAll, then Done of the batch. ns/op is per id.
func BenchmarkCompactClaimAllFull10M(b *testing.B) {
	const size, batch = 10_000_000, 512
	w := dedup.NewCompact(size, time.Hour)
	ctx := context.Background()
	key := func(i int) string { return "org_1\x00live\x00evt_" + strconv.Itoa(i) }
	ids := make([]string, 0, batch)
	for i := range size {
		if ids = append(ids, key(i)); len(ids) == batch || i == size-1 {
			if err := w.Done(ctx, ids...); err != nil {
				b.Fatal(err)
			}
			ids = ids[:0]
		}
	}
	states := make([]dedup.State, batch)
	next := size
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		ids = ids[:0]
		for range batch {
			ids = append(ids, key(next))
			next++
		}
		b.StartTimer()
		if err := w.ClaimAll(ctx, ids, states); err != nil {
			b.Fatal(err)
		}
		if err := w.Done(ctx, ids...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/id")
}

// BenchmarkCompactRecordAllFull10M: as BenchmarkCompactClaimAllFull10M
// with one RecordAll per batch of 512 new ids, as the embedded hub's
// pipeline records a bus batch's events (dedup.Private). ns/op is per id.
func BenchmarkCompactRecordAllFull10M(b *testing.B) {
	const size, batch = 10_000_000, 512
	w := dedup.NewCompact(size, time.Hour)
	ctx := context.Background()
	key := func(i int) string { return "org_1\x00live\x00evt_" + strconv.Itoa(i) }
	ids := make([]string, 0, batch)
	for i := range size {
		if ids = append(ids, key(i)); len(ids) == batch || i == size-1 {
			if err := w.Done(ctx, ids...); err != nil {
				b.Fatal(err)
			}
			ids = ids[:0]
		}
	}
	states := make([]dedup.State, batch)
	next := size
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		ids = ids[:0]
		for range batch {
			ids = append(ids, key(next))
			next++
		}
		b.StartTimer()
		if err := w.RecordAll(ctx, ids, states); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/id")
}
