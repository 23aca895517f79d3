// Package testredis connects tests to the Redis named by
// FLEETHUB_TEST_REDIS_URL. Without that variable the tests skip, except
// under CI=true, where they fail.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Env names the test Redis.
const Env = "FLEETHUB_TEST_REDIS_URL"

// Options are the test Redis's connection options, or the test skips
// (fails under CI=true).
func Options(tb testing.TB) *redis.Options {
	tb.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set but CI=true: Redis tests must run in CI", Env)
		}
		tb.Skipf("%s is not set: skipping this Redis test (e.g. %s=redis://127.0.0.1:6379/0)", Env, Env)
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatalf("%s: %v", Env, err)
	}
	return opt
}

// Client is a new client (a node) of the test Redis, closed when tb
// ends, after a ping.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	return Connect(tb, Options(tb))
}

// Connect is a new client with opt (the test Redis's Options, perhaps
// changed), closed when tb ends, after a ping.
func Connect(tb testing.TB, opt *redis.Options) *redis.Client {
	tb.Helper()
	c := redis.NewClient(opt)
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Logf("closing the test Redis client: %v", err)
		}
	})
	if err := c.Ping(context.Background()).Err(); err != nil {
		tb.Fatalf("ping %s: %v", opt.Addr, err)
	}
	return c
}

// Prefix is a key prefix of its own for tb, under name; the keys under
// it are deleted when tb ends.
func Prefix(tb testing.TB, c *redis.Client, name string) string {
	tb.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatal(err)
	}
	prefix := "fleethub:" + name + "-test:" + hex.EncodeToString(b) + ":"
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}
