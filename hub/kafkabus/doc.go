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
// GroupID (this departs from the first design, for a measured reason). The
// bus is one member of each group: the subscriptions of every topic with a
// group's ID share one ConsumerGroup, as a Kafka consumer subscribed to
// several topics would, so a rebalance waits for one join per node and a
// killed node leaves one dead member behind, not one per topic. The member
// joins 100 ms after the last subscription came, and leaves and joins
// again with the new topics when one comes or goes; a topic has at most one
// subscriber per group on a bus. For each generation it starts one
// partition reader per assigned partition at the committed offset (at the
// subscription's Start when none is committed). At a rebalance the generation ends: each partition
// goroutine lets the batch in its handler finish, commits it and stops, and
// only then does the member rejoin, so one partition is handled by one
// member at a time. The Reader hides generation boundaries: batches already
// taken from it keep flowing after their partition moved, and with it a
// member joining mid-stream caused 277 to 1,457 duplicates out of 20,000
// messages, with two members handling one partition at once; with
// generations it causes none (TestGroupRebalanceMidStream). A handler
// batch must finish within the rebalance timeout (4 s), or the member is
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
// was committed past before this member owned the partition). While the
// commit stands at a held message and no message comes, the member asks
// Held again every 250 ms and commits as far as it may, so the commit
// reaches the end soon after the message is released, without waiting for
// another batch (a commit standing still would look like a dead member to
// the stall watch). Until then a new member replays from the held offset
// (TestGroupCommitStaysAtHeldOffset, and the
// ReleasedHoldCommitsWithoutNewMessages case of hub/bustest).
//
// Groups use a session timeout of at least 6 s (the broker default minimum;
// kfake enforces it) with 1 s heartbeats, so members notice a rebalance
// within a second; a crashed member's partitions move after the session
// timeout, or sooner when another member joins (see below).
//
// Without a group, Subscribe reads every partition from hub.StartEarliest
// (log start) or hub.StartLatest (the end offsets as of the Subscribe call)
// and commits nothing.
//
// # Consumer groups after a crash
//
// A killed node leaves its member in the group. If the group was stable,
// the restarted node's join makes the coordinator wait the rebalance
// timeout (4 s) for the dead member to rejoin, then drop it: the node
// consumes every partition about 4 s after it starts. If the node was
// killed while its member waited in JoinGroup (a kill soon after a start,
// a crash loop), the coordinator keeps the dead member as one that joined,
// and the next generation includes it. kfake (the in-process broker of the
// tests) then, unlike Kafka: tells every member that it leads the group
// when the old leader is gone and waits for the SyncGroup of the one it
// picked, possibly the dead one; starts no session timer for a member
// whose JoinGroup answer went to a closed connection, so a dead member
// given partitions keeps them for good; and drops without an answer a
// member that waits in JoinGroup or SyncGroup longer than its session
// timeout since its last heartbeat (kafka-go sends none then), whose join
// then hangs until kafka-go's deadline and comes back as a new member,
// leaving one more dead member. The crash harness
// (TestCrashPostgresRedisKafka) saw the pipeline's group stall for 45 s
// and for more than 2 minutes, and TestGroupRecoversFromMembersKilledMidJoin
// stalls 3 of its 4 groups for good without the measures below, which make
// a node recover on kfake and are sound on Kafka:
//
//   - The rebalance timeout (4 s) is below the session timeout (6 s): a
//     rebalance waiting for a dead leader's SyncGroup ends on the
//     coordinator's rebalance-timeout deadline, and one waiting for a dead
//     member to rejoin completes, before the live members' sessions lapse.
//     Each coordinator request has 9 s; kafka-go adds the rebalance timeout
//     to a JoinGroup's deadline and the session timeout to a SyncGroup's.
//   - Each generation watches the partitions that other members hold
//     (DescribeGroups, committed and end offsets, every second): one with
//     messages past its committed offset whose owner and committed offset
//     stayed the same for the session timeout makes the member rejoin with
//     new metadata (an epoch in its UserData), which rebalances the group.
//     A dead member cannot rejoin and is dropped; a live but slow one
//     rejoins with the same ID and keeps its partitions. The rebalance is
//     asked once per owner, partition and committed offset.
//   - When a JoinGroup fails (its deadline passed, say), kafka-go forgets
//     its member ID without leaving the group; the bus leaves for it.
//   - One member per node and group (above).
//
// Measured on kfake over three runs of 20 crash cycles, from the restarted
// node's start until its pipeline member had every partition: 4 s when
// the killed member had been stable; 8 to 10 s when the coordinator
// dropped a dead member of the generation itself (the leader whose
// SyncGroup never came, or one whose session timer did start); at most
// 15.2 s when the watch had to ask (4 s, then the session timeout and up
// to 1 s, then 4 s). In-process, 8 to 16 s.
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
