package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/faultproxy"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
)

// newCutProxy is a faultproxy in front of target, closed with the test.
func newCutProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// tcpSchema is a fresh schema's URL whose host a proxy can stand in front
// of. A server reached otherwise (a Unix socket) skips the test, except
// under CI=true, where the database is a service these tests need.
func tcpSchema(t *testing.T) *url.URL {
	t.Helper()
	u, err := url.Parse(freshSchema(t))
	if err == nil && u.Host != "" {
		return u
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and FLEETHUB_TEST_DATABASE_URL is not a URL with a host (a proxy stands in front of it here): %v", err)
	}
	t.Skipf("FLEETHUB_TEST_DATABASE_URL is not a URL with a host: %v", err)
	return nil
}

func TestBreakerFailsFastWhileTheDatabaseIsGone(t *testing.T) {
	u := tcpSchema(t)
	p := newCutProxy(t, u.Host)
	u.Host = p.Addr()
	ctx := context.Background()
	cfg, changed := watched()
	s, err := postgres.Open(ctx, postgres.Config{URL: u.String(), Breaker: cfg})
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

	p.Cut(true)
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

	p.Cut(false)
	waitClosed(t, b, changed, "the database came back")
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping after: %v", err)
	}
}

// A database that stops answering without closing its connections (a
// stopped process) fails calls after CallTimeout and opens the breaker.
func TestCallTimeoutOpensTheBreakerOnAHungDatabase(t *testing.T) {
	u := tcpSchema(t)
	p := newCutProxy(t, u.Host)
	u.Host = p.Addr()
	ctx := context.Background()
	cfg, changed := watched()
	s, err := postgres.Open(ctx, postgres.Config{URL: u.String(), Breaker: cfg, CallTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Hang(false); s.Close() })
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	p.Hang(true)
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

	p.Hang(false)
	waitClosed(t, s.Breaker(), changed, "the database answered again")
}

// watched is a breaker configuration whose breaker signals changed at
// every change of its state.
func watched() (cfg *breaker.Config, changed <-chan struct{}) {
	ch := make(chan struct{}, 1)
	return &breaker.Config{Name: "postgresql", OnChange: func(_, _ breaker.State) {
		select {
		case ch <- struct{}{}:
		default: // a change is signalled already
		}
	}}, ch
}

// waitClosed waits until b is closed, checking at each change of its
// state, and fails the test after 10 s.
func waitClosed(t *testing.T, b *breaker.Breaker, changed <-chan struct{}, since string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for b.State() != breaker.Closed {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("breaker still %s 10 s after %s", b.State(), since)
		}
	}
}
