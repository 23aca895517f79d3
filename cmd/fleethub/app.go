package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/console"
	apicontacts "github.com/fleethub/fleethub/api/contacts"
	apidevices "github.com/fleethub/fleethub/api/devices"
	apiemergency "github.com/fleethub/fleethub/api/emergency"
	apifeed "github.com/fleethub/fleethub/api/feed"
	"github.com/fleethub/fleethub/api/geocoding"
	apigeofences "github.com/fleethub/fleethub/api/geofences"
	"github.com/fleethub/fleethub/api/health"
	"github.com/fleethub/fleethub/api/ingestapi"
	apikeys "github.com/fleethub/fleethub/api/keys"
	apioptimization "github.com/fleethub/fleethub/api/optimization"
	apirouting "github.com/fleethub/fleethub/api/routing"
	apistreams "github.com/fleethub/fleethub/api/streams"
	apitiles "github.com/fleethub/fleethub/api/tiles"
	apitrips "github.com/fleethub/fleethub/api/trips"
	apivehicles "github.com/fleethub/fleethub/api/vehicles"
	apiwebhooks "github.com/fleethub/fleethub/api/webhooks"
	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/fleet/digest"
	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/fleet/geofences"
	"github.com/fleethub/fleethub/fleet/geofences/crossings"
	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/fleet/optimization"
	"github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/embedlog"
	hubfeed "github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/hub/kafkabus"
	"github.com/fleethub/fleethub/hub/pipeline"
	"github.com/fleethub/fleethub/hub/publish"
	"github.com/fleethub/fleethub/hub/redislog"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/roadspeed"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/tiles"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
)

// app is one running node: every component wired together.
type app struct {
	node      string           // this process among the nodes of a deployment: the owner of its leases and claims
	links     *emergency.Links // signs incidents' share links with a secret every node shares
	cfg       *config
	log       *slog.Logger
	trips     *trips.Service
	speeds    *roadspeed.Shared // the observed road speeds shared through Redis; nil without --osm and --redis-url
	metrics   *prometheus.Registry
	vehicles  *vehicles.Service // vehicle profiles; Fleet answers the fleet of a vehicle
	intake    *telemetry.Service
	streams   *streams.Service
	reg       *streams.Registry
	streamLog hub.Log // the stream logs (embedded or Redis)
	// deferredLog is the embedded stream log when it defers its fsyncs
	// to the embedded bus's commits (set once, read by the bus's commit
	// loop)
	deferredLog atomic.Pointer[embedlog.Log]
	pipe        *pipeline.Pipeline
	ws          *ws.Server
	hooks       *webhook.Dispatcher
	fences      *crossings.Watcher
	store       store.Backend
	redis       *redis.Client
	bus         hub.Bus
	// busLog reads the bus's topics by offset (the feed); feed serves
	// it and the registered streams' event streams.
	busLog  hubfeed.Reader
	feed    *apifeed.Handlers
	keys    *keys.Service
	tokens  *tokens.Service // browser tokens (tokens.go)
	health  *health.Checker
	server  *api.Server
	addr    net.Addr
	limiter interface {
		api.Limiter
		keys.Revoker
	}

	closers []func() error
	wg      sync.WaitGroup
	cancel  context.CancelFunc
	errs    chan error

	// breakers guard Redis, PostgreSQL and Kafka (breakers.go); ready are
	// the dependencies /readyz requires.
	breakers *breakers
	ready    []health.Dependency

	// alerts sends escalation levels and expiries when they fall due;
	// outbox retries gateway notifications (nil without --notify-url).
	alerts    *emergency.Alerts
	optimizer *optimization.Service // its work rate is measured at start (Calibrate)
	outbox    *emergency.Outbox
	// digest sends the daily speeding summaries of devices on
	// alert_frequency daily_summary, once per cluster
	digest *digest.Summaries
}

// openStore opens the configured backend.
func openStore(ctx context.Context, c *config) (store.Backend, string, error) {
	return openStoreWith(ctx, c, nil)
}

