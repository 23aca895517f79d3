package breaker_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/breaker"
)

// bell rings when something a test waits for happens: a timer set on
// the fake clock, a change of state reported, a probe run. await
// re-checks its condition at every ring.
type bell struct {
	mu sync.Mutex
	ch chan struct{} // closed by the next ring
}

func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// await reports whether cond holds, checking it again at every ring
// until it does or 5 s pass.
func (b *bell) await(cond func() bool) bool {
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if b.ch == nil {
			b.ch = make(chan struct{})
		}
		rung := b.ch
		b.mu.Unlock()
		if cond() {
			return true
		}
		select {
		case <-rung:
		case <-deadline.C:
			return false
		}
	}
}

// fakeClock moves only when told.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	set     bell // rings when a timer is set
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.set.ring()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	return ch
}

// advance moves the clock once a timer waits, firing the timers due.
func (c *fakeClock) advance(t *testing.T, d time.Duration) {
	t.Helper()
	if !c.set.await(func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.waiters) > 0
	}) {
		t.Fatal("no probe waits on the clock")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

type changes struct {
	mu    sync.Mutex
	got   []breaker.State
	added bell
}

func (c *changes) add(_, to breaker.State) {
	c.mu.Lock()
	c.got = append(c.got, to)
	c.mu.Unlock()
	c.added.ring()
}

func (c *changes) list() []breaker.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]breaker.State(nil), c.got...)
}

// wait returns the changes once there are n (OnChange follows the state).
func (c *changes) wait(n int) []breaker.State {
	c.added.await(func() bool { return len(c.list()) >= n })
	return c.list()
}

// waitState waits for b to be in want; b reports its changes to c.
func (c *changes) waitState(t *testing.T, b *breaker.Breaker, want breaker.State) {
	t.Helper()
	if !c.added.await(func() bool { return b.State() == want }) {
		t.Fatalf("state %s, want %s", b.State(), want)
	}
}

var errDown = errors.New("connection refused")

func TestOpensAfterFailuresInARow(t *testing.T) {
	tests := []struct {
		name     string
		failures int
		calls    []bool // true: the call failed
		want     breaker.State
	}{
		{"one failure opens by default", 0, []bool{true}, breaker.Open},
		{"successes keep it closed", 0, []bool{false, false}, breaker.Closed},
		{"below the threshold", 3, []bool{true, true}, breaker.Closed},
		{"a success resets the count", 3, []bool{true, true, false, true, true}, breaker.Closed},
		{"at the threshold", 3, []bool{true, false, true, true, true}, breaker.Open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := breaker.New(breaker.Config{Failures: tt.failures, Clock: &fakeClock{}}, func(context.Context) error { return errDown })
			defer b.Close()
			for _, failed := range tt.calls {
				if failed {
					b.Failure(errDown)
				} else {
					b.Success()
				}
			}
			if got := b.State(); got != tt.want {
				t.Fatalf("state %s, want %s", got, tt.want)
			}
		})
	}
}

func TestOpenFailsWithoutCallingAndProbesBack(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var up atomic.Bool
	var probes atomic.Int32
	var probed bell
	var ch changes
	b := breaker.New(breaker.Config{Name: "redis", Clock: clock, ProbeEvery: time.Second, OnChange: ch.add}, func(context.Context) error {
		probes.Add(1)
		defer probed.ring()
		if up.Load() {
			return nil
		}
		return errDown
	})
	defer b.Close()

	calls := 0
	call := func(context.Context) error { calls++; return errDown }
	if err := b.Do(context.Background(), call, nil); !errors.Is(err, errDown) {
		t.Fatalf("first call: %v", err)
	}
	if b.State() != breaker.Open || !errors.Is(b.Err(), errDown) {
		t.Fatalf("after a failure: %s, %v", b.State(), b.Err())
	}
	for range 100 {
		if err := b.Do(context.Background(), call, nil); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("open breaker: %v", err)
		}
	}
	if calls != 1 {
		t.Fatalf("the part was called %d times, want 1", calls)
	}

	clock.advance(t, time.Second) // a probe that fails: still open
	if !probed.await(func() bool { return probes.Load() >= 1 }) {
		t.Fatal("no first probe")
	}
	clock.advance(t, time.Second)
	if !probed.await(func() bool { return probes.Load() >= 2 }) {
		t.Fatal("no second probe")
	}
	if b.State() != breaker.Open {
		t.Fatalf("after failed probes: %s", b.State())
	}

	up.Store(true)
	clock.advance(t, time.Second)
	ch.waitState(t, b, breaker.HalfOpen)
	if err := b.Allow(); err != nil {
		t.Fatalf("half-open refuses calls: %v", err)
	}
	b.Success()
	if b.State() != breaker.Closed || b.Err() != nil {
		t.Fatalf("after a success half-open: %s, %v", b.State(), b.Err())
	}
	want := []breaker.State{breaker.Open, breaker.HalfOpen, breaker.Closed}
	if got := ch.wait(len(want)); !equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}

