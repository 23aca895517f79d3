package streams

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Changes tells the nodes that share a store that a stream's record
// changed, so that a node brings its registry up to date before it
// matches a message sent after the change, instead of at its next poll:
// a stream started on node A takes the events ingested once its start
// answered, whichever node consumes them. One node needs none (its own
// starts, stops and changes install themselves at once).
type Changes interface {
	// Bump counts a change, after the record is in the store.
	Bump(ctx context.Context) error
	// Version is the number of changes counted so far.
	Version(ctx context.Context) (int64, error)
}

// RedisChanges counts changes in one Redis key.
type RedisChanges struct {
	rdb redis.UniversalClient
	key string
}

// NewRedisChanges counts changes in Redis.
func NewRedisChanges(rdb redis.UniversalClient) *RedisChanges {
	return &RedisChanges{rdb: rdb, key: "fleethub:streams:version"}
}

// Bump implements Changes.
func (c *RedisChanges) Bump(ctx context.Context) error {
	if err := c.rdb.Incr(ctx, c.key).Err(); err != nil {
		return fmt.Errorf("streams: count a change: %w", err)
	}
	return nil
}

// Version implements Changes.
func (c *RedisChanges) Version(ctx context.Context) (int64, error) {
	n, err := c.rdb.Get(ctx, c.key).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("streams: changes: %w", err)
	}
	return n, nil
}

// DefaultClockSkew is RegistryConfig.ClockSkew's default.
const DefaultClockSkew = 250 * time.Millisecond

// ShareChanges makes the registry count its service's changes in c and
// catch up with other nodes' (CatchUp); call before Run.
func (r *Registry) ShareChanges(c Changes) { r.changes = c }

// changed counts a change this node made to a stream's record; a failure
// is logged (other nodes then see the change at their next poll).
func (r *Registry) changed(ctx context.Context) {
	if r.changes == nil {
		return
	}
	if err := r.changes.Bump(ctx); err != nil {
		r.log.Warn("stream change not announced; other nodes see it at their next poll", "error", err)
	}
}

// CatchUp brings the registry up to date with every change counted
// before a message ingested at ingested was sent: unless a check began
// after that (less the clock skew allowed between nodes), it reads the
// changes' version and, if some are new, the store. It costs nothing on
// one node, and one read of the version per batch of fresh messages on
// several. A failure is returned at most once every ten seconds.
func (r *Registry) CatchUp(ctx context.Context, ingested time.Time) error {
	if r.changes == nil || ingested.UnixNano() < r.checked.Load()-int64(r.cfg.ClockSkew) {
		return nil
	}
	r.checkMu.Lock()
	defer r.checkMu.Unlock()
	if ingested.UnixNano() < r.checked.Load()-int64(r.cfg.ClockSkew) {
		return nil // another partition checked meanwhile
	}
	start := r.now()
	err := r.catchUp(ctx)
	// a failed check is not tried again for the messages sent before it
	// began: the poll catches up within PollEvery
	r.checked.Store(start.UnixNano())
	if err != nil && start.Sub(r.reported) >= catchUpReportEvery {
		r.reported = start
		return err
	}
	return nil
}

// catchUpReportEvery is how often CatchUp reports failures.
const catchUpReportEvery = 10 * time.Second

// catchUp reads the store if the changes' version moved; checkMu held.
func (r *Registry) catchUp(ctx context.Context) error {
	v, err := r.changes.Version(ctx)
	if err != nil {
		return err
	}
	if v > r.synced {
		if err := r.refresh(ctx); err != nil {
			return fmt.Errorf("streams: catch up: %w", err)
		}
		r.synced = v
	}
	return nil
}