// openStoreWith opens the configured backend, PostgreSQL behind a
// breaker of bs unless bs is nil.
func openStoreWith(ctx context.Context, c *config, bs *breakers) (store.Backend, string, error) {
	if c.DatabaseURL != "" {
		pc := postgres.Config{URL: c.DatabaseURL}
		if bs != nil {
			pc.Breaker = bs.config("postgresql")
		}
		s, err := postgres.Open(ctx, pc)
		if err != nil {
			// no typed nil in the interface: nothing is left to close
			return nil, "postgresql", fmt.Errorf("--database-url: %w", err)
		}
		return s, "postgresql", nil
	}
	s, err := sqlite.Open(ctx, sqlite.Config{Dir: c.Data})
	if err != nil {
		return nil, "sqlite", fmt.Errorf("--data %s: %w", c.Data, err)
	}
	return s, "sqlite", nil
}

// uploadHealth is the location upload path's state (trips.Service.Health),
// read once the node serves.
type uploadHealth struct{ a *app }

func (u uploadHealth) Health(ctx context.Context) string {
	if u.a.trips == nil {
		return health.Unhealthy
	}
	return u.a.trips.Health(ctx)
}

// newApp builds a node from cfg; start serves it.
func newApp(ctx context.Context, cfg *config, log *slog.Logger) (a *app, err error) {
	a = &app{node: nodeID(), cfg: cfg, log: log, errs: make(chan error, 8), breakers: newBreakers(log)}
	built := a // an error return sets a to nil; what was opened still closes
	defer func() {
		if err != nil {
			built.closeAll()
		}
	}()
	if err := cfg.checkSettings(); err != nil { // before anything opens
		return nil, err
	}
	tlsConf, err := serverTLS(cfg, log) // before anything opens: a startup error
	if err != nil {
		return nil, err
	}
	var storeName string
	if a.store, storeName, err = openStoreWith(ctx, cfg, a.breakers); err != nil {
		return nil, err
	}
	eng, err := a.openEngines()
	if err != nil {
		return nil, err
	}
	hasher, err := keyHasher(ctx, cfg, a.store)
	if err != nil {
		return nil, err
	}
	if a.links, a.tokens, err = signers(ctx, a.store, a.streamDelivery, log); err != nil {
		return nil, err
	}
	others := map[string]health.Dependency{"location_service": uploadHealth{a}}
	if err := a.openShared(others); err != nil {
		return nil, err
	}
	if err := a.openBus(ctx, others); err != nil {
		return nil, err
	}
	a.openServer(hasher, storeName, others, tlsConf)
	devs := devices.New(a.store)
	// the embedded store is this process's alone: every profile write
	// goes through a.vehicles
	if a.vehicles, err = vehicles.New(vehicles.Config{SoleWriter: cfg.DatabaseURL == ""}, a.store); err != nil {
		return nil, err
	}
	if err := a.vehicles.Load(ctx); err != nil {
		return nil, err
	}
	if cfg.ActiveTrips < 0 {
		return nil, fmt.Errorf("--active-trips must be positive (0: the default, %d), not %d", trips.DefaultActiveTrips, cfg.ActiveTrips)
	}
	var speeds trips.SpeedCounter
	switch {
	case eng.speeds != nil && a.redis != nil:
		a.speeds = roadspeed.NewShared(eng.speeds, a.redis, "", a.log)
		speeds = a.speeds
	case eng.speeds != nil:
		speeds = eng.speeds
	}
	var router trips.Router
	if eng.roads != nil {
		router = eng.roads
	}
	a.digest = digest.New(digest.Config{Node: a.node, Log: log}, a.store, publish.NewWithFleets(a.bus, a.vehicles))
	if a.trips, err = trips.New(trips.Config{DefaultSpeedLimitKmh: cfg.SpeedLimitKmh, Profiles: a.vehicles, Roads: eng.matcher, Speeds: speeds, Router: router,
		Trackers: cfg.ActiveTrips, MatchTrips: cfg.ActiveTrips, Summaries: a.digest, Now: cfg.Now}, a.store, publish.NewWithFleets(a.bus, a.vehicles), devs, log); err != nil {
		return nil, err
	}
	a.metrics.MustRegister(a.trips.Collectors()...)
	deliveries, ok := a.store.(store.Deliveries)
	if !ok {
		return nil, fmt.Errorf("the %s store keeps no webhook deliveries", storeName)
	}
	if err := a.openStreaming(ctx, deliveries, eng.addrs); err != nil {
		return nil, err
	}
	a.metrics.MustRegister(newLogCollector(map[string]any{"bus": a.bus, "streams": a.streamLog}))
	intake := telemetry.Config{Fleets: a.vehicles}
	if eng.matcher != nil {
		intake.Roads = eng.matcher
	}
	if a.intake, err = telemetry.New(intake, a.bus, log); err != nil {
		return nil, err
	}
	a.fences = crossings.New(crossings.Config{Fleets: a.vehicles, Refresh: cfg.GeofenceRefresh}, a.bus, a.store, log)
	a.routes(devs, deliveries, eng)
	return a, nil
}