func TestHalfOpenFailureReopens(t *testing.T) {
	clock := &fakeClock{}
	var up atomic.Bool
	up.Store(true)
	var ch changes
	b := breaker.New(breaker.Config{Clock: clock, OnChange: ch.add}, func(context.Context) error {
		if up.Load() {
			return nil
		}
		return errDown
	})
	defer b.Close()
	b.Failure(errDown)
	clock.advance(t, breaker.DefaultProbeEvery)
	ch.waitState(t, b, breaker.HalfOpen)
	up.Store(false)
	b.Failure(errDown)
	if b.State() != breaker.Open {
		t.Fatalf("a failure half-open left %s", b.State())
	}
	up.Store(true)
	clock.advance(t, breaker.DefaultProbeEvery)
	ch.waitState(t, b, breaker.HalfOpen)
	// with no calls, the next probe closes it
	clock.advance(t, breaker.DefaultProbeEvery)
	ch.waitState(t, b, breaker.Closed)
	want := []breaker.State{breaker.Open, breaker.HalfOpen, breaker.Open, breaker.HalfOpen, breaker.Closed}
	if got := ch.wait(len(want)); !equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
}

func TestConcurrentFailuresChangeOnce(t *testing.T) {
	var ch changes
	b := breaker.New(breaker.Config{Clock: &fakeClock{}, OnChange: ch.add}, func(context.Context) error { return errDown })
	defer b.Close()
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Failure(errDown)
				_ = b.Allow()
			}
		}()
	}
	wg.Wait()
	if got := ch.list(); !equal(got, []breaker.State{breaker.Open}) {
		t.Fatalf("changes %v, want one open", got)
	}
}

func TestCloseStopsTheProbe(t *testing.T) {
	b := breaker.New(breaker.Config{ProbeEvery: time.Millisecond}, func(context.Context) error { return errDown })
	b.Failure(errDown)
	done := make(chan struct{})
	go func() { _ = b.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop the probe")
	}
	b.Success()
	if b.State() != breaker.Open {
		t.Fatalf("a closed breaker changed state: %s", b.State())
	}
}

func equal(a, b []breaker.State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func BenchmarkAllowClosed(b *testing.B) {
	br := breaker.New(breaker.Config{}, func(context.Context) error { return nil })
	defer br.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if br.Allow() == nil {
				br.Success()
			}
		}
	})
}

func TestWatchOpensAClosedBreaker(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var up atomic.Bool
	up.Store(true)
	probed := make(chan error, 16)
	var ch changes
	b := breaker.New(breaker.Config{Name: "kafka", Clock: clock, Watch: time.Second, ProbeEvery: time.Second, OnChange: ch.add}, func(context.Context) error {
		err := errDown
		if up.Load() {
			err = nil
		}
		select {
		case probed <- err:
		default:
		}
		return err
	})
	defer b.Close()
	live := b.Live()

	clock.advance(t, time.Second) // a watch probe that succeeds: still closed
	select {
	case <-probed:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch probe")
	}
	if b.State() != breaker.Closed || live.Err() != nil {
		t.Fatalf("after a good probe: %s, live %v", b.State(), live.Err())
	}

	up.Store(false) // the part goes away with no call to find it
	clock.advance(t, time.Second)
	ch.waitState(t, b, breaker.Open)
	select {
	case <-live.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the live context did not end when the breaker opened")
	}
	if !errors.Is(b.Err(), errDown) {
		t.Fatalf("err %v, want the probe's", b.Err())
	}
	if b.Live().Err() == nil {
		t.Fatal("Live while open must be ended")
	}

	up.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for b.State() != breaker.Closed && time.Now().Before(deadline) {
		clock.advance(t, time.Second) // open → half-open → closed by probes
	}
	if b.State() != breaker.Closed {
		t.Fatalf("state %s after the part came back", b.State())
	}
	if b.Live().Err() != nil {
		t.Fatal("a closed breaker's Live must be running again")
	}
}

func TestLiveEndsCallsInFlight(t *testing.T) {
	b := breaker.New(breaker.Config{Name: "postgresql"}, func(context.Context) error { return errDown })
	defer b.Close()
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stop := context.AfterFunc(b.Live(), cancel)
		defer stop()
		close(started)
		<-ctx.Done() // a call the part never answers
		done <- ctx.Err()
	}()
	<-started
	b.Failure(errDown) // another call finds the part gone
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("call ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call in flight outlived the breaker's opening")
	}
}
