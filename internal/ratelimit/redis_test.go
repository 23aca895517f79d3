package ratelimit_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/redisresend"
	"github.com/fleethub/fleethub/internal/testredis"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// newRedis returns a client and a limiter under a fresh prefix.
func newRedis(t *testing.T) (*redis.Client, *ratelimit.Redis, string) {
	t.Helper()
	c := testredis.Connect(t, testredis.Options(t))
	prefix := testredis.Prefix(t, c, "rl")
	return c, ratelimit.NewRedis(c, prefix), prefix
}

func TestRedisAllowValues(t *testing.T) {
	c, rl, _ := newRedis(t)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 3} // one token per minute
	start, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, wantRemaining := range []int{2, 1, 0} {
		r, err := rl.Allow(ctx, "k", lim)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Allowed || r.Remaining != wantRemaining || r.Limit != 1 || r.RetryAfter != 0 {
			t.Fatalf("request %d: %+v, want allowed with %d remaining", i, r, wantRemaining)
		}
		// Full again (i+1) minutes after start, give or take the test's run time.
		full := start.Add(time.Duration(i+1) * time.Minute)
		if r.Reset < full.Unix() || r.Reset > full.Unix()+2 {
			t.Errorf("request %d: Reset %d, want about %d", i, r.Reset, full.Unix())
		}
	}
	r, err := rl.Allow(ctx, "k", lim)
	if err != nil {
		t.Fatal(err)
	}
	if r.Allowed || r.Remaining != 0 || r.RetryAfter <= 55*time.Second || r.RetryAfter > time.Minute {
		t.Fatalf("request 4: %+v, want denied, retry in just under a minute", r)
	}
}

func TestRedisRefill(t *testing.T) {
	c, rl, _ := newRedis(t)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 20, Burst: 1, Window: time.Second} // one token per 50ms
	if r, err := rl.Allow(ctx, "k", lim); err != nil || !r.Allowed {
		t.Fatalf("first: %+v, %v", r, err)
	}
	r, err := rl.Allow(ctx, "k", lim)
	if err != nil || r.Allowed || r.RetryAfter <= 0 || r.RetryAfter > 50*time.Millisecond {
		t.Fatalf("second: %+v, %v; want denied, retry within 50ms", r, err)
	}
	// the script reads Redis's own clock (TIME): wait until that clock,
	// read after the denial, has moved RetryAfter on
	denied, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	due := denied.Add(r.RetryAfter)
	waitfor.Until(t, 10*time.Second, "Redis's clock past RetryAfter", func() bool {
		now, err := c.Time(ctx).Result()
		return err == nil && !now.Before(due)
	})
	if r, err := rl.Allow(ctx, "k", lim); err != nil || !r.Allowed {
		t.Fatalf("after RetryAfter: %+v, %v; want allowed", r, err)
	}
}

func TestRedisBucketTTL(t *testing.T) {
	c, rl, prefix := newRedis(t)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 3} // one token per minute
	for range 3 {
		if _, err := rl.Allow(ctx, "k", lim); err != nil {
			t.Fatal(err)
		}
	}
	// The layout documented in doc.go.
	ttl, err := c.PTTL(ctx, prefix+"{k}:bucket").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl < 170*time.Second || ttl > 3*time.Minute {
		t.Fatalf("bucket TTL %v, want just under the 3m full-refill time", ttl)
	}
}

func TestRedisRevokeAcrossNodes(t *testing.T) {
	opt := testredis.Options(t)
	a, b := testredis.Connect(t, opt), testredis.Connect(t, opt)
	prefix := testredis.Prefix(t, a, "rl")
	nodeA, nodeB := ratelimit.NewRedis(a, prefix), ratelimit.NewRedis(b, prefix)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 100}

	if _, err := nodeB.Allow(ctx, "key-1", lim); err != nil {
		t.Fatal(err)
	}
	if err := nodeA.Revoke(ctx, "key-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := nodeB.Allow(ctx, "key-1", lim); !errors.Is(err, ratelimit.ErrRevoked) {
		t.Fatalf("node B after node A revoked: err = %v, want ErrRevoked", err)
	}
	if _, err := nodeB.Allow(ctx, "key-2", lim); err != nil {
		t.Fatalf("other key: %v", err)
	}
	ttl, err := a.TTL(ctx, prefix+"{key-1}:revoked").Result()
	if err != nil || ttl != -1 {
		t.Fatalf("marker TTL = %v, %v; want -1 (no expiry)", ttl, err)
	}
}

func TestRedisTwoNodesShareOneBudget(t *testing.T) {
	opt := testredis.Options(t)
	nodes := []*redis.Client{testredis.Connect(t, opt), testredis.Connect(t, opt)}
	prefix := testredis.Prefix(t, nodes[0], "rl")
	limiters := []*ratelimit.Redis{ratelimit.NewRedis(nodes[0], prefix), ratelimit.NewRedis(nodes[1], prefix)}
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 10, Window: time.Hour}

	for round := range 5 {
		key := "shared-" + string(rune('a'+round))
		var n atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 20 {
			wg.Go(func() {
				<-start
				r, err := limiters[i%2].Allow(ctx, key, lim)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					n.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if got := n.Load(); got != 10 {
			t.Fatalf("round %d: %d of 20 allowed across two nodes, want exactly 10", round, got)
		}
	}
}

func TestRedisInvalid(t *testing.T) {
	_, rl, _ := newRedis(t)
	ctx := t.Context()
	if _, err := rl.Allow(ctx, "", ratelimit.Limit{Rate: 1}); !errors.Is(err, ratelimit.ErrInvalid) {
		t.Errorf("empty key: err = %v, want ErrInvalid", err)
	}
	// Redis works in microseconds: two million per second is too fine.
	if _, err := rl.Allow(ctx, "k", ratelimit.Limit{Rate: 2_000_000, Window: time.Second}); !errors.Is(err, ratelimit.ErrInvalid) {
		t.Errorf("sub-microsecond interval: err = %v, want ErrInvalid", err)
	}
}

// TestRedisAllowSentAgainChargesOnce: go-redis sends a command again when
// its reply comes after the read timeout, though Redis ran it; the call
// run twice takes one token, not two.
func TestRedisAllowSentAgainChargesOnce(t *testing.T) {
	direct, rl, prefix := newRedis(t)
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 2}             // one token per minute, two in the bucket
	if _, err := rl.Allow(ctx, "warm", lim); err != nil { // the script in Redis's cache
		t.Fatal(err)
	}
	slow := redisresend.New(t, direct.Options())
	slow.Hold(t)
	r, err := ratelimit.NewRedis(slow.Client, prefix).Allow(ctx, "k", lim)
	if err != nil || !r.Allowed {
		t.Fatalf("the call sent again: %+v, %v; want allowed", r, err)
	}
	if r, err := rl.Allow(ctx, "k", lim); err != nil || !r.Allowed || r.Remaining != 0 {
		t.Fatalf("the second call: %+v, %v; want allowed, none remaining (the first took one token)", r, err)
	}
	if r, err := rl.Allow(ctx, "k", lim); err != nil || r.Allowed {
		t.Fatalf("the third call: %+v, %v; want denied", r, err)
	}
}