// engines are the data-backed engines the flags name; nil when not given.
type engines struct {
	addrs   *geocode.Index
	archive *tiles.Archive
	roads   *routing.Graph
	matcher *mapmatch.Matcher // the trips' points onto the auto roads of roads
	speeds  *roadspeed.Table  // the speeds the trips were driven on those roads
}

// openEngines loads --addresses, --tiles and --osm.
func (a *app) openEngines() (engines, error) {
	var e engines
	var err error
	if a.cfg.Addresses != "" {
		if e.addrs, err = geocode.Open(geocode.Config{Files: strings.Split(a.cfg.Addresses, ","), Dir: a.cfg.Data, Logger: a.log}); err != nil {
			return e, fmt.Errorf("--addresses: %w", err)
		}
		a.log.Info("addresses loaded", "count", e.addrs.Len())
	}
	if a.cfg.Tiles != "" {
		if e.archive, err = tiles.Open(a.cfg.Tiles); err != nil {
			return e, fmt.Errorf("--tiles: %w", err)
		}
		a.closers = append(a.closers, e.archive.Close)
	}
	if a.cfg.OSM != "" {
		var costings []routing.Costing
		if costings, err = osmCostings(a.cfg.OSMCostings); err != nil { // refused at start too (checkSettings)
			return e, err
		}
		start := time.Now()
		if e.roads, err = routing.Load(a.cfg.OSM, routing.Options{CacheDir: filepath.Join(a.cfg.Data, "roads"), Costings: costings}); err != nil {
			return e, fmt.Errorf("--osm: %w", err)
		}
		a.log.Info("road graph loaded", "junctions", e.roads.Nodes(), "edges", e.roads.Edges(), "costings", a.cfg.OSMCostings, "took", time.Since(start).Round(time.Millisecond))
		e.matcher = mapmatch.New(e.roads, routing.Auto, mapmatch.Config{})
		e.speeds = roadspeed.New(roadspeed.Config{})
	}
	return e, nil
}

// openShared chooses where limits and revocations live: this node's
// memory, or Redis with the memory as its fallback. The Redis client sits
// behind a breaker: while Redis is down every user of the client answers
// from this node's memory at once, without a dial per request, and a
// second client of one connection probes for Redis's return.
func (a *app) openShared(others map[string]health.Dependency) error {
	local := ratelimit.NewMemory(nil)
	a.limiter = local
	if a.cfg.RedisURL == "" {
		others["cache"] = memoryCacheHealth{local}
		return nil
	}
	opt, err := redis.ParseURL(a.cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("--redis-url: %w", err)
	}
	// go-redis writes a line of its own per failed dial, so per request
	// while Redis is away; its lines go to the log at debug level (the
	// breaker logs each change of state once)
	redis.SetLogger(redisLogger{a.log})
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, 500*time.Millisecond, 500*time.Millisecond
	// a retry after a broken connection waits at most 64 ms and a failed
	// dial is tried twice 20 ms apart (go-redis's defaults: 512 ms, five
	// times 100 ms apart): the requests in flight when Redis goes away pay
	// that once, before the breaker opens
	opt.MaxRetryBackoff = 64 * time.Millisecond
	opt.DialerRetries, opt.DialerRetryTimeout = 2, 20*time.Millisecond
	popt := *opt
	popt.PoolSize, popt.MinIdleConns, popt.MaxRetries = 1, 0, -1
	prober := redis.NewClient(&popt)
	a.closers = append(a.closers, prober.Close)
	b := breaker.New(*a.breakers.config("redis"), func(ctx context.Context) error { return prober.Ping(ctx).Err() })
	a.closers = append(a.closers, b.Close)
	a.redis = redis.NewClient(opt)
	a.redis.AddHook(breaker.RedisHook(b))
	failover := ratelimit.NewFailover(ratelimit.NewRedis(a.redis, ""), local)
	a.limiter = failover
	others["redis"] = breakerHealth{b, health.Degraded}
	others["cache"] = redisCacheHealth{b, failover}
	return nil
}

