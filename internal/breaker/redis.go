package breaker

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
)

// RedisHook is a go-redis hook that sends a client's commands through b:
// while b is open every command and dial fails at once with ErrOpen, and
// a command the server did not answer (a dial error, a timeout, a closed
// connection) counts as a failure. Answers from the server, redis.Nil
// and script errors included, count as successes. The hook sits outside
// go-redis's retries, so an open breaker also skips them.
func RedisHook(b *Breaker) redis.Hook { return redisHook{b} }

type redisHook struct{ b *Breaker }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if err := h.b.Allow(); err != nil {
			return nil, err
		}
		conn, err := next(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			// counted at once: the command's own retries then fail
			// fast instead of each waiting out a backoff and a dial
			h.b.Failure(err)
		}
		return conn, err
	}
}

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := h.b.Allow(); err != nil {
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		h.record(ctx, err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := h.b.Allow(); err != nil {
			for _, c := range cmds {
				c.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		h.record(ctx, err)
		return err
	}
}

func (h redisHook) record(ctx context.Context, err error) {
	if RedisFailed(ctx, err) {
		h.b.Failure(err)
	} else {
		h.b.Success()
	}
}

// RedisFailed reports whether err from a command under ctx means that the
// server did not answer, rather than answering with an error, or that the
// caller gave up.
func RedisFailed(ctx context.Context, err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, ErrOpen) || ctx.Err() != nil {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return false // the server's own answer (NOSCRIPT, WRONGTYPE, a script error)
	}
	return true
}
