package main

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/hub/streams"
)

// consoleStreamBodies are the start bodies of the two streams ("this
// console") every load of the console started before it read the feed;
// at startup the ones still running become ephemeral, so those left
// behind end once idle (docs/console.md).
var consoleStreamBodies = map[string]string{
	"events":    `{"stream_config":{"delivery_method":"websocket"}}`,
	"telemetry": `{"data_types":["gps_enhanced"],"delivery_method":"websocket"}`,
}

// reapEvery is how often idle ephemeral streams are looked for; reapLease
// how long a node holds the reaper's lease without renewing it.
const (
	reapEvery = 5 * time.Second
	reapLease = 3 * reapEvery
)

// streamOptions are the streams service's settings: on several nodes the
// reaper of idle ephemeral streams runs on the one holding a lease in
// Redis.
func (a *app) streamOptions() []streams.Option {
	opts := []streams.Option{streams.AllowPrivateWebhooks(a.cfg.AllowPrivateWebhooks), streams.LocationNames(a.cfg.Addresses != "")}
	if a.redis != nil {
		opts = append(opts, streams.WithLease(streams.NewRedisLease(a.redis, "streams-reaper", a.node, reapLease)))
	}
	return opts
}

// runReaper makes the streams earlier consoles left behind ephemeral,
// then ends idle ephemeral streams until ctx ends.
func (a *app) runReaper(ctx context.Context) error {
	changed, err := a.streams.MakeEphemeral(ctx, consoleStreamBodies)
	if err != nil {
		a.log.Warn("streams of earlier consoles not made ephemeral", "error", err)
	}
	if len(changed) > 0 {
		a.log.Info("streams of earlier consoles made ephemeral: they end once idle", "count", len(changed))
	}
	return a.streams.RunReaper(ctx, reapEvery)
}