// openBus opens Kafka with --kafka-brokers, else the embedded log.
func (a *app) openBus(ctx context.Context, others map[string]health.Dependency) error {
	if a.cfg.KafkaBrokers != "" {
		var brokers []string
		for _, b := range strings.Split(a.cfg.KafkaBrokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				brokers = append(brokers, b)
			}
		}
		kb, err := kafkabus.New(ctx, kafkabus.Config{Brokers: brokers, Logger: a.log}, []string{hub.TopicLocations, hub.TopicTelemetry, hub.TopicEvents})
		if err != nil {
			return fmt.Errorf("--kafka-brokers: %w", err)
		}
		bb := newBreakerBus(kb, a.breakers.config("kafka"))
		a.bus, a.busLog = bb, kb
		a.ready = append(a.ready, breakerHealth{bb.b, health.Unhealthy})
	} else {
		dir := filepath.Join(a.cfg.Data, "bus")
		// the stream logs append without an fsync each and are synced
		// before the consumers' offsets are written: what a machine's
		// crash takes from them the bus hands again (docs/architecture.md)
		eb, err := embedbus.Open(embedbus.Config{Dir: dir, Retention: a.cfg.LogRetention, MaxBytes: a.cfg.LogMaxBytes, Logger: a.log,
			BeforeCommit: func(ctx context.Context) error {
				if l := a.deferredLog.Load(); l != nil {
					return l.Sync(ctx)
				}
				return nil
			}})
		if err != nil {
			return fmt.Errorf("embedded bus in %s: %w", dir, err)
		}
		a.bus, a.busLog = eb, eb
	}
	if hr, ok := a.bus.(hub.HealthReporter); ok {
		others["bus"] = hr // the embedded bus and Kafka's both report
	}
	return nil
}

// openServer makes the keys service, the HTTP server, health and metrics.
func (a *app) openServer(hasher *apikey.Hasher, storeName string, others map[string]health.Dependency, tlsConf *tls.Config) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = reg
	a.keys = keys.New(keys.Config{}, a.store, hasher, a.limiter, a.log)
	a.server = api.New(api.Config{Addr: a.cfg.Addr, PlainAddr: a.cfg.PlainAddr, TLS: tlsConf, MaxBodyBytes: a.cfg.MaxBodyBytes, Version: version}, a.log, reg, a.keys, a.limiter)
	a.health = health.New(health.Config{Version: version, StoreName: storeName}, health.Deps{
		Store: a.store,
		Connections: func() (int, int) {
			st := a.store.Stats()
			return st.OpenConnections, st.InUse
		},
		Requests: a.server.Stats(),
		Trips:    activeTrips{a.store},
		Others:   others,
		Ready:    a.ready,
		Gatherer: reg,
	})
	a.breakers.health.Store(a.health)
	reg.MustRegister(a.breakers.collectors()...)
	reg.MustRegister(newStoreCollector(a.store))
}

// streamDelivery is how the stream id of the scope delivers (websocket
// or webhook), as the stream registry has it: what a browser token's
// streams are checked against. The registry is made after the tokens'
// service and before any request is served.
func (a *app) streamDelivery(ctx context.Context, sc store.Scope, id string) (string, error) {
	if a.reg == nil {
		return "", errors.New("stream registry not open")
	}
	e, err := a.reg.Get(ctx, sc.Org, sc.Env, id)
	if err != nil {
		return "", err
	}
	return e.Info.Delivery, nil
}

