// Package hub is the realtime core: the bus contract that carries
// locations, telemetry and events between ingest and the sinks (Bus,
// Message, Subscription, Handler), and the stream contracts the pipeline
// and the sinks share for the fan-out to subscribers (Streams, Log,
// Counter). It holds types and interfaces only; the implementations are
// its sub-packages: the buses hub/embedbus and hub/kafkabus, the stream
// logs hub/embedlog and hub/redislog, the stream registry hub/streams.
//
// Backpressure per boundary: a bus Publish returns once the message is
// durable in the bus (written and fsynced by hub/embedbus with a
// directory, the server's default, or held in memory without one;
// acknowledged by the brokers for Kafka); bus → pipeline blocks: a
// consumer's handler is not given the next batch of a partition before
// it returned, and the group offset is committed only after the handler
// returned nil (at-least-once).
//
// Concurrency: every implementation of Bus, Log, Streams and Counter is
// safe for concurrent use; the intake, the domain services, the pipeline
// and the sinks call them from many goroutines at once. A Subscribe calls
// its Handler from one goroutine per partition, so a handler runs
// concurrently for different partitions but never twice at once for one
// partition; Subscription.Held may be called from several of those
// goroutines at once. An Entry's Data is shared by every reader of the
// log: never modify it.
package hub

import (
	"context"
	"errors"
	"time"
)

// Default topic names.
const (
	TopicLocations = "fleethub.locations"
	TopicTelemetry = "fleethub.telemetry"
	TopicEvents    = "fleethub.events"
)

// ErrClosed is returned by a closed bus.
var ErrClosed = errors.New("hub: bus closed")

// Message is one record on the bus. Key is the partition key (the vehicle
// id), so per-vehicle order holds.
type Message struct {
	Topic     string
	Key       []byte
	Value     []byte
	Partition int
	Offset    int64
	Time      time.Time
}

// Handler consumes a batch of messages of one partition, in offset order.
// Returning an error redelivers the batch after a pause.
type Handler func(ctx context.Context, msgs []Message) error

// Subscription says what to consume.
type Subscription struct {
	Topic string
	// Group shares the partitions among its members and keeps committed
	// offsets; "" reads every partition from Start without committing.
	Group string
	// Start is where a group without committed offsets (or a groupless
	// reader) begins: StartLatest or StartEarliest.
	Start Start
	// Held, when set, reports the oldest offset of a partition that the
	// handler returned from without finishing (a message it keeps in a
	// reorder buffer); ok is false when it holds none. A group's
	// committed offset never passes it, so a crash cannot lose a held
	// message: the bus redelivers it.
	Held func(partition int) (offset int64, ok bool)
}

// Start positions.
type Start int

const (
	StartLatest Start = iota
	StartEarliest
)

// Bus carries messages between ingest and the pipeline.
type Bus interface {
	// Publish appends messages; when it returns nil they are durable in
	// the bus.
	Publish(ctx context.Context, msgs ...Message) error
	// Subscribe consumes until ctx ends or the bus closes.
	Subscribe(ctx context.Context, sub Subscription, h Handler) error
	// Close flushes pending publishes and stops consumers.
	Close(ctx context.Context) error
}

// Health states of a bus (optional ability).
type HealthReporter interface {
	Health(ctx context.Context) string
}
