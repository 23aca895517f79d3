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
// about 7 s before it gives up. So the breaker watches the bus's health
// every busWatchEvery while closed and opens when the brokers do not
// answer, and the publishes in flight when it opens are cancelled and
// fail with breaker.ErrOpen (they were not acknowledged; a client's retry
// may write a message twice, as at-least-once allows).
type breakerBus struct {
	hub.Bus
	b *breaker.Breaker
}

// busWatchEvery is the breaker's probe interval while closed.
const busWatchEvery = 250 * time.Millisecond

// newBreakerBus guards bus with a breaker whose probe asks the brokers
// (Probe, uncached), else reads bus's health.
func newBreakerBus(bus hub.Bus, cfg *breaker.Config) *breakerBus {
	c := *cfg
	probe := func(context.Context) error { return nil }
	if p, ok := bus.(interface{ Probe(context.Context) error }); ok {
		c.Watch = busWatchEvery
		probe = p.Probe
	} else if hr, ok := bus.(hub.HealthReporter); ok {
		c.Watch = busWatchEvery
		probe = func(ctx context.Context) error {
			if st := hr.Health(ctx); st != health.Healthy {
				return fmt.Errorf("bus %s", st)
			}
			return nil
		}
	}
	return &breakerBus{Bus: bus, b: breaker.New(c, probe)}
}

func (bb *breakerBus) Publish(ctx context.Context, msgs ...hub.Message) error {
	if err := bb.b.Allow(); err != nil {
		return fmt.Errorf("bus: publish: %w", err)
	}
	live := bb.b.Live()
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
	return errors.Join(bb.b.Close(), bb.Bus.Close(ctx)) // the breaker's probe stops first
}