// openStreaming makes the stream registry and log, the webhook
// dispatcher, the pipeline and the websocket server.
func (a *app) openStreaming(ctx context.Context, deliveries store.Deliveries, namer *geocode.Index) error {
	cfg, log := a.cfg, a.log
	a.reg = streams.NewRegistry(streams.RegistryConfig{}, a.store, log)
	if a.redis != nil {
		a.reg.ShareCounters(streams.NewRedisCounters(a.redis, a.node))
		a.reg.ShareChanges(streams.NewRedisChanges(a.redis))
	}
	if err := a.reg.Load(ctx); err != nil {
		return fmt.Errorf("stream registry: %w", err)
	}
	// websocket connections are capped by the key's plan (docs/websocket.md)
	wcfg := ws.Config{Plans: ws.PlanFunc(func(ctx context.Context, org, env, keyID string) (string, error) {
		k, err := a.keys.Get(ctx, store.Scope{Org: org, Env: env}, keyID)
		return k.Plan, err
	})}
	wcfg.KeptHijackedConns = true // the API's server keeps hijacked connections (api/server.go)
	wcfg.WriteLinger = cfg.WSWriteLinger
	if wcfg.WriteLinger == 0 {
		wcfg.WriteLinger = -1 // off: ws.Config's zero is its default
	}
	// the embedded window: ten million ids in about 490 MiB, allocated as they come (filters/dedup)
	const windowSize, windowTTL = 10_000_000, time.Hour
	var window dedup.Window = dedup.NewCompact(windowSize, windowTTL)
	if a.redis != nil {
		rl := redislog.New(redislog.Config{}, a.redis, log)
		a.streamLog, a.closers = rl, append(a.closers, rl.Close)
		// while Redis is down this node's own window decides (docs/operations.md)
		window = dedup.NewFailover(dedup.NewRedis(a.redis, "fleethub:dedup:", time.Hour), dedup.NewLocal(0, time.Hour))
		wcfg.Acks = ws.NewRedisAcks(a.redis, 0)
		conns := ws.NewRedisConns(a.redis, 0, a.log)
		wcfg.Conns, a.closers = conns, append(a.closers, conns.Close)
	} else {
		dir := filepath.Join(cfg.Data, "streams")
		// on the embedded bus, whose commits wait for Sync (openBus)
		deferSync := cfg.KafkaBrokers == ""
		ml, err := embedlog.Open(embedlog.Config{Dir: dir, Retention: cfg.LogRetention, MaxBytes: cfg.LogMaxBytes, DeferSync: deferSync, Logger: log})
		if err != nil {
			return fmt.Errorf("stream log in %s: %w", dir, err)
		}
		if deferSync {
			a.deferredLog.Store(ml)
		}
		a.streamLog, a.closers = ml, append(a.closers, ml.Close)
		acks, err := ws.OpenFileAcks(filepath.Join(dir, "acks"), 0, a.log)
		if err != nil {
			return err
		}
		wcfg.Acks, a.closers = acks, append(a.closers, acks.Close)
	}
	a.streams = streams.NewService(a.reg, a.store, a.streamLog, a.streamOptions()...)
	if cfg.WSWriteLinger < 0 {
		return fmt.Errorf("--ws-write-linger must not be negative, not %s", cfg.WSWriteLinger)
	}
	if cfg.OrderWait < 0 {
		return fmt.Errorf("--order-wait must not be negative, not %s", cfg.OrderWait)
	}
	if cfg.WebhookConcurrency < 0 {
		return fmt.Errorf("--webhook-concurrency must be positive (0: the default, %d), not %d", webhook.DefaultConcurrency, cfg.WebhookConcurrency)
	}
	var err error
	if a.hooks, err = webhook.New(webhook.Config{Node: a.node, AllowPrivate: cfg.AllowPrivateWebhooks, Concurrency: cfg.WebhookConcurrency, RetryFor: cfg.WebhookRetryFor, Now: cfg.Now}, deliveries, a.reg, a.store, a.reg, log); err != nil {
		return err
	}
	var taken *dedup.Compact // the ids each deduplicating stream's log held at start (redislog keeps its own)
	if a.redis == nil {
		// rebuilt from the durable stream logs before the pipeline consumes
		taken = dedup.NewCompact(windowSize, windowTTL)
		wc := pipeline.WarmConfig{Registry: a.reg, Streams: a.store, Log: a.streamLog, Sink: a.hooks, TTL: windowTTL, Max: windowSize, Logger: log}
		if _, err := pipeline.Warm(ctx, taken, wc); err != nil {
			return err
		}
	}
	var n pipeline.Namer
	if namer != nil {
		n = namer
	}
	a.pipe = pipeline.New(pipeline.Config{OrderWait: cfg.OrderWait}, a.bus, a.reg, a.streamLog, window, pipeline.NewStoreEnricher(a.store, n, log), a.hooks, log)
	if taken != nil {
		a.pipe.KeepStreamIDs(taken)
	}
	if a.busLog != nil { // a connection may follow the organization's feed too
		wcfg.Feed = &ws.FeedSource{Feed: hubfeed.New(a.busLog), Query: apifeed.WebsocketQuery, Encode: apifeed.EncodeEntry}
	}
	a.ws = ws.New(wcfg, a.reg, a.streamLog, log) // the registry counts deliveries too
	return nil
}

