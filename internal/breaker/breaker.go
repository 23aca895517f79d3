// Package breaker is a circuit breaker for one outside part (Redis,
// PostgreSQL, Kafka): after Config.Failures failures in a row it opens and
// every call fails at once with ErrOpen, without touching the part, while
// a background probe asks the part every Config.ProbeEvery whether it is
// back. A probe that succeeds half-opens the breaker: calls go through
// again, and the next success (a call's or a probe's) closes it; a failure
// opens it again.
//
//	closed ──Failures in a row──▶ open ──probe ok──▶ half-open ──success──▶ closed
//	                                ▲                     │
//	                                └──────failure────────┘
//
// Every change of state calls Config.OnChange (for a metric) and writes
// one log line; nothing is logged per call. The hot path is one atomic
// load while closed.
//
// A call alone may find a lost part late: a client that retries on its
// own (kafka-go's writer, about 7 s) or a part that stops answering
// without closing its connections (a stopped process; the call waits for
// its own timeout). With Config.Watch the probe also runs every Watch
// while the breaker is closed, and a failed probe opens it; and Live is a
// context that ends when the breaker opens, so a call that derives its
// context from it is cancelled then instead of waiting out its own
// timeout.
//
// Concurrency: a Breaker is safe for concurrent use. The state and the
// count of failures are atomics; a change of state is made under a mutex,
// and OnChange is called in the order of the changes, one call at a time,
// from the goroutine that made the change (a caller's, the probe's or the
// watch's). While the breaker is not closed one probe goroutine runs;
// with Watch one more runs until Close, which stops both and waits for
// them. RedisHook is safe for concurrent use as its breaker is.
package breaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// State is a breaker's state.
type State int32

