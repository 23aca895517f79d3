// Package kafkabus is the Kafka bus (segmentio/kafka-go): hub.Bus across
// nodes. cmd/fleethub is its only importer.
//
// # Topics
//
// New creates the topics it is given, and Publish and Subscribe create a
// topic on first use, with Config.Partitions (default 8) and
// Config.ReplicationFactor (default 1), through a connection to the
// controller; an existing topic keeps its partition count. Creation comes
// before any metadata request, because kafka-go's Conn metadata requests
// allow auto-creation and a broker with auto.create.topics.enable would
// otherwise create the topic with its own defaults. Topics exist before a
// reader starts: a consumer group whose topic is missing at join time gets
// no partitions until the next rebalance. Range never creates a topic.
//
// # Publishing and ordering
//
// Publish is synchronous: it returns once the brokers acknowledged every
// message with acks=all. One kafka.Writer serves the bus; concurrent Publish
// calls share its per-partition batches, flushed at Config.BatchSize
// messages or after Config.BatchTimeout (2 ms: kafka-go's 1 s default would
// make every synchronous call wait a second). Messages are partitioned by
// kafka.Hash (FNV-1a of the key, as sarama does, not the Java client's
// murmur2), so one key — the vehicle id — stays on one partition and keeps
// the order in which one caller published it.
//
// # Consuming
//
// Handler calls get messages of one partition in offset order: up to
// Config.MaxBatch (512) messages already fetched, waiting at most 1 ms for
// more after the first. Partitions are handled concurrently, each by one
// goroutine, so a partition's next batch waits for its handler to return
// (bus → pipeline blocks). A partition whose handler keeps failing holds its
// messages; once its queue (MaxBatch messages) is full, the group reader
// stalls, because kafka-go feeds all partitions through one queue.
//
// # Delivery guarantee and the commit rule
//
// At-least-once. In a group, the offset after a batch is committed,
// synchronously, only after the handler returned nil for that batch; a
// handler error retries the same batch after 100 ms and never skips it. The
// commit outlives the subscription's ctx by up to 5 s, so a member that
// stops leaves no handled-but-uncommitted tail unless the commit fails. A
// new member resumes after the last committed offset, so only batches
// handled but not committed (a crash, a failed commit, a rebalance while a
// batch was in the handler) are delivered twice; consumers deduplicate
// (filters/dedup) for exactly-once effects. After a rebalance that keeps a
// partition on a member, kafka-go refetches from the committed offset;
// messages below the offset after the last batch handled here are dropped,
// which is safe because every offset below that was handled.
//
// Groups use a session timeout of at least 6 s (the broker default minimum;
// kfake enforces it) with 1 s heartbeats, so a rebalance after a join or a
// clean leave takes one to a few seconds; a crashed member's partitions move
// after the session timeout.
//
// Without a group, Subscribe reads every partition from hub.StartEarliest
// (log start) or hub.StartLatest (the end offsets as of the Subscribe call)
// and commits nothing.
//
// # Shutdown and health
//
// Close refuses new work (Publish and Subscribe return hub.ErrClosed), waits
// for in-flight publishes, flushes and closes the writer, then waits for the
// subscribers, whose handlers see their ctx end; each finishes its commit
// and leaves its group. Everything is bounded by Close's ctx. Health is
// "healthy" when a metadata request to a broker succeeded within the last
// second (it probes when the last success is older) and "unhealthy"
// otherwise or after Close.
package kafkabus
