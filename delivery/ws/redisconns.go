package ws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisConns counts connections across nodes: one Redis counter per key
// and per organization, checked and incremented by one Lua script,
// decremented when a connection closes. Each node refreshes the TTL of
// the counters its connections hold every TTL/3, so the counts of a
// crashed node expire once no live node holds a connection of that key
// or organization. When Redis fails, the node checks and counts its own
// connections alone (MemoryConns), which it keeps in any case.
type RedisConns struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
	local  *MemoryConns
	script *redis.Script

	log      *slog.Logger // failures of the counters' upkeep
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

var _ Conns = (*RedisConns)(nil)

// DefaultConnsTTL is the lifetime of a connection counter not refreshed.
const DefaultConnsTTL = time.Minute

// connScript: KEYS key counter, org counter, the call's key; ARGV key
// cap, org cap, ttl in ms, the call key's ttl in ms. Returns 0 when
// counted, 1 when the key is at its cap, 2 when the organization is.
//
// go-redis sends a command again when its reply did not come within the
// read timeout, though Redis may have run it: the call's key holds the
// first run's answer, and a second run answers it without counting the
// connection twice (a count that would stay while the node holds any
// connection of the key, since each refresh extends it).
const connScript = `
local done = redis.call('GET', KEYS[3])
if done then return tonumber(done) end
local r = 0
if tonumber(redis.call('GET', KEYS[1]) or '0') >= tonumber(ARGV[1]) then r = 1
elseif tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[2]) then r = 2
else
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('INCR', KEYS[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
redis.call('SET', KEYS[3], r, 'PX', ARGV[4])
return r`

// releaseScript decrements both counters, never below zero, once per
// call key (KEYS[3], ARGV[1] its ttl in ms): a release sent again
// decrements nothing more.
const releaseScript = `
if redis.call('SET', KEYS[3], 1, 'NX', 'PX', ARGV[1]) == false then return 0 end
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`

// callTTL outlives every resend of a call: go-redis's retries of one
// command end within a few read timeouts.
const callTTL = 10 * time.Second

var releaser = redis.NewScript(releaseScript)

// NewRedisConns counts in rdb; ttl <= 0 means DefaultConnsTTL. Failures
// of the counters' upkeep are logged to log (nil: discarded). Close stops
// the TTL refresh.
func NewRedisConns(rdb redis.UniversalClient, ttl time.Duration, log *slog.Logger) *RedisConns {
	if ttl <= 0 {
		ttl = DefaultConnsTTL
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &RedisConns{
		rdb: rdb, prefix: "fleethub:wsconns:", ttl: ttl, local: NewMemoryConns(), log: log,
		script: redis.NewScript(connScript),
		stop:   make(chan struct{}), done: make(chan struct{}),
	}
	go r.refresh()
	return r
}

func (r *RedisConns) keyOf(keyID string) string { return r.prefix + "key:" + keyID }
func (r *RedisConns) orgOf(org string) string   { return r.prefix + "org:" + org }

// callKey is the key of one acquire or release call (see connScript).
func (r *RedisConns) callKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return r.prefix + "call:" + hex.EncodeToString(b[:])
}

// Acquire implements Conns.
func (r *RedisConns) Acquire(ctx context.Context, org, keyID string, keyCap, orgCap int) (func(), error) {
	keys := []string{r.keyOf(keyID), r.orgOf(org)}
	n, err := r.script.Run(ctx, r.rdb, append(keys, r.callKey()), keyCap, orgCap, r.ttl.Milliseconds(), callTTL.Milliseconds()).Int()
	if err != nil {
		// Redis is down: this node's own count decides
		return r.local.Acquire(ctx, org, keyID, keyCap, orgCap)
	}
	switch n {
	case 1:
		return nil, &CapError{Scope: "key", Cap: keyCap}
	case 2:
		return nil, &CapError{Scope: "organization", Cap: orgCap}
	}
	// the local count is kept for the TTL refresh and the fallback;
	// uncapped here since Redis already decided
	localRelease, err := r.local.Acquire(ctx, org, keyID, int(^uint(0)>>1), int(^uint(0)>>1))
	if err != nil { // uncapped, it takes a slot; the counters in Redis are given back
		r.release(keys)
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			localRelease()
			r.release(keys)
		})
	}, nil
}

// release decrements a connection's counters in Redis; a failure leaves
// them to their TTL.
func (r *RedisConns) release(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), acksTimeout)
	defer cancel()
	if err := releaser.Run(ctx, r.rdb, []string{keys[0], keys[1], r.callKey()}, callTTL.Milliseconds()).Err(); err != nil {
		r.log.Debug("releasing a websocket connection's counters failed; they expire with their TTL", "keys", keys, "error", err)
	}
}

// refresh extends the TTL of every counter this node holds a connection
// of, every TTL/3.
func (r *RedisConns) refresh() {
	defer close(r.done)
	t := time.NewTicker(r.ttl / 3)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		keys, orgs := r.local.held()
		if len(keys)+len(orgs) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.ttl/3)
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.PExpire(ctx, r.keyOf(k), r.ttl)
			}
			for _, o := range orgs {
				p.PExpire(ctx, r.orgOf(o), r.ttl)
			}
			return nil
		})
		cancel()
		// logged once as the refresh starts failing (Redis is down: the
		// counters expire and each node counts its own) and once back
		switch {
		case err != nil && !failing:
			r.log.Warn("refreshing websocket connection counters in Redis failed", "error", err)
		case err == nil && failing:
			r.log.Info("refreshing websocket connection counters in Redis works again")
		}
		failing = err != nil
	}
}

// Close stops the TTL refresh.
func (r *RedisConns) Close() error {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
	return nil
}
