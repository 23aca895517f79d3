package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/ratelimit"
)

// epoch is a whole second, so that Reset values are easy to state.
var epoch = time.Unix(1_700_000_000, 0)

// clock is a manual clock for Memory.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: epoch} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// step is one Allow call after advancing the clock, and what it must return.
type step struct {
	advance time.Duration
	want    ratelimit.Result
}

// allowed and denied build expected Results; reset is relative to epoch.
func allowed(limit, remaining int, reset time.Duration) ratelimit.Result {
	return ratelimit.Result{Allowed: true, Limit: limit, Remaining: remaining, Reset: epoch.Add(reset).Unix()}
}

func denied(limit int, reset, retry time.Duration) ratelimit.Result {
	return ratelimit.Result{Limit: limit, Reset: epoch.Add(reset).Unix(), RetryAfter: retry}
}

func TestMemoryAllow(t *testing.T) {
	tests := []struct {
		name  string
		lim   ratelimit.Limit
		steps []step
	}{
		{
			name: "burst exhausted then refilled",
			// One token per 6s, three at most.
			lim: ratelimit.Limit{Rate: 10, Burst: 3},
			steps: []step{
				{0, allowed(10, 2, 6*time.Second)},
				{0, allowed(10, 1, 12*time.Second)},
				{0, allowed(10, 0, 18*time.Second)},
				{0, denied(10, 18*time.Second, 6*time.Second)},
				{2 * time.Second, denied(10, 18*time.Second, 4*time.Second)},
				{4 * time.Second, allowed(10, 0, 24*time.Second)},
				{0, denied(10, 24*time.Second, 6*time.Second)},
				// Full again at 24s: a whole burst is back.
				{18 * time.Second, allowed(10, 2, 30*time.Second)},
				{0, allowed(10, 1, 36*time.Second)},
				{0, allowed(10, 0, 42*time.Second)},
				{0, denied(10, 42*time.Second, 6*time.Second)},
			},
		},
		{
			name: "burst zero means twice the rate, window zero one minute",
			lim:  ratelimit.Limit{Rate: 2},
			steps: []step{
				{0, allowed(2, 3, 30*time.Second)},
				{0, allowed(2, 2, 60*time.Second)},
				{0, allowed(2, 1, 90*time.Second)},
				{0, allowed(2, 0, 120*time.Second)},
				{0, denied(2, 120*time.Second, 30*time.Second)},
			},
		},
		{
			name: "idle time beyond the burst is not banked",
			lim:  ratelimit.Limit{Rate: 1, Burst: 2, Window: time.Second},
			steps: []step{
				{time.Hour, allowed(1, 1, time.Hour+time.Second)},
				{0, allowed(1, 0, time.Hour+2*time.Second)},
				{0, denied(1, time.Hour+2*time.Second, time.Second)},
			},
		},
		{
			name: "sub-second retry and reset rounded up",
			lim:  ratelimit.Limit{Rate: 4, Burst: 1, Window: time.Second},
			steps: []step{
				{0, allowed(4, 0, time.Second)}, // full at 0.25s, rounded up
				{100 * time.Millisecond, denied(4, time.Second, 150*time.Millisecond)},
				{150 * time.Millisecond, allowed(4, 0, time.Second)}, // full at 0.5s
				{500 * time.Millisecond, allowed(4, 0, time.Second)}, // full at exactly 1s
			},
		},
		{
			name: "partial refill counts whole tokens only",
			lim:  ratelimit.Limit{Rate: 60, Burst: 10}, // one token per second
			steps: []step{
				{0, allowed(60, 9, time.Second)},
				{0, allowed(60, 8, 2*time.Second)},
				{0, allowed(60, 7, 3*time.Second)},
				{1500 * time.Millisecond, allowed(60, 7, 4*time.Second)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			m := ratelimit.NewMemory(clk.Now)
			ctx := t.Context()
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				got, err := m.Allow(ctx, "k", tt.lim)
				if err != nil {
					t.Fatalf("step %d: Allow: %v", i, err)
				}
				if got != s.want {
					t.Errorf("step %d (+%v): got %+v, want %+v", i, clk.Now().Sub(epoch), got, s.want)
				}
			}
		})
	}
}

func TestMemoryClockStepsBack(t *testing.T) {
	clk := newClock()
	m := ratelimit.NewMemory(clk.Now)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 1, Window: time.Second}
	if r, _ := m.Allow(ctx, "k", lim); !r.Allowed {
		t.Fatal("first request denied")
	}
	clk.Advance(-time.Hour)
	if r, _ := m.Allow(ctx, "k", lim); r.Allowed {
		t.Fatal("a clock stepping back refilled the bucket")
	}
	clk.Advance(time.Hour + time.Second)
	if r, _ := m.Allow(ctx, "k", lim); !r.Allowed {
		t.Fatal("bucket not refilled once the clock caught up")
	}
}

func TestMemoryKeysAreIndependent(t *testing.T) {
	m := ratelimit.NewMemory(newClock().Now)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 1}
	for _, key := range []string{"a", "b", "c"} {
		if r, err := m.Allow(ctx, key, lim); err != nil || !r.Allowed {
			t.Fatalf("Allow(%q) = %+v, %v; want allowed", key, r, err)
		}
	}
	if r, _ := m.Allow(ctx, "a", lim); r.Allowed {
		t.Fatal("a: second request allowed with burst 1")
	}
}