// routes registers every area's handlers.
func (a *app) routes(devs *devices.Service, deliveries store.Deliveries, eng engines) {
	a.server.Handle(apikeys.New(a.keys).Routes()...)
	a.tokenRoutes()
	a.server.Handle(apidevices.New(devs).Routes()...)
	a.server.Handle(apigeofences.New(geofences.New(a.store)).Routes()...)
	a.server.Handle(apivehicles.New(a.vehicles).Routes()...)
	a.server.Handle(geocoding.New(eng.addrs).Routes()...)
	a.server.Handle(apitiles.New(eng.archive).Routes()...)
	a.server.Handle(apirouting.New(eng.roads, eng.matcher).Routes()...)
	ocfg := optimization.Config{WorkPerSecond: a.cfg.SolverWorkRate}
	switch {
	case a.speeds != nil:
		ocfg.Traffic = a.speeds // every node's observations, through Redis
	case eng.speeds != nil:
		ocfg.Traffic = eng.speeds
	}
	a.optimizer = optimization.New(ocfg, a.store, publish.NewWithFleets(a.bus, a.vehicles), eng.roads)
	a.server.Handle(apioptimization.New(a.optimizer).Routes()...)
	directory := contacts.New(a.store, nil)
	a.server.Handle(apicontacts.New(directory).Routes()...)
	var notifier emergency.Notifier
	if a.cfg.NotifyURL != "" {
		gw := &emergency.HTTPNotifier{URL: a.cfg.NotifyURL, Client: &http.Client{Timeout: 5 * time.Second}, Secrets: a.store}
		a.outbox = emergency.NewOutbox(emergency.OutboxConfig{Claims: emergency.Claims{Node: a.node, Log: a.log}}, a.store, gw)
		notifier = a.outbox
	}
	a.server.Handle(apiemergency.NewGateway(a.store, a.cfg.NotifyURL).Routes()...)
	a.server.Handle(apiemergency.New(emergency.NewIncidents(a.store, a.store, directory, notifier, publish.NewWithFleets(a.bus, a.vehicles), a.links, a.log).WithFleets(a.vehicles)).Routes()...)
	acfg := emergency.AlertsConfig{Claims: emergency.Claims{Node: a.node, Log: a.log}}
	if eng.addrs != nil {
		acfg.Places = eng.addrs
	}
	a.alerts = emergency.NewAlerts(acfg, a.store, a.store, directory, notifier, publish.NewWithFleets(a.bus, a.vehicles))
	a.server.Handle(apiemergency.NewAlerts(a.alerts).Routes()...)
	a.server.Handle(ingestapi.New(a.intake).Routes()...)
	wh := apiwebhooks.New(deliveries, a.reg, a.hooks)
	a.server.Handle(apistreams.New(a.streams, a.ws, wh).Routes()...)
	a.server.Handle(wh.Routes()...)
	var f *hubfeed.Feed
	if a.busLog != nil {
		f = hubfeed.New(a.busLog)
	}
	a.feed = apifeed.New(apifeed.Config{Heartbeat: a.cfg.SSEHeartbeat, Logger: a.log}, f, a.reg, a.streamLog)
	a.server.Handle(a.feed.Routes()...)
	a.server.Handle(apitrips.New(a.trips, a.limiter).Routes()...)
	a.server.Handle(a.health.Routes()...)
	a.server.Handle(a.openAPIRoute())
	a.server.Handle(console.New().Routes()...)
}

