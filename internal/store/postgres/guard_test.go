package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
)

// cutProxy forwards TCP to target; cut closes every connection and
// refuses new ones until restored.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
	hang   atomic.Bool // hold every byte, as a stopped server
}

// pipe copies src to dst, holding the bytes while p hangs.
func (p *cutProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.hang.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
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
			go func() { defer wg.Done(); p.pipe(up, c) }()
			go func() { defer wg.Done(); p.pipe(c, up) }()
		}
	}()
	return p
}

func (p *cutProxy) setCut(v bool) {
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

func TestBreakerFailsFastWhileTheDatabaseIsGone(t *testing.T) {
	u, err := url.Parse(freshSchema(t))
	if err != nil || u.Host == "" {
		t.Skipf("FLEETHUB_TEST_DATABASE_URL is not a URL with a host: %v", err)
	}
	p := newCutProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.Config{URL: u.String(), Breaker: &breaker.Config{Name: "postgresql"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	b := s.Breaker()

	// an answer of the database, even an error, keeps the breaker closed
	if _, err := s.KeyByHash(ctx, "nothing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	if b.State() != breaker.Closed {
		t.Fatalf("breaker %s after an answer", b.State())
	}

	p.setCut(true)
	if err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("ping with the database gone: %v", err)
	}
	if b.State() != breaker.Open {
		t.Fatalf("breaker %s after a failure", b.State())
	}
	for range 10 {
		start := time.Now()
		_, err := s.KeyByHash(ctx, "nothing")
		if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("a read with the breaker open: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("a read with the breaker open took %s", d)
		}
	}

	p.setCut(false)
	deadline := time.Now().Add(10 * time.Second)
	for b.State() != breaker.Closed {
		if time.Now().After(deadline) {
			t.Fatalf("breaker still %s 10 s after the database came back", b.State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping after: %v", err)
	}
}

// A database that stops answering without closing its connections (a
// stopped process) fails calls after CallTimeout and opens the breaker.
func TestCallTimeoutOpensTheBreakerOnAHungDatabase(t *testing.T) {
	u, err := url.Parse(freshSchema(t))
	if err != nil || u.Host == "" {
		t.Skipf("FLEETHUB_TEST_DATABASE_URL is not a URL with a host: %v", err)
	}
	p := newCutProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	ctx := context.Background()
	s, err := postgres.Open(ctx, postgres.Config{URL: u.String(), Breaker: &breaker.Config{Name: "postgresql"}, CallTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.hang.Store(false); s.Close() })
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	p.hang.Store(true)
	start := time.Now()
	if _, err := s.KeyByHash(ctx, "nothing"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a read from a hung database: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a read from a hung database took %s", d)
	}
	if s.Breaker().State() != breaker.Open {
		t.Fatalf("breaker %s after a timeout", s.Breaker().State())
	}

	p.hang.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for s.Breaker().State() != breaker.Closed {
		if time.Now().After(deadline) {
			t.Fatalf("breaker still %s 10 s after the database answered again", s.Breaker().State())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
