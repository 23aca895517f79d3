// Package dedup remembers recently seen message ids so that a message
// delivered twice (the bus is at-least-once; a device may retry) is
// processed once: at-least-once plus dedup gives exactly-once effects.
//
// A Window offers two ways to use it:
//
//   - Seen(ctx, id) records id at once: false the first time an id is
//     seen within the window's TTL, true for every repeat. A caller that
//     then fails to process the message must Forget the id, or its
//     redelivery is dropped; if it crashes first, a shared window keeps the
//     mark and the redelivery is dropped anyway.
//   - Claim(ctx, id), then Done or Forget, is for callers that must not
//     lose a message: Claim answers Unseen (the caller now holds a claim on
//     the id), InFlight (another caller holds one) or Duplicate (the id was
//     recorded). The caller records the id with Done once the message was
//     handed off, or gives it up with Forget when that failed. A claim that
//     is neither done nor forgotten (its holder crashed) lapses after
//     DefaultLease (15 s); until then the id is InFlight, and a caller
//     holding a redelivered copy waits and asks again.
//
// A caller with many ids at once (the pipeline, a bus batch's events)
// claims them with ClaimAll and gives them up with ForgetAll; Done takes
// many ids already. Every window here is a Batcher: Local and Compact
// take their lock and read the clock once per call, Redis makes one
// round trip, and Compact reads the table's places of all the ids (and
// of the ids a full window evicts for them) before it works on any, so
// that their cache misses overlap: in a window of ten million the table
// is far larger than the caches and the TLB's reach, and one miss after
// another cost about a microsecond each on a 2-vCPU VM.
//
// The TTL of a recorded id starts when it is recorded (Seen's first
// sighting, or Done); repeats do not extend it, in every implementation.
// Seen answers true for a claimed id.
//
//   - Local is one node's window: a size-bounded LRU of ids and the time
//     each was recorded (hashicorp/golang-lru/v2's simplelru, read under
//     the window's lock; a record older than the TTL counts as absent and
//     is evicted first, being the least recently recorded) and a map of
//     live claims. Its clock (WithClock) times both.
//     An id evicted for size before its TTL is forgotten early, so size it
//     for the ids of one TTL (rate × TTL); DefaultSize and DefaultTTL hold
//     100,000 ids for ten minutes. An entry costs about 130 bytes including
//     a 36-byte id (measured: 13 MB for 100,000). Lapsed claims are swept
//     when the claim map reaches the window's size.
//   - Compact is one node's window for many ids: it keeps a 128-bit hash
//     of each id, not the id, in a ring in recording order (oldest leaves
//     first, by age or once size ids are held) with a table over it of
//     buckets of one cache line (seven slots and an overflow count), both
//     grown as ids come (nothing is allocated up front), and a table of
//     live claims. An id costs about 51 bytes
//     whatever its length (measured: 487 MiB for ten million,
//     BenchmarkCompactMemory10M; Local would need 1.3 GB). An id
//     forgotten or recorded again keeps its old place in the ring until
//     that reaches the head, and counts against size until then. Compact
//     also implements Recorder, which records ids at a past time (the
//     pipeline's Warm rebuilds a window from the stream logs with it),
//     and Private: it is one process's own, so its one caller (the
//     embedded hub's pipeline) may record a batch's ids as it claims
//     them, with RecordAll, and ForgetAll them if its hand-off fails,
//     instead of ClaimAll then Done.
//   - Redis is a window shared by every node: keys prefix+id, "1" (Done)
//     or "s" with the recording call's token (Seen) for a recorded id
//     (TTL) and "c" with the claiming call's token for a claim (lease),
//     expiring by themselves; a Seen or a claim the client sends again
//     after a timeout finds its own token, and is neither a duplicate nor
//     in flight. Seen and Claim run one Lua script, one atomic round
//     trip, so of two nodes racing on one id exactly one sees it first;
//     Done is one pipelined round trip for any number of ids.
//
// Forget removes an id's record or claim, so that it is unseen again.
//
// # Hash collisions in Compact
//
// Two ids are taken for one when both 64-bit halves of their hashes
// (hash/maphash under two seeds drawn per window, so per process: an id
// cannot be crafted to collide with another's, and nothing hashed
// outlives the process) are equal. With n ids held, a new id is taken
// for a duplicate with probability about n/2^128: 3·10^-32 for ten
// million, so that a node matching a million new events a second for a
// century would suppress one wrongly with probability below 10^-16.
// The table compares 32 bits of a hash first and reads the rest from the
// ring only when they match.
//
// # Known cost
//
// Compact (2-vCPU Intel Xeon VM, load average about 5): Seen 125 to
// 240 ns, Claim then Done 230 to 430 ns, no allocation
// (BenchmarkCompactSeen, BenchmarkCompactClaimDone, window of 100,000;
// Local 0.9 to 2.8 µs and 1.1 to 2.6 µs in the same runs); Claim then
// Done 1.1 to 1.3 µs in a full window of ten million, where the table and
// the ring no longer fit in any cache (BenchmarkCompactClaimDoneFull10M).
//
// Measured on a 2-vCPU AMD EPYC VM: Local.Seen about 1.1 µs with 2
// allocations when every id is new and evicts an old one
// (BenchmarkLocalSeen); Redis.Seen about 66 µs per sequential call on
// loopback, 8 allocations, all in go-redis (BenchmarkRedisSeen). Claim
// then Done of a new id: Local about 1.4 µs with 3 allocations
// (BenchmarkLocalClaimDone); Redis 80 to 90 µs, two round trips and 30
// allocations (BenchmarkRedisClaimDone; Seen measured 25 to 41 µs in the
// same runs, on a loaded machine). A caller that records a batch's ids
// with one Done pays one round trip per id plus one per batch.
package dedup
