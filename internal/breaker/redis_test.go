package breaker_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/breaker"
)

// proxy forwards TCP to target; cut closes every connection and refuses
// new ones until restored.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); p.setCut(true); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			p.mu.Lock()
			if p.cut || err != nil {
				p.mu.Unlock()
				c.Close()
				if up != nil {
					up.Close()
				}
				continue
			}
			p.conns[c], p.conns[up] = struct{}{}, struct{}{}
			p.mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(up, c); up.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) setCut(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = v
	if v {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
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
	opt.Addr = p.ln.Addr().String()
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

	p.setCut(true)
	if err := rdb.Ping(ctx).Err(); err == nil {
		t.Fatal("PING through a cut proxy answered")
	}
	waitState(t, b, breaker.Open)
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

	p.setCut(false)
	waitState(t, b, breaker.Closed)
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after: %v", err)
	}
	want := []breaker.State{breaker.Open, breaker.HalfOpen, breaker.Closed}
	if got := ch.wait(len(want)); !equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}
