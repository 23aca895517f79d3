package dedup_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/internal/testredis"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// seen calls w.Seen and fails the test on an error.
func seen(t *testing.T, w dedup.Window, id string) bool {
	t.Helper()
	dup, err := w.Seen(t.Context(), id)
	if err != nil {
		t.Fatalf("Seen(%q): %v", id, err)
	}
	return dup
}

// testWindow runs the behaviour every window shares.
func testWindow(t *testing.T, w dedup.Window) {
	if seen(t, w, "evt_1") {
		t.Error("first evt_1 is a dup")
	}
	for i := range 2 {
		if !seen(t, w, "evt_1") {
			t.Errorf("repeat %d of evt_1 is not a dup", i+1)
		}
	}
	if seen(t, w, "evt_2") {
		t.Error("first evt_2 is a dup")
	}
	if _, err := w.Seen(t.Context(), ""); !errors.Is(err, dedup.ErrEmptyID) {
		t.Errorf("Seen(\"\") = %v, want ErrEmptyID", err)
	}
	// Exactly one of many concurrent callers sees an id first.
	var firsts atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dup, err := w.Seen(context.Background(), "evt_race")
			if err != nil {
				t.Error(err)
			}
			if !dup {
				firsts.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d callers saw evt_race first, want 1", n)
	}
}

type forgetter interface {
	Forget(ctx context.Context, id string) error
}

func testForget(t *testing.T, w dedup.Window) {
	f := w.(forgetter)
	seen(t, w, "evt_f")
	if err := f.Forget(t.Context(), "evt_f"); err != nil {
		t.Fatal(err)
	}
	if seen(t, w, "evt_f") {
		t.Error("evt_f is a dup after Forget")
	}
	if !seen(t, w, "evt_f") {
		t.Error("evt_f is not a dup after Forget and Seen")
	}
}

// claim calls w.Claim and fails the test on an error.
func claim(t *testing.T, w dedup.Window, id string) dedup.State {
	t.Helper()
	st, err := w.Claim(t.Context(), id)
	if err != nil {
		t.Fatalf("Claim(%q): %v", id, err)
	}
	return st
}

