// Package dedup remembers recently seen message ids so that a message
// delivered twice (the bus is at-least-once; a device may retry) is
// processed once: at-least-once plus dedup gives exactly-once effects.
//
// A Window answers Seen(ctx, id): false the first time an id is seen
// within the window's TTL, true for every repeat. The first sighting
// starts the TTL; repeats do not extend it, in both implementations.
//
//   - Local is one node's window: a size-bounded LRU with expiring entries
//     (hashicorp/golang-lru/v2's expirable.LRU). An id evicted for size
//     before its TTL is forgotten early, so size it for the ids of one TTL
//     (rate × TTL); DefaultSize and DefaultTTL hold 100,000 ids for ten
//     minutes. An entry costs about 130 bytes including a 36-byte id
//     (measured: 13 MB for 100,000).
//   - Redis is a window shared by every node: Seen is one SET key 1 NX PX
//     ttl, one round trip and atomic, so of two nodes racing on one id
//     exactly one sees dup=false. Keys are prefix+id and expire by
//     themselves; nothing else is stored.
//
// Forget removes an id, for a caller that marked an id as seen and then
// failed to process the message, so that the redelivery is not dropped.
//
// # Known cost
//
// expirable.LRU v2.0.7 starts a cleanup goroutine per cache that never
// exits (the library has no Close yet), so every Local owns one goroutine
// for the life of the process: create Locals once at startup, not per
// stream or per request. The library also reads time.Now itself, so the
// TTL of a Local cannot be driven by an injected clock.
//
// Measured on a 2-vCPU AMD EPYC VM: Local.Seen about 1.1 µs with 2
// allocations when every id is new and evicts an old one
// (BenchmarkLocalSeen); Redis.Seen about 66 µs per sequential call on
// loopback, 8 allocations, all in go-redis (BenchmarkRedisSeen).
package dedup
