package ws

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisAcks keeps acknowledged offsets in Redis, so a client that
// reconnects to another node resumes after its last ack. An ack only
// moves forward; entries expire after TTL without acks.
type RedisAcks struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	script *redis.Script
}

var _ Acks = (*RedisAcks)(nil)

const ackScript = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`

// NewRedisAcks makes the store; ttl 0 means 48 hours.
func NewRedisAcks(rdb redis.UniversalClient, ttl time.Duration) *RedisAcks {
	if ttl <= 0 {
		ttl = 48 * time.Hour
	}
	return &RedisAcks{rdb: rdb, prefix: "fleethub:ack:", ttl: ttl, script: redis.NewScript(ackScript)}
}

func (a *RedisAcks) key(keyID, streamID string) string { return a.prefix + keyID + ":" + streamID }

// Ack records offset if it is past the stored one.
func (a *RedisAcks) Ack(ctx context.Context, keyID, streamID string, offset int64) error {
	if err := a.script.Run(ctx, a.rdb, []string{a.key(keyID, streamID)}, offset, a.ttl.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("ws: ack: %w", err)
	}
	return nil
}

// Acked returns the last acknowledged offset.
func (a *RedisAcks) Acked(ctx context.Context, keyID, streamID string) (int64, bool, error) {
	n, err := a.rdb.Get(ctx, a.key(keyID, streamID)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("ws: acked: %w", err)
	}
	return n, true, nil
}
