package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/api/health"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/prometheus/client_golang/prometheus"
)

// breakers wires the circuit breakers of the outside parts (Redis,
// PostgreSQL, Kafka) to the metrics and to health: every change of state
// sets fleethub_breaker_state, counts in fleethub_breaker_changes_total
// and drops health's cached report, so /v1/trips/health and /readyz
// follow at the next request.
type breakers struct {
	log     *slog.Logger
	state   *prometheus.GaugeVec
	changes *prometheus.CounterVec
	health  atomic.Pointer[health.Checker] // set once health is made
}

func newBreakers(log *slog.Logger) *breakers {
	return &breakers{log: log,
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fleethub_breaker_state",
			Help: "Circuit breaker state of an outside part: 0 closed, 1 open, 2 half-open."}, []string{"part"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fleethub_breaker_changes_total",
			Help: "Circuit breaker changes of state, by part and the state entered."}, []string{"part", "state"}),
	}
}

// config is the breaker configuration of part.
func (bs *breakers) config(part string) *breaker.Config {
	bs.state.WithLabelValues(part).Set(0)
	return &breaker.Config{Name: part, Logger: bs.log, OnChange: func(_, to breaker.State) {
		bs.state.WithLabelValues(part).Set(float64(to))
		bs.changes.WithLabelValues(part, to.String()).Inc()
		if c := bs.health.Load(); c != nil {
			c.Invalidate()
		}
	}}
}

func (bs *breakers) collectors() []prometheus.Collector {
	return []prometheus.Collector{bs.state, bs.changes}
}

// breakerHealth reports a part by its breaker: healthy closed, degraded
// half-open, open whatever open means for the part (degraded for Redis,
// whose users fall back to memory; unhealthy for the bus).
type breakerHealth struct {
	b    *breaker.Breaker
	open string
}

func (h breakerHealth) Health(context.Context) string {
	switch h.b.State() {
	case breaker.Open:
		return h.open
	case breaker.HalfOpen:
		return health.Degraded
	}
	return health.Healthy
}

// breakerBus is a bus whose publishes go through a breaker: while it is
// open they fail at once with breaker.ErrOpen, which ingest answers with
// 503 and Retry-After. Consumers are not guarded: they retry by
// themselves and keep serving what the logs hold.
//
// A publish alone finds a lost broker late: kafka-go's writer retries for
// about 7 s before it gives up. So a watch asks the bus's health every
// busWatchEvery while the breaker is closed and opens it when the brokers
// do not answer, and the publishes in flight when the breaker opens are
// cancelled and fail with breaker.ErrOpen (they were not acknowledged; a
// client's retry may write a message twice, as at-least-once allows).
type breakerBus struct {
	hub.Bus
	b    *breaker.Breaker
	live atomic.Pointer[liveCtx] // cancelled when the breaker opens
	stop chan struct{}
	done chan struct{}
}

// busWatchEvery is the interval of the watch while the breaker is closed.
const busWatchEvery = 250 * time.Millisecond

// newBreakerBus guards bus with a breaker whose probe is bus's health.
func newBreakerBus(bus hub.Bus, cfg *breaker.Config) *breakerBus {
	bb := &breakerBus{Bus: bus, stop: make(chan struct{}), done: make(chan struct{})}
	bb.renew()
	probe := func(context.Context) error { return nil }
	hr, watch := bus.(hub.HealthReporter)
	if watch {
		probe = func(ctx context.Context) error {
			if st := hr.Health(ctx); st != health.Healthy {
				return fmt.Errorf("bus %s", st)
			}
			return nil
		}
	}
	c := *cfg
	onChange := c.OnChange
	c.OnChange = func(from, to breaker.State) {
		if to == breaker.Open {
			bb.cancelLive()
		} else {
			bb.renew()
		}
		if onChange != nil {
			onChange(from, to)
		}
	}
	bb.b = breaker.New(c, probe)
	if watch {
		go bb.watch(probe)
	} else {
		close(bb.done)
	}
	return bb
}

// liveCtx is a context cancelled when the breaker opens.
type liveCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// renew makes a new live context unless the current one is still live;
// called on changes of state, which the breaker serialises.
func (bb *breakerBus) renew() {
	if cur := bb.live.Load(); cur != nil && cur.ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	bb.live.Store(&liveCtx{ctx, cancel})
}

func (bb *breakerBus) cancelLive() { bb.live.Load().cancel() }

// watch probes the bus while the breaker is closed; a failed probe opens it.
func (bb *breakerBus) watch(probe breaker.Probe) {
	defer close(bb.done)
	t := time.NewTicker(busWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-bb.stop:
			return
		case <-t.C:
		}
		if bb.b.State() != breaker.Closed {
			continue // the breaker's own probe runs
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := probe(ctx)
		cancel()
		if err != nil {
			bb.b.Failure(fmt.Errorf("bus: watch: %w", err))
		}
	}
}

func (bb *breakerBus) Publish(ctx context.Context, msgs ...hub.Message) error {
	if err := bb.b.Allow(); err != nil {
		return fmt.Errorf("bus: publish: %w", err)
	}
	live := bb.live.Load().ctx
	pctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(live, cancel)
	err := bb.Bus.Publish(pctx, msgs...)
	stop()
	cancel()
	switch {
	case err == nil:
		bb.b.Success()
	case ctx.Err() == nil && live.Err() != nil:
		return fmt.Errorf("bus: publish: %w", breaker.ErrOpen)
	case ctx.Err() == nil && !errors.Is(err, hub.ErrClosed):
		bb.b.Failure(err)
	}
	return err
}

// Health is the breaker's state while it is not closed, else the bus's
// own report; a bus reporting itself unhealthy opens the breaker.
func (bb *breakerBus) Health(ctx context.Context) string {
	if st := (breakerHealth{bb.b, health.Unhealthy}).Health(ctx); st != health.Healthy {
		return st
	}
	hr, ok := bb.Bus.(hub.HealthReporter)
	if !ok {
		return health.Healthy
	}
	st := hr.Health(ctx)
	if st == health.Unhealthy {
		bb.b.Failure(errors.New("bus: health probe failed"))
	}
	return st
}

func (bb *breakerBus) Close(ctx context.Context) error {
	close(bb.stop)
	<-bb.done
	_ = bb.b.Close()
	return bb.Bus.Close(ctx)
}
