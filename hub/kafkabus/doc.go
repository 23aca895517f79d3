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
// otherwise create the topic with its own defaults. The bus then waits
// until the writer's metadata cache (kafka-go's Transport, refreshed every
// 6 s) holds the topic: the Writer fails at once, without retrying, for a
// topic missing from that cache. Topics exist before a
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
// more after the first. Each partition has its own reader and goroutine, so
// partitions are handled concurrently and a partition's next batch waits
// for its handler to return (bus → pipeline blocks); a partition whose
// handler keeps failing holds only itself up.
//
// A group subscription uses kafka-go's ConsumerGroup, not a Reader with a
// GroupID (this departs from the first design, for a measured reason). For
// each generation it starts one partition reader per assigned partition at
// the committed offset. At a rebalance the generation ends: each partition
// goroutine lets the batch in its handler finish, commits it and stops, and
// only then does the member rejoin, so one partition is handled by one
// member at a time. The Reader hides generation boundaries: batches already
// taken from it keep flowing after their partition moved, and with it a
// member joining mid-stream caused 277 to 1,457 duplicates out of 20,000
// messages, with two members handling one partition at once; with
// generations it causes none (TestGroupRebalanceMidStream). A handler
// batch must finish within the rebalance timeout (10 s), or the member is
// dropped from the group and its partitions are delivered again elsewhere.
// Partitions added to a topic later are picked up at the next rebalance.
//
// # Delivery guarantee and the commit rule
//
// At-least-once. In a group, the offset after a batch is committed,
// synchronously, only after the handler returned nil for that batch; a
// handler error retries the same batch after 100 ms and never skips it,
// until the handler succeeds, the subscription ends or the partition moves
// away (then its next owner starts at the same batch). A batch whose
// handler returned nil is committed even when the subscription is ending,
// so a member that stops leaves no handled tail behind. A new member
// resumes after the last committed offset: only batches handled but not
// committed (a crash, a failed commit, a member dropped for a slow
// handler) are delivered twice; consumers deduplicate (filters/dedup) for
// exactly-once effects.
//
// With Subscription.Held, a commit never passes a message the handler
// still holds after returning (one kept in a reorder buffer): the offset
// committed after a batch is the smaller of the offset after it and the
// oldest held offset of its partition, and a commit that would not move the
// partition's committed offset forward is skipped (a held offset below it
// was committed past before this member owned the partition). Until a
// later batch of the partition is handled after the message was released,
// the committed offset stays at the held one, and a new member replays from
// there (TestGroupCommitStaysAtHeldOffset).
//
// Groups use a session timeout of at least 6 s (the broker default minimum;
// kfake enforces it) with 1 s heartbeats, so members notice a rebalance
// within a second; a crashed member's partitions move after the session
// timeout.
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
