package ratelimit_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/testredis"
)

// deadRedis returns a limiter whose Redis address has no listener, with
// timeouts short enough for a test.
func deadRedis(t *testing.T) *ratelimit.Redis {
	t.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:          "127.0.0.1:1",
		DialTimeout:   100 * time.Millisecond,
		DialerRetries: 1,
		ReadTimeout:   100 * time.Millisecond,
		WriteTimeout:  100 * time.Millisecond,
		MaxRetries:    -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return ratelimit.NewRedis(c, "")
}

func assertDegraded(t *testing.T, f *ratelimit.Failover, want bool) {
	t.Helper()
	got, err := f.Degraded()
	if got != want || (err != nil) != want {
		t.Fatalf("Degraded() = %v, %v; want %v", got, err, want)
	}
}

func TestFailoverAnswersLocallyWhenRedisIsDown(t *testing.T) {
	clk := newClock()
	f := ratelimit.NewFailover(deadRedis(t), ratelimit.NewMemory(clk.Now))
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 2, Window: time.Second}

	// A caller error is not a Redis fault.
	if _, err := f.Allow(ctx, "k", ratelimit.Limit{}); !errors.Is(err, ratelimit.ErrInvalid) {
		t.Fatalf("invalid limit: err = %v, want ErrInvalid", err)
	}
	assertDegraded(t, f, false)

	want := []ratelimit.Result{
		allowed(1, 1, time.Second),
		allowed(1, 0, 2*time.Second),
		denied(1, 2*time.Second, time.Second),
	}
	for i, w := range want {
		got, err := f.Allow(ctx, "k", lim)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got != w {
			t.Fatalf("request %d: got %+v, want %+v from the local limiter", i, got, w)
		}
	}
	assertDegraded(t, f, true)
	if _, err := f.Degraded(); !errors.As(err, new(*net.OpError)) {
		t.Fatalf("Degraded error %v, want the Redis dial error", err)
	}

	// Revoke reaches the local limiter even though Redis is down.
	if err := f.Revoke(ctx, "k"); err == nil {
		t.Fatal("Revoke with Redis down: want an error saying it is local only")
	}
	if _, err := f.Allow(ctx, "k", lim); !errors.Is(err, ratelimit.ErrRevoked) {
		t.Fatalf("Allow after Revoke: err = %v, want ErrRevoked", err)
	}
}

// flakyConn fails every read and write while down is set.
type flakyConn struct {
	net.Conn
	down *atomic.Bool
}

var errDown = errors.New("test: redis is down")

func (c flakyConn) Read(p []byte) (int, error) {
	if c.down.Load() {
		return 0, errDown
	}
	return c.Conn.Read(p)
}

func (c flakyConn) Write(p []byte) (int, error) {
	if c.down.Load() {
		return 0, errDown
	}
	return c.Conn.Write(p)
}

// flakyRedis returns a limiter on the test Redis that cannot reach it
// while down is set: pooled connections fail and new ones do not dial.
func flakyRedis(t *testing.T, down *atomic.Bool) *ratelimit.Redis {
	t.Helper()
	opt := testredis.Options(t)
	prefix := testredis.Prefix(t, testredis.Connect(t, opt), "rl")
	addr := opt.Addr
	opt.DialerRetries = 1
	opt.MaxRetries = -1
	opt.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		if down.Load() {
			return nil, errDown
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return flakyConn{Conn: conn, down: down}, nil
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return ratelimit.NewRedis(c, prefix)
}

func TestFailoverRecovers(t *testing.T) {
	var down atomic.Bool
	f := ratelimit.NewFailover(flakyRedis(t, &down), ratelimit.NewMemory(nil))
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 100}

	if _, err := f.Allow(ctx, "k", lim); err != nil {
		t.Fatal(err)
	}
	assertDegraded(t, f, false)

	down.Store(true)
	for i := range 3 { // the pooled connection fails, then dialing does
		if r, err := f.Allow(ctx, "k", lim); err != nil || !r.Allowed {
			t.Fatalf("Redis down, request %d: %+v, %v; want allowed locally", i, r, err)
		}
		assertDegraded(t, f, true)
		if _, err := f.Degraded(); !errors.Is(err, errDown) {
			t.Fatalf("Degraded error %v, want %v", err, errDown)
		}
	}

	down.Store(false)
	if r, err := f.Allow(ctx, "k", lim); err != nil || !r.Allowed {
		t.Fatalf("Redis back: %+v, %v", r, err)
	}
	assertDegraded(t, f, false)

	// Once Redis answers again, its revocations apply.
	if err := f.Revoke(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	assertDegraded(t, f, false)
}

func TestFailoverConcurrent(t *testing.T) {
	f := ratelimit.NewFailover(deadRedis(t), ratelimit.NewMemory(newClock().Now))
	ctx := t.Context()
	lim := ratelimit.Limit{Rate: 1, Burst: 10, Window: time.Hour}
	var n atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 5 {
				r, err := f.Allow(ctx, "k", lim)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					n.Add(1)
				}
				f.Degraded()
			}
		})
	}
	wg.Wait()
	if got := n.Load(); got != 10 {
		t.Fatalf("allowed %d, want exactly 10 from the local budget", got)
	}
	assertDegraded(t, f, true)
}
