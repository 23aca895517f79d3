package main

import (
	"context"

	"github.com/fleethub/fleethub/api/health"
	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// The health report's "cache" is where limits and revocations live: Redis
// with --redis-url (this node's memory standing in while Redis is away),
// else this node's memory.

// probeKey is the limiter key of the cache probe; no API key hashes to
// it.
const probeKey = "\x00health-probe"

// memoryCacheHealth reports the limiter in this node's memory by a probe
// through it: unhealthy when the limiter answers an error. Nothing outside
// the process can break it.
type memoryCacheHealth struct{ m *ratelimit.Memory }

func (h memoryCacheHealth) Health(ctx context.Context) string {
	if _, err := h.m.Allow(ctx, probeKey, ratelimit.Limit{Rate: 1 << 20}); err != nil {
		return health.Unhealthy
	}
	return health.Healthy
}

// redisCacheHealth reports the limits kept in Redis: degraded while Redis's
// breaker is not closed, or while the limiter answers from this node's
// memory after a call to Redis failed (until one succeeds again).
type redisCacheHealth struct {
	b *breaker.Breaker
	f *ratelimit.Failover
}

func (h redisCacheHealth) Health(ctx context.Context) string {
	if st := (breakerHealth{h.b, health.Degraded}).Health(ctx); st != health.Healthy {
		return st
	}
	if h.f.InFault() {
		return health.Degraded
	}
	return health.Healthy
}
