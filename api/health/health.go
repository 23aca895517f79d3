// Package health serves GET /v1/trips/health, /healthz, /readyz and
// /metrics.
//
// The trip-service health answer is computed at most once per CacheFor
// (10 s) and served from a cached encoding in between. Status is the worst
// of the threshold table of the interface: store probe time, API average
// latency over the last minute, error rate over the last minute and store
// connections in use; a degraded dependency (Redis failing over to local
// limits, the bus) makes the whole degraded at least. Invalidate drops
// the cached answer, so that a dependency changing state (a circuit
// breaker opening or closing) shows at the next request.
//
// /readyz answers 503 while the server shuts down, while the store does
// not answer and while any of Deps.Ready reports unhealthy (the bus
// cannot take writes): a load balancer then sends the node no traffic.
//
// Active trip figures are scoped to the caller: a key holding
// AdminPermission sees every organization's, any other key its own
// organization and environment's only. They are cached per scope for
// TripsRefresh (30 s), at most maxTripScopes scopes at a time.
//
// A Checker is safe for concurrent use: the cached report and the
// per-scope trip figures are guarded by one mutex, which is not held
// while a report or a scope's figures are computed (two requests that
// find the cache stale may both compute; the later one's result stays),
// and readiness is an atomic flag.
package health

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Service identifier reported by health.
const Service = "fleethub-trip-service"

// Status values.
const (
	Healthy   = "healthy"
	Degraded  = "degraded"
	Unhealthy = "unhealthy"
)

// Store is the store as health sees it.
type Store interface {
	Ping(ctx context.Context) error
}

// Dependency reports one dependency's status.
type Dependency interface {
	// Health returns healthy, degraded or unhealthy.
	Health(ctx context.Context) string
}

// AdminPermission is the permission whose keys see cross-organization
// active trip figures. There is no separate admin permission: "all" is
// the one that means administration.
const AdminPermission = "all"

// maxTripScopes bounds the per-scope active trip cache; past it, expired
// entries are dropped, and if none are, the whole cache.
const maxTripScopes = 4096

// Scope limits active trip figures to one organization and environment.
// The zero Scope means every organization.
type Scope struct {
	Org, Env string
}

// ActiveTrips counts active trips in a scope.
type ActiveTrips interface {
	ActiveTripStats(ctx context.Context, sc Scope) (total, orgs int, avgMinutes float64, err error)
}

// Config of the health service.
type Config struct {
	Version      string
	StoreName    string // sqlite or postgresql
	CacheFor     time.Duration
	TripsRefresh time.Duration
}

// Deps are what health probes.
type Deps struct {
	Store       Store
	Connections func() (open, inUse int)
	Requests    *api.Stats
	Trips       ActiveTrips           // may be nil
	Others      map[string]Dependency // cache, bus, location_service, ...
	// Ready are the dependencies without which the node takes no
	// traffic: /readyz answers 503 while one reports unhealthy. Each
	// must answer at once (a breaker's state, not a probe).
	Ready    []Dependency
	Gatherer prometheus.Gatherer
}

// Checker computes and caches the health answer.
type Checker struct {
	cfg     Config
	deps    Deps
	started time.Time
	now     func() time.Time
	ready   atomic.Bool

	mu    sync.Mutex // guards the cache fields
	rep   Report     // without ActiveTrips
	at    time.Time  // when rep was computed; zero: never
	trips map[Scope]tripsEntry
}

// New makes a Checker.
func New(cfg Config, deps Deps) *Checker {
	if cfg.CacheFor == 0 {
		cfg.CacheFor = 10 * time.Second
	}
	if cfg.TripsRefresh == 0 {
		cfg.TripsRefresh = 30 * time.Second
	}
	c := &Checker{cfg: cfg, deps: deps, started: time.Now(), now: time.Now, trips: map[Scope]tripsEntry{}}
	c.ready.Store(true)
	return c
}

// Invalidate drops the cached report: the next request computes a fresh
// one.
func (c *Checker) Invalidate() {
	c.mu.Lock()
	c.at = time.Time{}
	c.mu.Unlock()
}

// SetReady flips readiness (false while shutting down).
func (c *Checker) SetReady(v bool) { c.ready.Store(v) }

// ScopeOf is the active trip scope a caller may see: every organization
// for a key holding AdminPermission, its own organization and environment
// otherwise.
func ScopeOf(p *api.Principal) Scope {
	if p.Has(AdminPermission) {
		return Scope{}
	}
	return Scope{Org: p.Org, Env: p.Env}
}

// Compute builds a fresh report with the active trips of sc.
func (c *Checker) Compute(ctx context.Context, sc Scope) Report {
	r := c.compute(ctx)
	r.ActiveTrips = c.activeTrips(ctx, sc, c.now())
	return r
}

// cached returns the encoded report for sc: the report recomputed after
// CacheFor, its active trips those of sc, refreshed after TripsRefresh.
func (c *Checker) cached(ctx context.Context, sc Scope) ([]byte, error) {
	now := c.now()
	c.mu.Lock()
	rep, fresh := c.rep, !c.at.IsZero() && now.Sub(c.at) < c.cfg.CacheFor
	c.mu.Unlock()
	if !fresh {
		rep = c.compute(ctx)
		c.mu.Lock()
		c.rep, c.at = rep, now
		c.mu.Unlock()
	}
	rep.ActiveTrips = c.activeTrips(ctx, sc, now)
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Live is the /healthz answer; Ready the /readyz one.
type Live struct {
	Status string `json:"status" enum:"ok,unavailable"`
}

// Routes returns the health routes.
func (c *Checker) Routes() []*api.Route {
	metrics := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(c.deps.Gatherer, promhttp.HandlerOpts{}))
	return []*api.Route{
		{Method: "GET", Path: "/v1/trips/health", Tag: "health", Summary: "Trip service health (cached 10 s)", Response: Report{},
			Handler: func(x *api.Ctx) error {
				b, err := c.cached(x.Context(), ScopeOf(x.Principal))
				if err != nil {
					return api.Internal(err)
				}
				x.SetContentType("application/json")
				x.SetBody(b)
				return nil
			}},
		{Method: "GET", Path: "/healthz", Tag: "health", Summary: "Liveness", Auth: api.AuthNone, Response: Live{},
			Handler: func(x *api.Ctx) error { return x.JSON(200, Live{Status: "ok"}) }},
		{Method: "GET", Path: "/readyz", Tag: "health", Summary: "Readiness: the store answers, the bus takes writes and the server is not shutting down", Auth: api.AuthNone,
			Response: Live{}, Errors: []int{503},
			Handler: func(x *api.Ctx) error {
				ctx, cancel := context.WithTimeout(x.Context(), 2*time.Second)
				defer cancel()
				if !c.ready.Load() || !c.depsReady(ctx) || c.deps.Store.Ping(ctx) != nil {
					return x.JSON(503, Live{Status: "unavailable"})
				}
				return x.JSON(200, Live{Status: "ok"})
			}},
		{Method: "GET", Path: "/metrics", Tag: "health", Summary: "Prometheus metrics", Auth: api.AuthNone, Raw: "text/plain",
			Handler: func(x *api.Ctx) error { metrics(x.RequestCtx); return nil }},
	}
}
