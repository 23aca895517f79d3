// Command fleethub-bench runs Fleethub's end-to-end load generators
// against a running server, and an in-process Kafka-protocol broker for
// measuring `fleethub serve --kafka-brokers` without Kafka:
//
//	fleethub-bench health|ingest|fanout|webhook|matrix|optimize|idle|memory [flags]
//	fleethub-bench broker [--port N]
//
// It is its own binary so that the server never links the generators,
// kfake or the franz-go client (cmd/fleethub's TestServerDependencies).
// docs/performance.md records the figures with their commands.
package main

import (
	"context"
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

const usageLine = "usage: fleethub-bench health|ingest|fanout|webhook|matrix|optimize|idle|memory|broker [flags]"

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
	fs := flag.NewFlagSet("fleethub-bench "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c bench.Config
	fs.StringVar(&c.URL, "url", "http://127.0.0.1:8080", "server address")
	fs.StringVar(&c.Key, "key", os.Getenv("FLEETHUB_BENCH_KEY"), "API key (or FLEETHUB_BENCH_KEY)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "run time")
	fs.IntVar(&c.Conns, "conns", 64, "concurrent connections")
	fs.Float64Var(&c.Rate, "rate", 0, "requests per second in total (0: as fast as possible)")
	trips := fs.Int("trips", 256, "ingest: trips in parallel")
	batch := fs.Int("batch", 1000, "ingest: points per batch; fanout: events per ingest request (default 50 there)")
	subs := fs.Int("subscribers", 100, "fanout: websocket subscribers; idle: connections; memory: streams")
	dead := fs.Bool("dead-neighbour", false, "webhook: add a stream whose receiver never answers")
	healthy := fs.Bool("healthy-neighbour", false, "webhook: add a stream whose receiver answers at once")
	isolation := fs.Int("isolation", 0, "webhook: run this many rounds of two phases of --duration each, alone then beside a dead neighbour, in one server process, and compare")
	whBatch := fs.Int("batch-size", 0, "webhook: batch_events size (deliveries carry arrays)")
	kind := fs.String("kind", "locations", "ingest: locations (POST /v1/locations/batch) or telemetry (POST /v1/telemetry; --batch at most 1000)")
	port := fs.Int("port", 0, "broker: listen port (0: any)")
	batchEvents := fs.Bool("batch-events", false, "fanout: start the stream with batch_events")
	maxWait := fs.Int("max-wait-ms", 20, "fanout: max_wait_time of batch_events, milliseconds")
	subURL := fs.String("subscribe-url", "", "fanout: node the websocket clients connect to (default --url)")
	eps := fs.Int("events-per-sec", 1000, "fanout: events ingested per second")
	events := fs.Int("events", 20000, "memory: events ingested (every stream matches each)")
	size := fs.Int("size", 2600, "memory: bytes of each event")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's own CPU profile to this file")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var res *bench.Result
	var err error
	switch args[0] {
	case "health":
		res, err = bench.Health(ctx, c)
	case "webhook":
		b := *batch
		if b == 1000 {
			b = 100
		}
		wc := bench.WebhookConfig{Config: c, Batch: b, DeadNeighbour: *dead, HealthyNeighbour: *healthy, BatchSize: *whBatch}
		if *isolation > 0 {
			ir, err := bench.WebhookIsolation(ctx, wc, *isolation)
			if err != nil {
				fmt.Fprintln(stderr, "fleethub-bench:", err)
				return 1
			}
			ir.Print(stdout)
			return 0
		}
		res, err = bench.Webhook(ctx, wc)
	case "matrix":
		res, err = bench.Matrix(ctx, c, 39.96, -83.0)
	case "optimize":
		res, err = bench.Optimize(ctx, c)
	case "idle":
		ir, err := bench.Idle(ctx, c.URL, c.Key, *subs, c.Duration)
		if err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		ir.Print(stdout)
		return 0
	case "memory":
		mr, err := bench.Memory(ctx, bench.MemoryConfig{URL: c.URL, Key: c.Key, Streams: *subs, Events: *events, Size: *size})
		if err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		mr.Print(stdout)
		return 0
	case "broker":
		if err := bench.Broker(ctx, *port, stdout); err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		return 0
	case "fanout":
		b := *batch
		if b == 1000 {
			b = 50
		}
		fr, err := bench.Fanout(ctx, bench.FanoutConfig{URL: c.URL, Key: c.Key, SubscribeURL: *subURL, Subscribers: *subs, Rate: *eps, Duration: c.Duration, Batch: b,
			BatchEvents: *batchEvents, MaxWaitMS: *maxWait})
		if err != nil {
			fmt.Fprintln(stderr, "fleethub-bench:", err)
			return 1
		}
		fr.Print(stdout)
		return 0
	case "ingest":
		if *kind == "telemetry" {
			res, err = bench.Telemetry(ctx, bench.IngestConfig{Config: c, Trips: *trips, Batch: *batch})
		} else {
			res, err = bench.Ingest(ctx, bench.IngestConfig{Config: c, Trips: *trips, Batch: *batch})
		}
	default:
		fmt.Fprintf(stderr, "fleethub-bench: unknown generator %q\n", args[0])
		fmt.Fprintln(stderr, usageLine)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "fleethub-bench:", err)
		return 1
	}
	res.Print(stdout)
	return 0
}
