package dedup

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a window shared by every node using the same Redis and prefix.
// It is safe for concurrent use.
type Redis struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// NewRedis returns a window storing ids as keys prefix+id that expire
// after ttl; "" means DefaultPrefix and a ttl <= 0 DefaultTTL. TTLs are
// kept in milliseconds, at least one.
func NewRedis(client redis.UniversalClient, prefix string, ttl time.Duration) *Redis {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Redis{client: client, prefix: prefix, ttl: max(ttl, time.Millisecond)}
}

// Seen records id with SET NX PX, one atomic round trip, and reports
// whether the key already existed.
func (r *Redis) Seen(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, ErrEmptyID
	}
	set, err := r.client.SetNX(ctx, r.prefix+id, "1", r.ttl).Result()
	if err != nil {
		return false, fmt.Errorf("dedup: redis set: %w", err)
	}
	return !set, nil
}

// Forget deletes id's key, so that its next Seen reports false.
func (r *Redis) Forget(ctx context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	if err := r.client.Del(ctx, r.prefix+id).Err(); err != nil {
		return fmt.Errorf("dedup: redis del: %w", err)
	}
	return nil
}