// testClaim: a claimed id is in flight until Done records it or Forget
// drops it; of many concurrent claimers exactly one gets it.
func testClaim(t *testing.T, w dedup.Window) {
	ctx := t.Context()
	if st := claim(t, w, "evt_c"); st != dedup.Unseen {
		t.Fatalf("first Claim of evt_c = %v, want Unseen", st)
	}
	if st := claim(t, w, "evt_c"); st != dedup.InFlight {
		t.Errorf("second Claim of evt_c = %v, want InFlight", st)
	}
	if !seen(t, w, "evt_c") {
		t.Error("Seen of a claimed id reports false")
	}
	if err := w.Done(ctx, "evt_c"); err != nil {
		t.Fatal(err)
	}
	if st := claim(t, w, "evt_c"); st != dedup.Duplicate {
		t.Errorf("Claim after Done = %v, want Duplicate", st)
	}

	// A claim given up (its message failed) leaves the id unseen.
	claim(t, w, "evt_failed")
	if err := w.Forget(ctx, "evt_failed"); err != nil {
		t.Fatal(err)
	}
	if st := claim(t, w, "evt_failed"); st != dedup.Unseen {
		t.Errorf("Claim after Forget = %v, want Unseen", st)
	}

	// Done takes several ids at once; an id seen with Seen is a duplicate.
	claim(t, w, "evt_d1")
	claim(t, w, "evt_d2")
	if err := w.Done(ctx, "evt_d1", "evt_d2"); err != nil {
		t.Fatal(err)
	}
	seen(t, w, "evt_s")
	for _, id := range []string{"evt_d1", "evt_d2", "evt_s"} {
		if st := claim(t, w, id); st != dedup.Duplicate {
			t.Errorf("Claim(%s) = %v, want Duplicate", id, st)
		}
	}
	if err := w.Done(ctx, "evt_x", ""); !errors.Is(err, dedup.ErrEmptyID) {
		t.Errorf("Done with an empty id = %v, want ErrEmptyID", err)
	}
	if _, err := w.Claim(ctx, ""); !errors.Is(err, dedup.ErrEmptyID) {
		t.Errorf("Claim(\"\") = %v, want ErrEmptyID", err)
	}

	var firsts atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := w.Claim(context.Background(), "evt_claim_race")
			if err != nil {
				t.Error(err)
			}
			if st == dedup.Unseen {
				firsts.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := firsts.Load(); n != 1 {
		t.Errorf("%d callers claimed evt_claim_race, want 1", n)
	}
}

// memWindow is an in-memory window: Local or Compact.
type memWindow interface {
	dedup.Window
	Len() int
}

// inMemory are the in-memory windows; each passes the same behaviour
// tests.
var inMemory = []struct {
	name string
	new  func(size int, ttl time.Duration) memWindow
}{
	{"Local", func(size int, ttl time.Duration) memWindow { return dedup.NewLocal(size, ttl) }},
	{"Compact", func(size int, ttl time.Duration) memWindow { return dedup.NewCompact(size, ttl) }},
}

func TestInMemory(t *testing.T) {
	for _, w := range inMemory {
		t.Run(w.name, func(t *testing.T) {
			t.Run("Window", func(t *testing.T) { testWindow(t, w.new(0, 0)) })
			t.Run("Forget", func(t *testing.T) { testForget(t, w.new(10, time.Minute)) })
			t.Run("Claim", func(t *testing.T) { testClaim(t, w.new(10, time.Minute)) })
			t.Run("Size", func(t *testing.T) { testSize(t, w.new(3, time.Minute)) })
			t.Run("Failover", func(t *testing.T) { testFailoverTo(t, w.new(100, time.Minute)) })
		})
	}
}

// testSize: a window of 3 ids forgets the oldest of 4.
func testSize(t *testing.T, w memWindow) {
	for _, id := range []string{"a", "b", "c", "d"} {
		seen(t, w, id)
	}
	if w.Len() != 3 {
		t.Errorf("Len = %d, want 3", w.Len())
	}
	if seen(t, w, "a") {
		t.Error("a, the oldest, was not evicted")
	}
	if !seen(t, w, "d") {
		t.Error("d was evicted")
	}
}

func TestLocalTTL(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	w := dedup.NewLocal(10, 300*time.Millisecond, dedup.WithClock(func() time.Time { return now }))
	seen(t, w, "a")
	now = now.Add(100 * time.Millisecond)
	if !seen(t, w, "a") {
		t.Fatal("a forgotten before its TTL")
	}
	// A repeat does not extend the TTL: 300 ms after the first sighting a
	// is gone (had the repeat extended it, a would stay until 400 ms).
	now = now.Add(199 * time.Millisecond)
	if !seen(t, w, "a") {
		t.Fatal("a forgotten a millisecond before its TTL")
	}
	now = now.Add(time.Millisecond)
	if seen(t, w, "a") {
		t.Error("a is still a dup after its TTL")
	}
	if !seen(t, w, "a") {
		t.Error("a is not a dup right after it was seen again")
	}
	// Done records at the clock's time as well
	ctx := t.Context()
	if st, err := w.Claim(ctx, "b"); err != nil || st != dedup.Unseen {
		t.Fatalf("Claim(b) = %v, %v", st, err)
	}
	if err := w.Done(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(300 * time.Millisecond)
	if st, _ := w.Claim(ctx, "b"); st != dedup.Unseen {
		t.Errorf("Claim(b) a TTL after Done = %v, want Unseen", st)
	}
}

func BenchmarkLocalSeen(b *testing.B) {
	w := dedup.NewLocal(100_000, time.Minute)
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%08d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := w.Seen(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLocalClaimDone: the pipeline's path for a new id, a claim and
// its record after the hand-off.
func BenchmarkLocalClaimDone(b *testing.B) {
	w := dedup.NewLocal(100_000, time.Minute)
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%08d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := ids[i%len(ids)]
		if _, err := w.Claim(ctx, id); err != nil {
			b.Fatal(err)
		}
		if err := w.Done(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactSeen: as BenchmarkLocalSeen, every id new and evicting
// an old one.
func BenchmarkCompactSeen(b *testing.B) {
	w := dedup.NewCompact(100_000, time.Minute)
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%08d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := w.Seen(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactClaimDone: as BenchmarkLocalClaimDone.
func BenchmarkCompactClaimDone(b *testing.B) {
	w := dedup.NewCompact(100_000, time.Minute)
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%08d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := ids[i%len(ids)]
		if _, err := w.Claim(ctx, id); err != nil {
			b.Fatal(err)
		}
		if err := w.Done(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactClaimDoneFull10M: Claim then Done of new ids in a full
// window of ten million (cmd/fleethub's size): the table is large and
// every id evicts the oldest.
func BenchmarkCompactClaimDoneFull10M(b *testing.B) {
	const size = 10_000_000
	w := dedup.NewCompact(size, time.Hour)
	ctx := context.Background()
	key := func(i int) string { return "org_1\x00live\x00evt_" + strconv.Itoa(i) }
	for i := range size {
		if err := w.Done(ctx, key(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := size; b.Loop(); i++ {
		id := key(i)
		if _, err := w.Claim(ctx, id); err != nil {
			b.Fatal(err)
		}
		if err := w.Done(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRedis(t *testing.T) {
	c := testredis.Client(t)
	testWindow(t, dedup.NewRedis(c, testredis.Prefix(t, c, "dedup"), time.Minute))
}

func TestRedisForget(t *testing.T) {
	c := testredis.Client(t)
	testForget(t, dedup.NewRedis(c, testredis.Prefix(t, c, "dedup"), time.Minute))
}

func TestRedisClaim(t *testing.T) {
	c := testredis.Client(t)
	testClaim(t, dedup.NewRedis(c, testredis.Prefix(t, c, "dedup"), time.Minute))
}

// TestRedisClaimLeaseAndTTL: a claim expires after the lease, a record
// after the TTL counted from Done.
func TestRedisClaimLeaseAndTTL(t *testing.T) {
	c := testredis.Client(t)
	prefix := testredis.Prefix(t, c, "dedup")
	w := dedup.NewRedis(c, prefix, 90*time.Second)
	claim(t, w, "evt_1")
	lease, err := c.PTTL(t.Context(), prefix+"evt_1").Result()
	if err != nil {
		t.Fatal(err)
	}
	if lease <= dedup.DefaultLease-10*time.Second || lease > dedup.DefaultLease {
		t.Errorf("PTTL of a claim = %v, want about %v", lease, dedup.DefaultLease)
	}
	if err := w.Done(t.Context(), "evt_1"); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := c.PTTL(t.Context(), prefix+"evt_1").Result(); ttl <= 80*time.Second || ttl > 90*time.Second {
		t.Errorf("PTTL after Done = %v, want about 90s", ttl)
	}
}

func TestRedisKeyAndTTL(t *testing.T) {
	c := testredis.Client(t)
	prefix := testredis.Prefix(t, c, "dedup")
	w := dedup.NewRedis(c, prefix, 90*time.Second)
	seen(t, w, "evt_1")
	ttl, err := c.PTTL(t.Context(), prefix+"evt_1").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 80*time.Second || ttl > 90*time.Second {
		t.Errorf("PTTL = %v, want about 90s", ttl)
	}
	// A repeat does not extend the TTL.
	seen(t, w, "evt_1")
	if again, _ := c.PTTL(t.Context(), prefix+"evt_1").Result(); again > ttl {
		t.Errorf("PTTL grew from %v to %v on a repeat", ttl, again)
	}
}

func TestRedisTTL(t *testing.T) {
	c := testredis.Client(t)
	prefix := testredis.Prefix(t, c, "dedup")
	w := dedup.NewRedis(c, prefix, 100*time.Millisecond)
	seen(t, w, "a")
	if !seen(t, w, "a") {
		t.Fatal("a is not a dup")
	}
	if ttl, err := c.PTTL(t.Context(), prefix+"a").Result(); err != nil || ttl <= 0 || ttl > 100*time.Millisecond {
		t.Fatalf("PTTL = %v, %v; want at most the window's 100ms", ttl, err)
	}
	// Redis expires the key on its own clock
	waitfor.Until(t, 10*time.Second, "Redis to expire a", func() bool {
		n, err := c.Exists(t.Context(), prefix+"a").Result()
		return err == nil && n == 0
	})
	if seen(t, w, "a") {
		t.Error("a is still a dup after its TTL")
	}
}

// TestRedisTwoNodes: two nodes, each with its own client and window, share
// one id space through the prefix; a window with another prefix does not.
func TestRedisTwoNodes(t *testing.T) {
	c1, c2 := testredis.Client(t), testredis.Client(t)
	prefix := testredis.Prefix(t, c1, "dedup")
	node1, node2 := dedup.NewRedis(c1, prefix, time.Minute), dedup.NewRedis(c2, prefix, time.Minute)
	if seen(t, node1, "evt_1") {
		t.Fatal("node1: first evt_1 is a dup")
	}
	if !seen(t, node2, "evt_1") {
		t.Error("node2 did not see node1's evt_1")
	}
	if seen(t, node2, "evt_2") || !seen(t, node1, "evt_2") {
		t.Error("node1 did not see node2's evt_2")
	}
	other := dedup.NewRedis(c2, testredis.Prefix(t, c2, "dedup"), time.Minute)
	if seen(t, other, "evt_1") {
		t.Error("a window with another prefix saw evt_1")
	}

	// Both nodes race on the same 200 ids: each id is first exactly once.
	const ids = 200
	var firsts [ids]atomic.Int32
	var wg sync.WaitGroup
	for _, w := range []dedup.Window{node1, node2, node1, node2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				dup, err := w.Seen(context.Background(), fmt.Sprintf("race_%d", i))
				if err != nil {
					t.Error(err)
					return
				}
				if !dup {
					firsts[i].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for i := range firsts {
		if n := firsts[i].Load(); n != 1 {
			t.Errorf("race_%d was first %d times, want 1", i, n)
		}
	}
}

func TestRedisError(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	w := dedup.NewRedis(c, "", 0)
	if _, err := w.Seen(t.Context(), "x"); err == nil {
		t.Error("Seen without a Redis returned no error")
	}
}

func BenchmarkRedisClaimDone(b *testing.B) {
	c := testredis.Client(b)
	w := dedup.NewRedis(c, testredis.Prefix(b, c, "dedup"), time.Minute)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("evt_%d", i)
		if _, err := w.Claim(ctx, id); err != nil {
			b.Fatal(err)
		}
		if err := w.Done(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedisSeen(b *testing.B) {
	c := testredis.Client(b)
	w := dedup.NewRedis(c, testredis.Prefix(b, c, "dedup"), time.Minute)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := w.Seen(ctx, fmt.Sprintf("evt_%d", i%1000)); err != nil {
			b.Fatal(err)
		}
	}
}