// start binds the address and runs every component in the background.
func (a *app) start(ctx context.Context) error {
	addr, err := a.server.Listen()
	if err != nil {
		return err
	}
	a.addr = addr
	ctx, a.cancel = context.WithCancel(ctx)
	a.goRun(func() error { return a.keys.Run(ctx) })
	a.goRun(func() error { return a.tokens.Run(ctx) })
	a.goRun(func() error { return a.reg.Run(ctx) })
	a.goRun(func() error { return a.runReaper(ctx) })
	a.goRun(func() error { return a.pipe.Run(ctx) })
	a.goRun(func() error { return a.hooks.Run(ctx) })
	a.goRun(func() error { return a.fences.Run(ctx) })
	a.goRun(func() error { return a.intake.Run(ctx) })
	a.goRun(func() error { return a.trips.RunRoads(ctx) })
	if a.speeds != nil {
		a.goRun(func() error { a.speeds.Run(ctx); return nil })
	}
	a.goRun(func() error { return a.alerts.Run(ctx) })
	a.goRun(func() error { return a.digest.Run(ctx) })
	if a.cfg.SolverWorkRate == 0 {
		a.goRun(func() error {
			a.optimizer.RunCalibration(ctx, func(measured float64, perSecond int64) {
				a.log.Info("route optimizer calibrated", "work_per_core_second", int64(measured), "work_per_limit_second", perSecond)
			})
			return nil
		})
	}
	if a.outbox != nil {
		a.goRun(func() error { return a.outbox.Run(ctx) })
	}
	a.goRun(a.server.Serve)
	return nil
}

func (a *app) goRun(f func() error) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := f(); err != nil {
			a.errs <- err
		}
	}()
}

// stop shuts down in two phases: stop taking requests and drain them,
// then stop background work, flush the bus and close the store.
func (a *app) stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.health.SetReady(false)
	var errs []error
	if err := a.ws.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("websocket shutdown: %w", err))
	}
	if a.feed != nil {
		if err := a.feed.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("event streams shutdown: %w", err))
		}
	}
	if err := a.server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	if a.cancel != nil {
		a.cancel()
	}
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, errors.New("shutdown: background work did not stop in time"))
	}
	errs = append(errs, a.closeAll())
	return errors.Join(errs...)
}

func (a *app) closeAll() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range a.closers {
		errs = append(errs, c())
	}
	if a.bus != nil {
		errs = append(errs, a.bus.Close(ctx))
	}
	if a.redis != nil {
		errs = append(errs, a.redis.Close())
	}
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	return errors.Join(errs...)
}

func (a *app) openAPIRoute() *api.Route {
	return &api.Route{Method: "GET", Path: "/v1/openapi.json", Tag: "meta", Summary: "This OpenAPI 3.1 document", Auth: api.AuthNone,
		Response: map[string]any{},
		Handler:  func(c *api.Ctx) error { return c.JSON(200, a.server.OpenAPI()) }}
}

// storeCollector exports store pool figures and probe latency.
type storeCollector struct {
	st      store.Backend
	open    *prometheus.Desc
	inUse   *prometheus.Desc
	latency *prometheus.Desc
}

func newStoreCollector(st store.Backend) *storeCollector {
	return &storeCollector{st: st,
		open:    prometheus.NewDesc("fleethub_store_open_connections", "Open store connections.", nil, nil),
		inUse:   prometheus.NewDesc("fleethub_store_in_use_connections", "Store connections in use.", nil, nil),
		latency: prometheus.NewDesc("fleethub_store_ping_seconds", "Store probe round trip at scrape time.", nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.open
	ch <- c.inUse
	ch <- c.latency
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.st.Stats()
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(s.OpenConnections))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(s.InUse))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := c.st.Ping(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(c.latency, prometheus.GaugeValue, time.Since(start).Seconds())
	}
}

type activeTrips struct{ st store.Trips }

func (a activeTrips) ActiveTripStats(ctx context.Context, sc health.Scope) (int, int, float64, error) {
	return a.st.ActiveTripStats(ctx, store.Scope{Org: sc.Org, Env: sc.Env}, time.Now())
}

// redisLogger puts go-redis's own lines in the log at debug level.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
