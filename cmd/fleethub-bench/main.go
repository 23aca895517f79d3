// Command fleethub-bench runs Fleethub's end-to-end load generators
// against a running server, and an in-process Kafka-protocol broker for
// measuring `fleethub serve --kafka-brokers` without Kafka:
//
//	fleethub-bench health|ingest|fanout|sse|webhook|events|matrix|optimize|idle|memory|soak [flags]
//	fleethub-bench broker [--port N]
//	fleethub-bench <generator> -h   (that generator's flags only)
//
// While a generator runs, a progress line on stderr says each second what
// it did in that second (rate, p99, errors) and, with --pid of a server
// on this machine, the server's CPU and memory from /proc. The result is
// a table on stdout, or one JSON object with --json.
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
	"slices"
	"strings"
	"syscall"

	"github.com/fleethub/fleethub/bench"
)

const usageLine = "usage: fleethub-bench health|ingest|drive|fanout|sse|webhook|events|matrix|optimize|idle|memory|broker|soak [flags]"

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
	if !slices.Contains(modes, args[0]) {
		fmt.Fprintf(stderr, "fleethub-bench: unknown generator %q\n", args[0])
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	f, err := parseFlags(args[0], args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
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
	meter := &bench.Meter{}
	f.c.Meter = meter
	var res printer
	srv := watchServer(f.pid)
	if f.quiet || args[0] == "broker" {
		res, err = generate(ctx, args[0], f, stdout)
	} else {
		err = withProgress(ctx, stderr, meter, f.pid, func(ctx context.Context) (err error) {
			res, err = generate(ctx, args[0], f, stdout)
			return err
		})
	}
	if err != nil {
		fmt.Fprintln(stderr, "fleethub-bench:", err)
		return 1
	}
	if res != nil {
		if err := writeResult(stdout, args[0], srv.around(res), f.json); err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
	}
	return 0
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

// printer is a generator's result.
type printer interface{ Print(io.Writer) }

// generate runs generator name; the result is nil for the broker, which
// writes its addresses to stdout itself.
func generate(ctx context.Context, name string, f *flags, stdout io.Writer) (printer, error) {
	c := f.c
	srv := bench.ServerConfig{PID: f.pid, Insecure: f.insecure}
	c.Insecure = f.insecure
	switch name {
	case "health":
		return bench.Health(ctx, c)
	case "webhook":
		wc := bench.WebhookConfig{Config: c, Batch: f.batch, DeadNeighbour: f.dead, HealthyNeighbour: f.healthy, BatchSize: f.whBatch,
			Receivers: f.receivers, BadNeighbours: f.bad}
		if f.badKinds != "" {
			wc.Bad = strings.Split(f.badKinds, ",")
		}
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
		return bench.Idle(ctx, c.URL, c.Key, f.subs, c.Duration, srv)
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
		ec := bench.EventsConfig{URL: c.URL, Key: c.Key, Streams: f.streams, Filters: f.filters, Rules: f.rules, Rate: int(c.Rate), Duration: c.Duration,
			Batch: f.batch, Vehicles: f.vehicles, Conns: c.Conns, Meter: c.Meter}
		if f.latency {
			return bench.EventsLatency(ctx, ec)
		}
		return bench.Events(ctx, ec)
	case "fanout":
		return bench.Fanout(ctx, bench.FanoutConfig{URL: c.URL, Key: c.Key, SubscribeURL: f.subURL, Subscribers: f.subs, Streams: f.streams, Rate: f.eps, Duration: c.Duration, Batch: f.batch,
			BatchEvents: f.batchEvents, MaxWaitMS: f.maxWait, Senders: f.senders, Server: srv, Meter: c.Meter, Centrifugo: f.centrifugo})
	case "sse":
		return bench.SSE(ctx, bench.SSEConfig{URL: c.URL, Key: c.Key, Clients: f.clients, Rate: f.eps, Duration: c.Duration, Batch: f.batch, Server: srv, Meter: c.Meter})
	case "drive":
		if f.osm == "" {
			return nil, errors.New("drive needs --osm, the extract the server was started with")
		}
		return bench.Drive(ctx, bench.DriveConfig{Config: c, OSM: f.osm, Vehicles: f.vehicles, Every: f.every, Upload: f.upload, Noise: f.noise, Seed: uint64(f.seed), Stop: f.stop, Server: srv})
	case "ingest":
		if f.kind == "telemetry" {
			return bench.Telemetry(ctx, bench.IngestConfig{Config: c, Trips: f.trips, Batch: f.batch})
		}
		return bench.Ingest(ctx, bench.IngestConfig{Config: c, Trips: f.trips, Batch: f.batch})
	}
	return nil, fmt.Errorf("generator %q has no runner", name)
}
