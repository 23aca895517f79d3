// Package webhook is the webhook sink: durable, signed, retried delivery
// of the messages matched for webhook streams, isolated per endpoint.
//
// # Flow
//
// The pipeline calls Accept with the entries it appended to a webhook
// stream's log. Accept wraps each as {"stream_id","offset","message"},
// derives its webhook-id from those bytes, and inserts the deliveries in
// one store transaction; it returns once they are durable, and only then
// does the pipeline commit the bus offset. A crash at any point loses
// nothing: before the insert the bus redelivers, after it the store has
// the delivery.
//
// While Run is sending, Accept inserts the deliveries already leased to
// this node (lease_owner, lease_until) and hands them to the stream's
// endpoint in memory: the hot path has one store write per batch of
// entries and no read. Everything else (retries that come due, deliveries
// accepted while an endpoint had no room, those left by a node that
// stopped) is claimed by the poller every PollEvery under a lease, with
// FOR UPDATE SKIP LOCKED on PostgreSQL, so two nodes never hold the same
// delivery at once in normal running; held leases are renewed every
// Lease/3. Outcomes are written by one recorder goroutine in batches
// (group commit: whatever queued up during the previous write), each row
// only while its lease is still this node's.
//
// # Backpressure
//
// pipeline → webhook goes through a durable, bounded queue per endpoint:
// the store is the queue (Accept blocks only on the store write, never on
// a receiver) and each endpoint holds at most QueueLimit deliveries in
// memory; beyond that, deliveries wait in the store for the poller.
//
// # Isolation
//
// An endpoint is one stream's webhook URL: its own workers (at most
// Concurrency requests in flight), its own token-bucket rate limit, its
// own circuit breaker and its own HTTP connection pool. Two streams with
// the same URL are two endpoints: one tenant's limits and failures are
// never another's. A dead receiver costs its own workers a timeout each,
// then its circuit opens and its deliveries go back to the store until a
// single probe succeeds; the others never wait for it. What it cannot
// take meanwhile is parked out of the delivery log (a spool file on
// SQLite, parked_deliveries on PostgreSQL), written after the healthy
// streams' commit; while its circuit is open it records one attempt per
// probe. So is what a slow receiver (one whose held deliveries would take
// longer than SlowDrain to send at its measured rate) has no room for. The shared parts are the store (one write per accepted batch,
// one per batch of outcomes) and the poller (one indexed query per due
// stream).
//
// # Retries
//
// A 2xx acknowledges. Every other answer (3xx, redirects not being
// followed; 4xx, 410 included; 5xx), timeouts and connection errors are
// retried after a random wait between zero and the step of the schedule
// (full jitter; DefaultSchedule: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h,
// 2 h, 4 h, 8 h, then 8 h), never sooner than Retry-After (on a 408, 429 or 5xx), until
// RetryFor (24 h) has passed since the delivery was queued; the attempt
// that fails after that dead-letters it. No answer disables an endpoint:
// one the store holds disabled (earlier versions disabled an endpoint
// that answered 410 Gone) is enabled by the next poll. Only what sends
// nothing, a refused address or a URL that is not http(s), dead-letters
// at once.
//
// # Batches
//
// With batch_events (batch_processing for telemetry) every request
// carries a JSON array of up to BatchSize payloads (of one when one is
// due: the shape never depends on the count), sent as soon as BatchSize are
// waiting or MaxWait after the oldest joined the queue. Each message is
// still its own delivery row; the request's webhook-id is derived from
// the ids of the deliveries it carries ("msg_batch_…"), so the same
// deliveries batched again get the same webhook-id, and a webhook-id
// never names two different contents.
//
// # Safety
//
// Without AllowPrivate, connections to loopback, private, link-local,
// CGNAT, metadata and other special addresses are refused in the
// dialer's Control function, which sees the address actually dialled
// after name resolution (DNS rebinding cannot slip past a check made
// earlier). No proxy is used (the proxy would be the address checked).
//
// # Decisions
//
//   - webhook-ids are derived from the payload bytes, not from
//     (stream_id, offset) alone: a stream log whose history was lost
//     (a new data directory, a flushed Redis) starts its offsets again,
//     and an offset-keyed id would silently swallow new messages as
//     duplicates of old ones. Enqueueing the same entry twice still
//     makes one delivery. The offset's low 48 bits lead the id, in an
//     alphabet that sorts like the numbers, so the log's unique index
//     of ids grows at its end: with a hash alone each row wrote a leaf
//     page of that index once it outgrew the cache (BenchmarkQueue:
//     33.6 against 15.8 µs an enqueue at 300,000 deliveries).
//   - Accept group-commits: concurrent calls (the bus partitions) share
//     one store transaction. One commit per call made the commit the
//     largest cost of a server at 12,000 messages/s (45 % of the store's
//     CPU, WAL checkpoints included); with group commit the end-to-end
//     ceiling on this 2-core machine rose from about 9,000 to 12,000 to
//     13,000 signed deliveries/s (bench webhook, receiver included).
//   - Outcomes are written by one recorder in batches, not per request:
//     the store side of a delivery (enqueue plus outcome) costs about
//     19 µs of the single SQLite writer (BenchmarkQueue).
//   - fasthttp for the client (client.go), HTTP/1.1 over TCP or TLS: a
//     request is written and its answer read on the worker's own
//     goroutine. net/http's client, used before, hands every request to
//     a connection's writer and reader goroutines; those hand-offs and
//     its per-request allocations were 45 % of a server's CPU at four
//     saturated receivers, and the switch cut the server's CPU per
//     delivery by about 30 % (docs/performance.md). HTTP/2 is not
//     offered to receivers. The address check stays in the dialer's
//     Control hook (the client's Dial is a net.Dialer's); fasthttp takes
//     no context, so shutdown cuts the requests in flight by closing
//     every endpoint's connections (connSet). A POST that meets a pooled
//     connection the receiver closed, before any byte of an answer, is
//     sent once more on a new one, as net/http does.
//   - The store interface taken is store.Deliveries whole (more than the
//     house's four methods): the dispatcher uses nearly all of it, and a
//     narrower copy would only repeat it.
package webhook
