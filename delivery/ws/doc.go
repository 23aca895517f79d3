// Package ws is the websocket sink: a client follows one or more streams
// over one websocket and receives every message of their per-stream logs
// (hub.Log) from a position it chooses, in order, with offsets it can
// resume from. docs/websocket.md is the client's reference; this page is
// the design.
//
// # Lifecycle
//
// New(cfg, streams, log, logger) fills zero Config fields with defaults
// (config.go holds every default and fixed limit; Config.Counter defaults
// to streams when it counts too, as the stream registry does). The API
// layer authenticates the request (key, streams:read; from a browser the
// key comes as the offered subprotocol KeyProtocolPrefix+key) and calls
// Serve, which validates the query, fixes each stream's start offset, and
// upgrades (fasthttp/websocket's FastHTTPUpgrader), selecting the
// subprotocol Protocol when offered and never another. A bad request is
// answered before the upgrade with the general error body and Serve
// returns a *RequestError: 400 invalid_request (bad encoding,
// last_offset, epoch or stream_id, too many streams, a webhook stream, a
// key offered as a subprotocol without Protocol), 404 stream_not_found (a
// stream missing from the key's organization and environment: another
// organization's stream is missing too), 503 service_unavailable after
// Shutdown. Shutdown closes every connection with 1001 after writing what
// its queue holds, waits for all goroutines and, when its ctx ends first,
// cuts the sockets and returns ctx.Err(). New returns no error, unlike
// the other components' New: nothing in it can fail. Acks is a Config
// field (default NewMemoryAcks; cmd/fleethub passes FileAcks, kept under
// --data/streams, on one node and RedisAcks, shared by the nodes, with
// Redis) because New's parameters were fixed before it existed.
//
// # Goroutines
//
// Per connection: the reader, which owns the rest (fasthttp's hijack
// goroutine, or its own with Config.KeptHijackedConns, which lets
// fasthttp free the upgrade request's context); the writer, only while
// the queue holds frames; one pump per followed stream while it has
// something to do. An idle connection has only its reader: a pump that is
// caught up with nothing pending parks in its stream's lot (park.go) and
// its goroutine ends; the lot's one waiter goroutine per stream waits for
// the log's next offset (hub.Log.Wait) and starts the parked pumps again,
// and looks at the stream once a second for them (paused, stopped or
// gone, another epoch), waking them to act as before. The waiters look
// at the same moment, when the Server's one state clock ticks
// (stateclock.go): no timer per stream. A parked pump keeps
// its place in conn.wg; its subscription's cancellation (context
// AfterFunc, set once per subscription) takes it out of the lot and ends
// it. The pump's state stays in its pump struct between goroutines, and
// whoever takes it out of the lot under the lot's lock owns it, so one
// goroutine at most runs a pump. An idle connection has no writer and
// holds no write buffers either. A data frame pushed into a queue with
// no writer running is written by the pusher itself (conn.writeDirect):
// one writev that does not wait for the socket, with buffers from the
// Server's pool given back at once, so a delivery to a socket with room
// starts no goroutine. What it cannot write so (the socket's buffer
// full, a control frame, more than one writev's worth, a closing
// connection) starts the writer (queue.kick), with the rest of a writev
// begun first; the writer takes the batch buffers from the pool, writes
// until the queue is empty, gives them back and ends. The check for an
// empty queue and the claim of the writer's role are under the queue's
// lock, so a frame is never left without a writer and two never write at
// once. A busy connection (the push within Config.WriteLinger of its
// last write, that write within twice as long of the one before) is not
// written at once: the
// pusher hands it to the Server's lingerer instead (conn.pushed, one
// timer for every held connection, linger.go), which writes the queue
// WriteLinger after the last write (up to a fifth of it sooner, so that
// connections due together are written on one firing), in one writev,
// and counts in conn.wg until it has run. The writer's role stays taken
// meanwhile, so frames keep their order. The Server's
// one pinger goroutine (pinger.go) queues a ping frame into every
// connection once per PingInterval, spread over 16 slots, so a connection
// has no ticker of its own. The reader returns when the socket fails or
// the close handshake ends, then waits for the writer and the pumps
// (conn.wg) and decrements Connected; the Server waits for the readers
// (Server.wg). A connection ends through conn.close(reason), once, which
// never blocks: it cancels the pumps and starts the writer if none runs;
// the writer writes the queue when the reason calls for it, the close
// frame, waits up to a second for the client's close reply and cuts the
// socket with deadlines; the reader then closes the socket (a no-op when
// fasthttp does not keep hijacked connections: it closes the socket when
// its hijack handler returns); no writer starts after that one. Shutdown
// returns when every connection's goroutines and the pinger have ended.
//
// Memory of an idle connection: gorilla's Conn reads through a 256-byte
// buffer (client frames are small; larger ones are read past it) and has
// no write buffer (WriteBufferPool: it writes only control frames, the
// writer frames data itself). The API's fasthttp server runs with
// ReduceMemoryUsage, so the request's 16 KiB read buffer is given back
// once the upgrade request is read and nothing follows it (RFC 6455
// §4.1: a client sends nothing before the handshake response), and the
// hijacked connection reads the socket directly; a client that sent
// more keeps the buffer, so nothing it sent is lost. Measured in
// docs/performance.md (idle connections).
//
// # Backpressure: pull, never push
//
// pipeline → websocket never blocks, and here it cannot: the pipeline
// appends to the log and returns. Each subscription's pump pulls entries
// from the shared log into its connection's bounded byte queue
// (Config.QueueBytes), so a slow client holds up nothing but its own pump,
// and loses nothing while the log retains its position. When the queue is
// full the pump stops reading until the writer has drained half of it.
// Falling behind the log's head is reported, not punished at once: more
// than LagNotice messages behind (the stream's hub.StreamInfo.LagNotice
// when it sets one) sends {"type":"lag"} (at most every 5 s);
// more than MaxLag behind for longer than LagGrace closes with 4008. A
// client that stops reading altogether is closed when a write exceeds its
// deadline, WriteTimeout/2 to WriteTimeout after it began (4008, but the close frame cannot get through a full
// socket). Control frames (replies, notices, pongs) may exceed the queue
// limit by 64 KiB; past that the client is closed with 4008 too. Entries
// past retention are reported with offsets_expired and skipped.
//
// A pump looks at its stream (hub.Streams, from memory) before every log
// read and at least once a second (a parked pump through its stream's
// lot): paused holds delivery at the current position, stopped drops the
// subscription with a stream_stopped error and, if none is left, closes
// the connection with 4001; a stream configured to deliver by webhook is
// dropped the same way, with a webhook_delivery error. A stream that
// disappeared from hub.Streams counts as stopped.
//
// # Epochs: a lost history is reported, never skipped
//
// Offsets are positions in one history of a stream, named by its epoch
// (hub.Log.Epoch); a log that loses its history (a new data directory, a
// stream's keys gone from Redis) starts offsets again at 1 under a new
// epoch. The subscribed frame names the epoch; a client resumes with
// last_offset and that epoch (the query, resume and subscribe frames),
// and an ack is stored with its epoch (Position). position (request.go)
// fixes where a subscription starts: a position of another epoch starts
// at the oldest retained offset, announced by a history_lost error right
// after subscribed, never at the offset + 1. No epoch, or an ack stored
// before epochs, keeps the behaviour of before (an epoch "" matches any).
//
// A history can also be lost under a live subscription (Redis flushed
// while clients follow). The pump asks the log's epoch after every read
// round and before it frames what it read: the epoch asked after a read
// names that read's history or a later one (hub/redislog's doc says how
// its mirror keeps this true), so entries of a new history are never
// delivered as the continuation of the old one. On a change the pump
// sends the batch it was filling (old messages), then history_lost, then
// the new history from its oldest retained offset. Epoch answers from
// memory for embedlog and for redislog's followed streams: the check costs
// no I/O per round. An ack without an epoch counts in the epoch of the
// stream's subscribed frame on that connection (else the stream's current
// one), so an ack of a message delivered before such a change is not
// taken for an offset of the new history.
//
// # Close codes
//
// One mapping, closeFrame in close.go, from close reasons (the Err*
// sentinels) to codes:
//
//	Code  Reason                           Sent when
//	1000  normal                           the client closed (its code is echoed)
//	1001  going away                       Shutdown; the queue is written first
//	1008  policy violation                 more than 10 malformed frames in a row; nothing read within ReadTimeout
//	1009  message too big                  a client frame over MaxMessageSize
//	4001  stream stopped                   every followed stream was stopped (or turned to webhook delivery)
//	4008  slow consumer                    beyond MaxLag for LagGrace; a write past WriteTimeout; control frames overflow
//	4401  token expired / token revoked    the browser token the connection opened with ended (ServeLimited)
//
// 4001 tells a client not to reconnect; 4008 tells it to reconnect with
// last_offset set to the last offset it processed.
//
// # Encode once
//
// A message is the wrapper {"stream_id","offset","message"} built by
// concatenation around the entry's JSON, or the msgpack map with the
// entry converted by a two-pass JSON→msgpack converter (msgpack.go: 3 µs
// and 5 allocations for a 566-byte event, against 17 µs and 381 for one
// built on json.Decoder tokens). The encoded wrappers live in a ring per
// stream (frames.go): 16,384 slots indexed by offset, lock-free reads,
// newer entries win a slot; the compressed form (permessage-deflate
// without context takeover, at gorilla's level, BestSpeed) is deflated
// once for all connections. The ring has its table (128 KiB, then the
// frames it holds) only while two or more subscriptions on this node
// follow the stream, so a stream with one follower costs nothing.
// Batches (BatchEvents) are built once too: a batch is due max_wait after
// its first entry was appended (hub.Entry.Time, not when a pump read it),
// so every subscription of the stream cuts the same batches, and the
// first entry's frames keep the last batch built from it (and its
// deflated form) for the others. A subscription that cuts another batch
// (it resumed in the middle of one, or a paused stream flushed early)
// builds its own.
//
// Measured (below): the ring at 2,048 slots missed most of the time in a
// backlog replay, because each pump runs up to a queue (4 MiB, about
// 9,000 messages) ahead of the others; at 16,384 slots, 1,000 followers
// of one stream cost the server no allocation per delivery.
//
// # Writes
//
// The writer frames uncompressed messages itself (RFC 6455 header, no
// mask) and writes everything the queue holds with one writev (up to
// 128 KiB or 1,024 buffers), under the write deadline, zero-copy from the
// shared wrappers. gorilla's API writes one syscall per message, and
// those syscalls took 60% of the CPU of BenchmarkFanout_1000Subs; the
// coalesced writer raised the fan-out figures two to three times.
// Several messages are never merged into one websocket message: one
// message is one JSON value (or one msgpack value), which any client
// parses. Compressed messages are framed the same way from their shared
// deflated bytes (RSV1 set); pings, pongs and the close frame go
// through gorilla from the writer goroutine, between two writevs (pings
// and pongs are queued like data, in order); every
// frame is written by a single Write or writev, which the runtime never
// interleaves with another write on the socket (gorilla's own close reply
// and 1009 may come from the reader). Pongs to client pings are queued to
// the writer so that the writer's deadlines stay its own.
//
// Compression: Serve offers permessage-deflate (no context takeover) when
// a stream of the request has Compression set; frames of those streams
// are then compressed, control frames and other streams' frames are not.
// A stream subscribed later cannot add compression to a connection.
//
// # Benchmarks
//
// BenchmarkFanout_{1,100,1000}Subs: one stream, N gorilla clients on
// loopback in the same process (the figures include the clients'
// reading), b.N messages of about 450 bytes appended in chunks of 100.
// An op is one message delivered to all N; allocations per op include
// the clients' (gorilla's NextReader allocates once per message read).
// On the 2-vCPU AMD EPYC VM, shared with other work, over several runs of
// -count 3 -benchtime 2s:
//
//	Subs  msgs/s delivered   ns/delivery  allocs/op
//	1     1.25–2.1 M         470–800      3: wrapper, entry, client
//	100   2.6–3.6 M          280–380      105–210: about one per delivery, the client's
//	1000  1.7–2.5 M          400–590      ~1015: idem
//
// With the machine busier (load average 3–4 on its 2 vCPUs) the same runs
// gave 0.84–1.5 M, 1.05–2.2 M and 1.1–1.2 M msgs/s.
//
// Without the shared ring (BenchmarkFanoutUncached_*) every delivery
// costs the server two allocations more: 100 subs 1.8–2.2 M msgs/s and
// 300 allocs/op (80 KB), 1000 subs 1.7–1.9 M and 3,015 allocs/op (1 MB,
// against 0.3 MB). The ring matters most where encoding is costly: with
// permessage-deflate, 100 subs got 0.33–0.36 M msgs/s against 0.16–0.19 M
// compressing per connection; since the deflated bytes go through the
// coalescing writer instead of one gorilla write per message, a
// compressed delivery costs about a fifth of the CPU it did
// (BenchmarkDeliveryAllocsDeflate_100Subs; docs/performance.md).
//
// BenchmarkDeliveryAllocs_* count the server's allocations with clients
// that read the raw socket: 0 per subscriber at steady state, about 1–2
// per appended message (the stream's shared wrapper and its cache entry). msgpack runs as JSON (the conversion is
// once per entry: BenchmarkJSONToMsgpack 3.0–5.6 µs, 5 allocations, for a
// 566-byte event; the first converter, on json.Decoder tokens, took 17 µs
// and 381 allocations). Batches of 50: 1.6–2.1 M msgs/s (the test client
// scans every batch). Before the coalescing writer: 0.2–0.28 M, 0.8–1.2 M
// and 0.9–1.1 M msgs/s for 1, 100 and 1000 subs.
//
// # The organization's feed
//
// feedsub.go: a connection may follow the organization's feed (hub/feed,
// Config.Feed) beside its streams: feed=true in the upgrade query with
// the pull's parameters, or a subscribe_feed frame (unsubscribe_feed
// ends it). Its start (after, now, last) is fixed before the 101 like a
// stream's. Its reader goroutine pulls pages from the bus log with the
// feed's own wait and pushes one {"feed": entry} frame per entry into the
// connection's queue, waiting for space when it is full: a slow client
// holds its own reader only. The entry is api/feed's encoding, so its
// cursor is the one the pull and the event stream give it. Feed frames
// are not cached (each subscription has its own filters) and are not
// counted as a stream's deliveries; the streams' shared-frame path is
// untouched. A browser token opens it with the feed:read scope (the
// feed argument of ServeLimited); the token's Life closing the
// connection with 4401 covers it like the streams.
//
// # Connection caps
//
// Serve takes a slot of the key's and the organization's caps (Config.Plans,
// KeyCaps, OrgCapFactor) after validating the request and before the
// upgrade, and refuses with 429 too_many_connections over either. The slot
// is given back when the connection's run returns (every close path ends
// there), when the upgrade fails, or, if fasthttp could not write the 101
// and never runs the connection, by a timer after 2×WriteTimeout+closeWait.
// Conns counts in memory (MemoryConns) or across nodes (RedisConns: one Lua
// check-and-increment, DECR on close, TTL refreshed every TTL/3, this
// node's count when Redis fails). Without Plans nothing is capped.
//
// # Clock
//
// The package reads the real clock: its timings are socket deadlines,
// tickers and timers, which need the real one. Tests use short durations.
package ws
