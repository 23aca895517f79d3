package ws

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisAcks keeps acknowledged positions in Redis, so a client that
// reconnects to another node resumes after its last ack. A position is
// stored as "<offset>:<epoch>" (a bare "<offset>", as stored before
// epochs, reads as an ack of no epoch). An ack only moves forward within
// an epoch; entries expire after TTL without acks.
type RedisAcks struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	script *redis.Script
}

var _ Acks = (*RedisAcks)(nil)

// ackScript: ARGV offset, ttl in ms, epoch ("" for none).
const ackScript = `
local cur = redis.call('GET', KEYS[1])
local off, ep = -1, ''
if cur then
  local i = string.find(cur, ':', 1, true)
  if i then
    off, ep = tonumber(string.sub(cur, 1, i - 1)) or -1, string.sub(cur, i + 1)
  else
    off = tonumber(cur) or -1
  end
end
if ARGV[3] ~= ep or tonumber(ARGV[1]) > off then
  local v = ARGV[1]
  if ARGV[3] ~= '' then v = v .. ':' .. ARGV[3] end
  redis.call('SET', KEYS[1], v)
end
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

// Ack records p if it is past the stored position of its epoch, or of
// another epoch.
func (a *RedisAcks) Ack(ctx context.Context, keyID, streamID string, p Position) error {
	if err := a.script.Run(ctx, a.rdb, []string{a.key(keyID, streamID)}, p.Offset, a.ttl.Milliseconds(), p.Epoch).Err(); err != nil {
		return fmt.Errorf("ws: ack: %w", err)
	}
	return nil
}

// Acked returns the last acknowledged position.
func (a *RedisAcks) Acked(ctx context.Context, keyID, streamID string) (Position, bool, error) {
	v, err := a.rdb.Get(ctx, a.key(keyID, streamID)).Result()
	if errors.Is(err, redis.Nil) {
		return Position{}, false, nil
	}
	if err != nil {
		return Position{}, false, fmt.Errorf("ws: acked: %w", err)
	}
	off, epoch, _ := strings.Cut(v, ":")
	n, err := strconv.ParseInt(off, 10, 64)
	if err != nil {
		return Position{}, false, fmt.Errorf("ws: acked: stored value %q: %w", v, err)
	}
	return Position{Offset: n, Epoch: epoch}, true, nil
}
