package breaker_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/faultproxy"
)

// newProxy is a faultproxy in front of target, closed with the test.
func newProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func redisOptions(t *testing.T) *redis.Options {
	t.Helper()
	u := os.Getenv("FLEETHUB_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETHUB_TEST_REDIS_URL is not set but CI=true: this test needs Redis")
		}
		t.Skip("FLEETHUB_TEST_REDIS_URL not set: skipping")
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return opt
}

func TestRedisHook(t *testing.T) {
	opt := redisOptions(t)
	p := newProxy(t, opt.Addr)
	opt.Addr = p.Addr()
	prober := redis.NewClient(opt)
	t.Cleanup(func() { prober.Close() })
	var ch changes
	b := breaker.New(breaker.Config{Name: "redis", ProbeEvery: 20 * time.Millisecond, OnChange: ch.add},
		func(ctx context.Context) error { return prober.Ping(ctx).Err() })
	t.Cleanup(func() { b.Close() })
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(breaker.RedisHook(b))
	ctx := context.Background()

	// the server's own answers are successes
	if err := rdb.Get(ctx, "fleethub:breaker-test:missing").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET of a missing key: %v", err)
	}
	if err := rdb.Eval(ctx, "return redis.error_reply('no')", nil).Err(); err == nil {
		t.Fatal("a script error answered nil")
	}
	if b.State() != breaker.Closed {
		t.Fatalf("breaker %s after answers", b.State())
	}

	p.Cut(true)
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING through a cut proxy answered")
	}
	ch.waitState(t, b, breaker.Open)
	for range 20 {
		start := time.Now()
		if err := rdb.Ping(ctx).Err(); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("PING with the breaker open: %v", err)
		}
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil })
		if !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("a pipeline with the breaker open: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("calls with the breaker open took %s", d)
		}
	}

	p.Cut(false)
	ch.waitState(t, b, breaker.Closed)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after: %v", err)
	}
	want := []breaker.State{breaker.Open, breaker.HalfOpen, breaker.Closed}
	if got := ch.wait(len(want)); !equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}
