package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/redisresend"
	"github.com/fleethub/fleethub/internal/waitfor"
)

const redisURLEnv = "FLEETHUB_TEST_REDIS_URL"

// redisOptions returns the options of the test Redis, skipping the test
// when none is configured (failing it under CI=true).
func redisOptions(tb testing.TB) *redis.Options {
	tb.Helper()
	url := os.Getenv(redisURLEnv)
	if url == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set but CI=true: Redis tests must run in CI", redisURLEnv)
		}
		tb.Skipf("%s is not set; skipping Redis test (e.g. %s=redis://127.0.0.1:6379/0)", redisURLEnv, redisURLEnv)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("%s: %v", redisURLEnv, err)
	}
	return opt
}

// newRedisClient connects a new client (a "node") to the test Redis.
func newRedisClient(tb testing.TB, opt *redis.Options) *redis.Client {
	tb.Helper()
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(tb.Context()).Err(); err != nil {
		tb.Fatalf("ping %s: %v", opt.Addr, err)
	}
	return c
}

// testPrefix returns a key prefix unique to this test and deletes every key
// under it when the test ends.
func testPrefix(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix := "fleethub:rltest:" + hex.EncodeToString(b) + ":"
	tb.Cleanup(func() {
		// tb.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}

// newRedis returns a client and a limiter under a fresh prefix.
func newRedis(t *testing.T) (*redis.Client, *ratelimit.Redis, string) {
	t.Helper()
	c := newRedisClient(t, redisOptions(t))
	prefix := testPrefix(t, c)
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
	opt := redisOptions(t)
	a, b := newRedisClient(t, opt), newRedisClient(t, opt)
	prefix := testPrefix(t, a)
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
	opt := redisOptions(t)
	nodes := []*redis.Client{newRedisClient(t, opt), newRedisClient(t, opt)}
	prefix := testPrefix(t, nodes[0])
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
