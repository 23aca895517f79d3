// Command fleethub-bench runs Fleethub's end-to-end load generators
// against a running server, and an in-process Kafka-protocol broker for
// measuring `fleethub serve --kafka-brokers` without Kafka:
//
//	fleethub-bench health|ingest|fanout|webhook|events|matrix|optimize|idle|memory|soak [flags]
//	fleethub-bench broker [--port N]
//
// It is its own binary so that the server never links the generators,
// kfake or the franz-go client (cmd/fleethub's TestServerDependencies).
// docs/performance.md records the figures with their commands.
//
// One run is one generator: the command calls it on the main goroutine
// and prints its result once it returns; the generator runs its senders,
// subscribers and receivers on goroutines of its own (package bench).
// SIGINT and SIGTERM cancel the generator's context.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/fleethub/fleethub/bench"
)

const usageLine = "usage: fleethub-bench health|ingest|fanout|webhook|events|matrix|optimize|idle|memory|broker|soak [flags]"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usageLine)
		fmt.Fprintln(stdout, "flags of one generator: fleethub-bench <generator> -h")
		return 0
	}
	f, err := parseFlags(args[0], args[1:], stderr)
	if err != nil {
		return 2
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		defer stop()
	}
	res, err := generate(ctx, args[0], f, stdout)
	if errors.Is(err, errUnknownGenerator) {
		fmt.Fprintf(stderr, "fleethub-bench: unknown generator %q\n", args[0])
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "fleethub-bench:", err)
		return 1
	}
	if res != nil {
		res.Print(stdout)
	}
	return 0
}

// flags are the command line of one generator.
type flags struct {
	c           bench.Config
	trips       int
	batch       int
	subs        int
	dead        bool
	healthy     bool
	isolation   int
	whBatch     int
	kind        string
	port        int
	batchEvents bool
	maxWait     int
	subURL      string
	eps         int
	events      int
	size        int
	cpuProfile  string
	vrpDir      string
	vrpMatch    string
	timeLimit   float64
	seed        int64

	fleethub    string
	redisURL    string
	databaseURL string
	soakDir     string
	redisServer string
	pointsRate  int
	telRate     int
	receiver    time.Duration
	durationSet bool
	tripsSet    bool

	streams  int
	filters  string
	rules    string
	vehicles int
	latency  bool
}