// States.
const (
	Closed State = iota
	Open
	HalfOpen
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// ErrOpen is returned instead of calling a part whose breaker is open.
var ErrOpen = errors.New("breaker: open")

// Defaults applied by New to zero Config fields.
const (
	DefaultFailures     = 1
	DefaultProbeEvery   = 250 * time.Millisecond
	DefaultProbeTimeout = time.Second
)

// Clock is the time a breaker reads; Real by default.
type Clock interface {
	Now() time.Time
	// After is time.After.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Real is the wall clock.
var Real Clock = realClock{}

// Probe asks the part whether it answers; nil means it does.
type Probe func(ctx context.Context) error

// Config of a Breaker.
type Config struct {
	Name         string        // the part: redis, postgresql, kafka
	Failures     int           // failures in a row that open the breaker (default 1)
	ProbeEvery   time.Duration // probe interval while not closed (default 250 ms)
	ProbeTimeout time.Duration // bound on one probe (default 1 s)
	// Watch, when positive, is the probe interval while closed: a probe
	// that fails then counts as a failure. Zero: no probe while closed.
	Watch  time.Duration
	Clock  Clock
	Logger *slog.Logger
	// OnChange is called after every change of state, outside the lock,
	// in the order of the changes.
	OnChange func(from, to State)
}

// Breaker guards calls to one part. Its methods are safe for concurrent use.
type Breaker struct {
	cfg   Config
	probe Probe

	state atomic.Int32
	fails atomic.Int32         // failures in a row while closed
	live  atomic.Pointer[live] // ends when the breaker opens; renewed (under mu) when it leaves open

	mu       sync.Mutex // guards since, lastErr, probing, closed; serialises changes
	since    time.Time  // when the current state began
	lastErr  error      // the failure that last opened the breaker
	probing  bool       // a probe goroutine runs
	closed   bool       // Close was called
	stop     chan struct{}
	wg       sync.WaitGroup
	changeMu sync.Mutex // keeps OnChange calls in order
}

// New makes a closed Breaker over a part that probe asks.
func New(cfg Config, probe Probe) *Breaker {
	if cfg.Failures <= 0 {
		cfg.Failures = DefaultFailures
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = DefaultProbeEvery
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = DefaultProbeTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = Real
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Breaker{cfg: cfg, probe: probe, stop: make(chan struct{})}
	b.since = cfg.Clock.Now()
	b.live.Store(newLive())
	if cfg.Watch > 0 {
		b.wg.Add(1)
		go b.watchLoop()
	}
	return b
}

// live is a context with its cancel.
type live struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func newLive() *live {
	ctx, cancel := context.WithCancel(context.Background())
	return &live{ctx, cancel}
}

// Live is a context that ends when the breaker next opens (at once if it
// is open now). A call that must not outlast the part derives from it,
// e.g. with context.AfterFunc(b.Live(), cancel).
func (b *Breaker) Live() context.Context { return b.live.Load().ctx }

// State is the current state.
func (b *Breaker) State() State { return State(b.state.Load()) }

// Err is the failure that last opened the breaker; nil while closed.
func (b *Breaker) Err() error {
	if b.State() == Closed {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastErr
}

// Allow returns ErrOpen while the breaker is open, else nil: the caller
// may call the part and must then report Success or Failure.
func (b *Breaker) Allow() error {
	if State(b.state.Load()) == Open {
		return ErrOpen
	}
	return nil
}

// Success records a call the part answered.
func (b *Breaker) Success() {
	switch State(b.state.Load()) {
	case Closed:
		if b.fails.Load() != 0 {
			b.fails.Store(0)
		}
	case HalfOpen:
		b.move(HalfOpen, Closed, nil)
	}
}

// Failure records a call the part did not answer (a dial error, a
// timeout): not an answer the part gave, such as "not found".
func (b *Breaker) Failure(err error) {
	switch State(b.state.Load()) {
	case Closed:
		if int(b.fails.Add(1)) >= b.cfg.Failures {
			b.move(Closed, Open, err)
		}
	case HalfOpen:
		b.move(HalfOpen, Open, err)
	}
}

// Do calls f unless the breaker is open, and records its outcome: a
// failure when failed(err) is true. With a nil failed every error counts.
func (b *Breaker) Do(ctx context.Context, f func(context.Context) error, failed func(error) bool) error {
	if err := b.Allow(); err != nil {
		return err
	}
	err := f(ctx)
	if err != nil && (failed == nil || failed(err)) {
		b.Failure(err)
	} else {
		b.Success()
	}
	return err
}

// move changes the state from→to if it is still from; a move into Open
// starts the probe goroutine unless one runs.
func (b *Breaker) move(from, to State, err error) {
	b.mu.Lock()
	if b.closed || !b.state.CompareAndSwap(int32(from), int32(to)) {
		b.mu.Unlock()
		return
	}
	now := b.cfg.Clock.Now()
	was := now.Sub(b.since)
	b.since = now
	b.fails.Store(0)
	switch l := b.live.Load(); {
	case to == Open:
		l.cancel()
	case l.ctx.Err() != nil:
		b.live.Store(newLive())
	}
	if to == Open {
		b.lastErr = err
		if !b.probing {
			b.probing = true
			b.wg.Add(1)
			go b.probeLoop()
		}
	}
	b.changeMu.Lock() // taken before mu is released: changes are reported in order
	b.mu.Unlock()
	defer b.changeMu.Unlock()
	switch to {
	case Open:
		b.cfg.Logger.Warn("breaker opened: calls fail at once until the part answers again", "part", b.cfg.Name, "from", from.String(), "err", err)
	case HalfOpen:
		b.cfg.Logger.Info("breaker half-open: the part answered a probe", "part", b.cfg.Name, "open_for", was.Round(time.Millisecond))
	case Closed:
		b.cfg.Logger.Info("breaker closed: the part is back", "part", b.cfg.Name, "after", was.Round(time.Millisecond))
	}
	if b.cfg.OnChange != nil {
		b.cfg.OnChange(from, to)
	}
}

// probeLoop probes every ProbeEvery until the breaker closes or Close.
func (b *Breaker) probeLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.stop:
			return
		case <-b.cfg.Clock.After(b.cfg.ProbeEvery):
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ProbeTimeout)
		err := b.probe(ctx)
		cancel()
		switch st := b.State(); {
		case err != nil && st == HalfOpen:
			b.move(HalfOpen, Open, err)
		case err == nil && st == Open:
			b.move(Open, HalfOpen, nil)
		case err == nil && st == HalfOpen:
			b.move(HalfOpen, Closed, nil)
		}
		b.mu.Lock()
		if b.State() == Closed || b.closed {
			b.probing = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// watchLoop probes every Watch while the breaker is closed; a failed
// probe counts as a failure. While it is not closed the probe loop runs.
func (b *Breaker) watchLoop() {
	defer b.wg.Done()
	for {
		select {
		case <-b.stop:
			return
		case <-b.cfg.Clock.After(b.cfg.Watch):
		}
		if b.State() != Closed {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ProbeTimeout)
		err := b.probe(ctx)
		cancel()
		if err != nil {
			b.Failure(fmt.Errorf("watch: %w", err))
		}
	}
}

// Close stops the probe and waits for it; the state no longer changes.
func (b *Breaker) Close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.stop)
	}
	b.mu.Unlock()
	b.wg.Wait()
	return nil
}
