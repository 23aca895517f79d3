package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix of a Redis limiter created with an empty
// prefix.
const DefaultPrefix = "fleethub:rl:"

// allowLua is one Allow, atomically: check the revocation marker, read the
// Redis clock, apply GCRA to the bucket hash and, if the request conforms,
// store the new tat with a TTL that ends exactly when the bucket is full
// again. All times are integer microseconds since the epoch; they stay below
// 2^53, so Lua's doubles hold them exactly.
//
// go-redis sends a command again when its reply did not come within the
// read timeout, though Redis may have run it: the bucket keeps the token
// of the last call it charged (field "call"), and that call run again is
// answered as allowed without a second charge. A call denied changed
// nothing, so it may run twice. (A resend after another call charged the
// bucket is charged again: the key pays one token more, never less.)
//
//	KEYS[1] bucket hash, KEYS[2] revocation marker
//	ARGV[1] emission interval, ARGV[2] tolerance (interval*burst), ARGV[3] the call's token
//	returns {status, tat, now}: status 1 allowed, 0 denied, -1 revoked
const allowLua = `
if redis.replicate_commands then redis.replicate_commands() end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {-1, 0, 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tat', 'call')
local tat = tonumber(state[1]) or now
if state[2] == ARGV[3] then
  return {1, tat, now}
end
if tat < now then
  tat = now
end
local nxt = tat + interval
if nxt - now > tolerance then
  return {0, tat, now}
end
redis.call('HSET', KEYS[1], 'tat', string.format('%d', nxt), 'call', ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.ceil((nxt - now) / 1000))
return {1, nxt, now}
`

// Redis is a limiter whose buckets live in Redis, so that every node
// sharing the Redis shares each key's budget. Each Allow is one script
// call, one round trip.
type Redis struct {
	client redis.UniversalClient
	prefix string
	allow  *redis.Script
}

// NewRedis returns a limiter storing its keys in client under prefix
// (DefaultPrefix when empty). The prefix must not contain '{' or '}': the
// key's own hash tag keeps a bucket and its marker in one cluster slot.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Redis{client: client, prefix: prefix, allow: redis.NewScript(allowLua)}
}

// keys returns the bucket and revocation marker keys of key.
func (r *Redis) keys(key string) (bucket, marker string) {
	tag := r.prefix + "{" + key + "}"
	return tag + ":bucket", tag + ":revoked"
}

// Allow takes one token from key's bucket under lim, with EVALSHA (EVAL
// when the server answers NOSCRIPT). It returns ErrRevoked once any node
// has revoked key, and a wrapped client error when Redis cannot answer.
func (r *Redis) Allow(ctx context.Context, key string, lim Limit) (Result, error) {
	if key == "" {
		return Result{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	g, err := lim.gcra(time.Microsecond)
	if err != nil {
		return Result{}, err
	}
	bucket, marker := r.keys(key)
	var token [8]byte
	_, _ = rand.Read(token[:])
	v, err := r.allow.Run(ctx, r.client, []string{bucket, marker}, g.interval, g.tolerance, hex.EncodeToString(token[:])).Int64Slice()
	if err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis allow: %w", err)
	}
	if len(v) != 3 {
		return Result{}, fmt.Errorf("ratelimit: redis allow: script returned %d values, want 3", len(v))
	}
	if v[0] < 0 {
		return Result{}, ErrRevoked
	}
	return g.result(v[0] == 1, v[1], v[2], time.Microsecond), nil
}

// Revoke sets key's revocation marker, without a TTL: from the next Allow
// on any node, key gets ErrRevoked.
func (r *Redis) Revoke(ctx context.Context, key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	_, marker := r.keys(key)
	if err := r.client.Set(ctx, marker, "1", 0).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis revoke: %w", err)
	}
	return nil
}