// parseFlags reads the flags of generator name; the flag set has written
// any error (or the help) to stderr.
func parseFlags(name string, args []string, stderr io.Writer) (*flags, error) {
	fs := flag.NewFlagSet("fleethub-bench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{}
	fs.StringVar(&f.c.URL, "url", "http://127.0.0.1:8080", "server address")
	fs.StringVar(&f.c.Key, "key", os.Getenv("FLEETHUB_BENCH_KEY"), "API key (or FLEETHUB_BENCH_KEY)")
	fs.DurationVar(&f.c.Duration, "duration", 10*time.Second, "run time")
	fs.IntVar(&f.c.Conns, "conns", 64, "concurrent connections")
	fs.Float64Var(&f.c.Rate, "rate", 0, "requests per second in total (0: as fast as possible); events: events per second")
	fs.IntVar(&f.trips, "trips", 256, "ingest: trips in parallel")
	fs.IntVar(&f.batch, "batch", 1000, "ingest: points per batch; fanout: events per ingest request (default 50 there)")
	fs.IntVar(&f.subs, "subscribers", 100, "fanout: websocket subscribers; idle: connections; memory: streams")
	fs.BoolVar(&f.dead, "dead-neighbour", false, "webhook: add a stream whose receiver never answers")
	fs.BoolVar(&f.healthy, "healthy-neighbour", false, "webhook: add a stream whose receiver answers at once")
	fs.IntVar(&f.isolation, "isolation", 0, "webhook: run this many rounds of two phases of --duration each, alone then beside a dead neighbour, in one server process, and compare")
	fs.IntVar(&f.whBatch, "batch-size", 0, "webhook: batch_events size (deliveries carry arrays)")
	fs.StringVar(&f.kind, "kind", "locations", "ingest: locations (POST /v1/locations/batch) or telemetry (POST /v1/telemetry; --batch at most 1000)")
	fs.IntVar(&f.port, "port", 0, "broker: listen port (0: any)")
	fs.BoolVar(&f.batchEvents, "batch-events", false, "fanout: start the stream with batch_events")
	fs.IntVar(&f.maxWait, "max-wait-ms", 20, "fanout: max_wait_time of batch_events, milliseconds")
	fs.StringVar(&f.subURL, "subscribe-url", "", "fanout: node the websocket clients connect to (default --url)")
	fs.IntVar(&f.eps, "events-per-sec", 1000, "fanout: events ingested per second")
	fs.IntVar(&f.events, "events", 20000, "memory: events ingested (every stream matches each)")
	fs.IntVar(&f.size, "size", 2600, "memory: bytes of each event")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's own CPU profile to this file")
	fs.StringVar(&f.vrpDir, "vrp", "", "optimize: solve the instances of this directory (Solomon or Gehring-Homberger *.txt, CVRPLIB *.vrp, with bks.csv) one by one, re-check each plan and compare it with the best known, instead of load")
	fs.StringVar(&f.vrpMatch, "instances", "", "optimize --vrp: a glob on instance names, e.g. 'R1*' (default every one)")
	fs.Float64Var(&f.timeLimit, "time-limit", 2, "optimize --vrp: options.time_limit_seconds of each instance")
	fs.Int64Var(&f.seed, "seed", 0, "optimize --vrp: options.seed")
	fs.StringVar(&f.fleethub, "fleethub", "fleethub", "soak: the fleethub binary the nodes run")
	fs.StringVar(&f.redisServer, "redis-server", "", "soak: a redis-server binary: run a Redis of the soak's own (append-only file, synced) and SIGKILL and restart it, instead of cutting --redis-url's connections")
	fs.StringVar(&f.redisURL, "redis-url", os.Getenv("FLEETHUB_TEST_REDIS_URL"), "soak: Redis the nodes share (or FLEETHUB_TEST_REDIS_URL); reached through a proxy the soak cuts")
	fs.StringVar(&f.databaseURL, "database-url", os.Getenv("FLEETHUB_TEST_DATABASE_URL"), "soak: PostgreSQL server the soak makes a schema in (or FLEETHUB_TEST_DATABASE_URL); reached through a proxy the soak hangs")
	fs.IntVar(&f.pointsRate, "points-rate", 20000, "soak: location points a second (--rate is events a second there, default 2000; --trips vehicles on trips, default 2000)")
	fs.IntVar(&f.telRate, "telemetry-rate", 1000, "soak: telemetry messages a second")
	fs.DurationVar(&f.receiver, "receiver-down", 5*time.Minute, "soak: how long the webhook receiver is down (at most 3/4 of a phase)")
	fs.IntVar(&f.streams, "streams", 100, "events: events streams started")
	fs.StringVar(&f.filters, "filters", "mix", "events: mix (9 in 10 streams follow a group of vehicles, the rest a category each: 3 of 100 streams match each event) or all (every stream matches every event)")
	fs.StringVar(&f.rules, "rules", "none", "events: processing rules of every stream (with --latency, of stream A): none, or a comma list of deduplication (dedup) and event_ordering (ordering)")
	fs.IntVar(&f.vehicles, "vehicles", 1000, "events: vehicles (each sender owns some, their sequence numbers in order)")
	fs.BoolVar(&f.latency, "latency", false, "events: instead of throughput, two streams of the same filter, A with --rules and B without, each followed over websocket: per event, arrival on A minus arrival on B")
	fs.StringVar(&f.soakDir, "dir", "", "soak: keep the nodes' and the broker's logs and data here (default: a temporary directory, removed); broker: keep the broker's log here across restarts")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	fs.Visit(func(fl *flag.Flag) {
		f.durationSet = f.durationSet || fl.Name == "duration"
		f.tripsSet = f.tripsSet || fl.Name == "trips"
	})
	return f, nil
}

// startCPUProfile writes the generator's CPU profile to path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	file, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		file.Close()
	}, nil
}