func TestAllowInvalid(t *testing.T) {
	tests := []struct {
		name string
		key  string
		lim  ratelimit.Limit
	}{
		{"empty key", "", ratelimit.Limit{Rate: 1}},
		{"zero rate", "k", ratelimit.Limit{}},
		{"negative rate", "k", ratelimit.Limit{Rate: -1}},
		{"negative burst", "k", ratelimit.Limit{Rate: 1, Burst: -1}},
		{"negative window", "k", ratelimit.Limit{Rate: 1, Window: -time.Second}},
		{"over one token per nanosecond", "k", ratelimit.Limit{Rate: 2, Window: time.Nanosecond}},
		{"refill beyond a century", "k", ratelimit.Limit{Rate: 1, Burst: 1 << 30, Window: 24 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ratelimit.NewMemory(nil)
			if _, err := m.Allow(t.Context(), tt.key, tt.lim); !errors.Is(err, ratelimit.ErrInvalid) {
				t.Fatalf("Allow: err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestMemoryRevoke(t *testing.T) {
	clk := newClock()
	m := ratelimit.NewMemory(clk.Now)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 1, Window: time.Second}

	if _, err := m.Allow(ctx, "used", lim); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"used", "never-seen"} {
		if err := m.Revoke(ctx, key); err != nil {
			t.Fatalf("Revoke(%q): %v", key, err)
		}
	}
	clk.Advance(time.Hour)
	if n := m.Sweep(clk.Now()); n != 0 {
		t.Errorf("Sweep evicted %d buckets, want 0 (revoked keys stay)", n)
	}
	for _, key := range []string{"used", "never-seen"} {
		if _, err := m.Allow(ctx, key, lim); !errors.Is(err, ratelimit.ErrRevoked) {
			t.Errorf("Allow(%q) after Revoke: err = %v, want ErrRevoked", key, err)
		}
	}
	if _, err := m.Allow(ctx, "other", lim); err != nil {
		t.Errorf("Allow(other): %v", err)
	}
	if err := m.Revoke(ctx, ""); !errors.Is(err, ratelimit.ErrInvalid) {
		t.Errorf("Revoke(\"\"): err = %v, want ErrInvalid", err)
	}
}

func TestMemorySweep(t *testing.T) {
	clk := newClock()
	m := ratelimit.NewMemory(clk.Now)
	ctx := t.Context()
	short := ratelimit.Limit{Rate: 1, Burst: 2, Window: time.Second} // full 2s after two requests
	long := ratelimit.Limit{Rate: 1, Burst: 2, Window: time.Minute}

	for i := range 10 {
		if _, err := m.Allow(ctx, fmt.Sprint("short", i), short); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Allow(ctx, "long", long); err != nil {
		t.Fatal(err)
	}
	if got := m.Len(); got != 11 {
		t.Fatalf("Len = %d, want 11", got)
	}
	if n := m.Sweep(clk.Now().Add(999 * time.Millisecond)); n != 0 {
		t.Fatalf("Sweep before full refill evicted %d", n)
	}
	if n := m.Sweep(clk.Now().Add(time.Second)); n != 10 {
		t.Fatalf("Sweep at full refill evicted %d, want 10", n)
	}
	if got := m.Len(); got != 1 {
		t.Fatalf("Len after sweep = %d, want 1", got)
	}

	// Eviction is lossless: an evicted key starts full, as it would have.
	clk.Advance(time.Second)
	r, err := m.Allow(ctx, "short0", short)
	if err != nil || r != allowed(1, 1, 2*time.Second) {
		t.Fatalf("Allow after eviction = %+v, %v", r, err)
	}
}

func TestMemoryLazySweepBoundsMemory(t *testing.T) {
	clk := newClock()
	m := ratelimit.NewMemory(clk.Now)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 1, Window: time.Millisecond}
	const keys = 200_000
	for i := range keys {
		clk.Advance(time.Millisecond) // every earlier bucket is full again
		if _, err := m.Allow(ctx, fmt.Sprint("device-", i), lim); err != nil {
			t.Fatal(err)
		}
	}
	// 64 shards of at most 2*0+1024 idle buckets each, plus the live one.
	if got, limit := m.Len(), 64*1024+1; got > limit {
		t.Fatalf("Len = %d after %d one-off keys, want <= %d", got, keys, limit)
	}
}

func TestMemoryAllowDoesNotAllocate(t *testing.T) {
	m := ratelimit.NewMemory(nil)
	ctx := context.Background()
	lim := ratelimit.Limit{Rate: 1000, Burst: 10}
	key := string([]byte("fhk_live_0123456789abcdef")) // not a constant
	if _, err := m.Allow(ctx, key, lim); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := m.Allow(ctx, key, lim); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Allow on an existing key: %v allocs per call, want 0", allocs)
	}
}

func TestMemoryConcurrentSharedBudget(t *testing.T) {
	m := ratelimit.NewMemory(newClock().Now) // frozen clock: no refill
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 100, Window: time.Hour}
	var n atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 10 {
				r, err := m.Allow(ctx, "shared", lim)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := n.Load(); got != 100 {
		t.Fatalf("allowed %d of 500, want exactly 100", got)
	}
}

func TestMemoryConcurrentMixed(t *testing.T) {
	clk := newClock()
	m := ratelimit.NewMemory(clk.Now)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 10, Burst: 5, Window: time.Second}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				key := fmt.Sprint("k", (g*7+i)%300)
				_, err := m.Allow(ctx, key, lim)
				if err != nil && !errors.Is(err, ratelimit.ErrRevoked) {
					t.Error(err)
					return
				}
				switch i % 500 {
				case 0:
					clk.Advance(100 * time.Millisecond)
				case 1:
					m.Sweep(clk.Now())
				case 2:
					if err := m.Revoke(ctx, fmt.Sprint("k", g)); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		if _, err := m.Allow(ctx, fmt.Sprint("k", g), lim); !errors.Is(err, ratelimit.ErrRevoked) {
			t.Errorf("k%d: err = %v, want ErrRevoked", g, err)
		}
	}
}
