// Package redisresend makes, for tests, a go-redis client that sends a
// command again although Redis ran it: go-redis resends a command whose
// reply did not come within its read timeout, on a new connection, and a
// call that is not idempotent must find its first run's answer instead
// of acting twice. The client reaches Redis through an
// internal/faultproxy Proxy that holds the replies of its open
// connection past the read timeout when asked (Hold).
package redisresend

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/faultproxy"
)

// ReadTimeout is the client's read timeout; Hold holds replies for
// HeldFor, long past it.
const (
	ReadTimeout = 150 * time.Millisecond
	HeldFor     = 400 * time.Millisecond
)

// Client is a go-redis client of one connection at a time, through a
// proxy.
type Client struct {
	*redis.Client
	proxy *faultproxy.Proxy
}

// New connects a client to the Redis of opt through a proxy; both are
// closed when the test ends. Its pool holds one connection, so that a
// command resent after a held reply goes on a new one, which is not held.
func New(tb testing.TB, opt *redis.Options) *Client {
	tb.Helper()
	proxy, err := faultproxy.New(opt.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { proxy.Close() })
	o := *opt
	o.Addr = proxy.Addr()
	o.ReadTimeout, o.PoolSize, o.MinIdleConns, o.MaxRetries = ReadTimeout, 1, 0, 3
	o.MinRetryBackoff, o.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
	c := &Client{Client: redis.NewClient(&o), proxy: proxy}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Hold makes sure the client has its connection open, then holds every
// reply on it for HeldFor: the client's next command times out, runs in
// Redis all the same, and is sent again on a new connection.
func (c *Client) Hold(tb testing.TB) {
	tb.Helper()
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatal(err)
	}
	c.proxy.Slow(HeldFor)
}