var errUnknownGenerator = errors.New("unknown generator")

// printer is a generator's result.
type printer interface{ Print(io.Writer) }

// generate runs generator name; the result is nil for the broker, which
// writes its addresses to stdout itself.
func generate(ctx context.Context, name string, f *flags, stdout io.Writer) (printer, error) {
	c := f.c
	switch name {
	case "health":
		return bench.Health(ctx, c)
	case "webhook":
		b := f.batch
		if b == 1000 {
			b = 100
		}
		wc := bench.WebhookConfig{Config: c, Batch: b, DeadNeighbour: f.dead, HealthyNeighbour: f.healthy, BatchSize: f.whBatch}
		if f.isolation > 0 {
			return bench.WebhookIsolation(ctx, wc, f.isolation)
		}
		return bench.Webhook(ctx, wc)
	case "matrix":
		return bench.Matrix(ctx, c, 39.96, -83.0)
	case "optimize":
		if f.vrpDir != "" {
			return bench.OptimizeVRP(ctx, bench.VRPConfig{URL: c.URL, Key: c.Key, Dir: f.vrpDir, Match: f.vrpMatch, TimeLimit: f.timeLimit, Seed: f.seed})
		}
		return bench.Optimize(ctx, c)
	case "idle":
		return bench.Idle(ctx, c.URL, c.Key, f.subs, c.Duration)
	case "memory":
		return bench.Memory(ctx, bench.MemoryConfig{URL: c.URL, Key: c.Key, Streams: f.subs, Events: f.events, Size: f.size})
	case "broker":
		return nil, bench.Broker(ctx, f.port, f.soakDir, stdout)
	case "soak":
		sc := bench.SoakConfig{Fleethub: f.fleethub, RedisURL: f.redisURL, RedisServer: f.redisServer, DatabaseURL: f.databaseURL, Rate: int(c.Rate), PointsRate: f.pointsRate,
			TelemetryRate: f.telRate, ReceiverDown: f.receiver, Dir: f.soakDir, Log: os.Stderr}
		if f.durationSet {
			sc.Duration = c.Duration
		}
		if f.tripsSet {
			sc.Trips = f.trips
		}
		return bench.Soak(ctx, sc)
	case "events":
		b := f.batch
		if b == 1000 {
			b = 500
		}
		conns := c.Conns
		if conns == 64 {
			conns = 8
		}
		ec := bench.EventsConfig{URL: c.URL, Key: c.Key, Streams: f.streams, Filters: f.filters, Rules: f.rules, Rate: int(c.Rate), Duration: c.Duration,
			Batch: b, Vehicles: f.vehicles, Conns: conns}
		if f.latency {
			return bench.EventsLatency(ctx, ec)
		}
		return bench.Events(ctx, ec)
	case "fanout":
		b := f.batch
		if b == 1000 {
			b = 50
		}
		return bench.Fanout(ctx, bench.FanoutConfig{URL: c.URL, Key: c.Key, SubscribeURL: f.subURL, Subscribers: f.subs, Rate: f.eps, Duration: c.Duration, Batch: b,
			BatchEvents: f.batchEvents, MaxWaitMS: f.maxWait})
	case "ingest":
		if f.kind == "telemetry" {
			return bench.Telemetry(ctx, bench.IngestConfig{Config: c, Trips: f.trips, Batch: f.batch})
		}
		return bench.Ingest(ctx, bench.IngestConfig{Config: c, Trips: f.trips, Batch: f.batch})
	}
	return nil, errUnknownGenerator
}
