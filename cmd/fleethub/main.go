// Command fleethub runs the Fleethub service and its offline tools.
//
//	fleethub serve [flags]        start the whole service
//	fleethub keys create [flags]  create an API key offline (bootstrap)
//	fleethub version              print the version
//
// The load generators are a separate command, cmd/fleethub-bench, so
// this binary never links them.
//
// serve builds one node (app.go: newApp, then start) and is the only
// place where adapters are chosen: the store (SQLite under --data, or
// PostgreSQL with --database-url), the bus (the embedded bus under
// --data/bus, or Kafka with --kafka-brokers), the stream logs and the
// websocket acknowledgements (under --data/streams, or Redis with
// --redis-url), the dedup window, rate limits and connection counts (this
// node's memory, or Redis with --redis-url), and the engines the flags
// name (--addresses, --tiles, --osm). It makes the node's one id (nodeID:
// host name, process id and a random suffix), the owner of every lease
// and claim the node takes (webhook deliveries, alert steps, gateway
// notifications) and the name of its shared counters.
//
// Concurrency: start runs each long-lived component on a goroutine of its
// own until its context ends: the key service's last-use flush, the
// stream registry's refresh, the pipeline, the webhook dispatcher, the
// geofence watcher, the intake's connectivity watchdog, the alert
// scheduler, the notification outbox (with --notify-url) and the HTTP
// server. The first of them to fail, SIGINT or SIGTERM starts the
// shutdown (stop), in two phases: stop taking requests and drain them
// (websocket connections, then HTTP), then cancel the background work,
// wait for it within --shutdown-grace and close the bus, Redis and the
// store.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr)
	case "keys":
		if len(args) < 2 || args[1] != "create" {
			fmt.Fprintln(stderr, "usage: fleethub keys create --org ORG --env test|live --name N --permissions p1,p2 [--plan P] [--rpm N] [--data DIR | --database-url URL]")
			return 2
		}
		return cmdKeysCreate(ctx, args[2:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "fleethub", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "fleethub: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fleethub <command> [flags]

commands:
  serve         start the service (fleethub serve -h for flags)
  keys create   create an API key offline and print it on the first line
  version       print the version
`)
}
