package dedup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// seenValue is the value of a key recorded as seen; a claim is "c" and
// the token of the call that claimed it (claimToken).
const seenValue = "1"

// claimScript sets a missing key to the claim ARGV[2] for the lease
// (ARGV[1], ms) and answers 0; it answers 1 for another claim and 2 for
// a seen id. A key that holds ARGV[2] already was claimed by this very
// call, run before: go-redis sends a command again when its reply did
// not come within the read timeout, though Redis may have run it, and
// the call must not then find its own claim in flight.
const claimScript = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
  return 0
end
if v == ARGV[2] then return 0 end
if string.sub(v, 1, 1) == 'c' then return 1 end
return 2`

// claimToken is a call's claim value: "c", 16 random hex digits and the
// id's place in the call (so that an id twice in one ClaimAll is claimed
// once, in flight the second time).
func claimToken(call string, i int) string { return "c" + call + ":" + strconv.Itoa(i) }

// newCall names one claiming call.
func newCall() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Redis is a window shared by every node using the same Redis and prefix.
// It is safe for concurrent use.
type Redis struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
	lease  time.Duration
	claim  *redis.Script
}

// NewRedis returns a window storing ids as keys prefix+id that expire
// after ttl; "" means DefaultPrefix and a ttl <= 0 DefaultTTL. TTLs are
// kept in milliseconds, at least one. Claims last DefaultLease.
func NewRedis(client redis.UniversalClient, prefix string, ttl time.Duration) *Redis {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Redis{client: client, prefix: prefix, ttl: max(ttl, time.Millisecond), lease: DefaultLease, claim: redis.NewScript(claimScript)}
}

// Seen records id with claimScript, one atomic round trip, for the TTL
// instead of a lease and with a record's value ("s" and the call's
// token: any value other than a claim's reads as seen), and reports
// whether the key already existed (recorded or claimed). A Seen sent
// again finds its own record and is not a duplicate.
func (r *Redis) Seen(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, ErrEmptyID
	}
	n, err := r.claim.Run(ctx, r.client, []string{r.prefix + id}, r.ttl.Milliseconds(), "s"+newCall()).Int()
	if err != nil {
		return false, fmt.Errorf("dedup: redis seen: %w", err)
	}
	return n != 0, nil
}

// Claim reserves id with one Lua script, one atomic round trip: of nodes
// racing on one id, exactly one gets Unseen.
func (r *Redis) Claim(ctx context.Context, id string) (State, error) {
	if id == "" {
		return Unseen, ErrEmptyID
	}
	n, err := r.claim.Run(ctx, r.client, []string{r.prefix + id}, max(r.lease.Milliseconds(), 1), claimToken(newCall(), 0)).Int()
	if err != nil {
		return Unseen, fmt.Errorf("dedup: redis claim: %w", err)
	}
	return claimState(n), nil
}

// ClaimAll implements Batcher: one round trip, a pipeline of the
// script Claim runs, one key per call (so that it also works on a Redis
// Cluster); each call is atomic, so of nodes racing on one id exactly
// one gets Unseen.
func (r *Redis) ClaimAll(ctx context.Context, ids []string, states []State) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	states = states[:len(ids)]
	lease := max(r.lease.Milliseconds(), 1)
	call := newCall()
	run := func(eval func(p redis.Pipeliner, key, claim string) *redis.Cmd) ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(ids))
		_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range ids {
				cmds[i] = eval(p, r.prefix+id, claimToken(call, i))
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run(func(p redis.Pipeliner, key, claim string) *redis.Cmd {
		return r.claim.EvalSha(ctx, p, []string{key}, lease, claim)
	})
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		// The script is not loaded yet (or Redis restarted): send it
		// with the ids; EVAL loads it for the next calls.
		cmds, err = run(func(p redis.Pipeliner, key, claim string) *redis.Cmd {
			return r.claim.Eval(ctx, p, []string{key}, lease, claim)
		})
	}
	if err != nil {
		return fmt.Errorf("dedup: redis claim: %w", err)
	}
	for i, cmd := range cmds {
		n, err := cmd.Int()
		if err != nil {
			return fmt.Errorf("dedup: redis claim: %w", err)
		}
		states[i] = claimState(n)
	}
	return nil
}

// claimState is the State of claimScript's answer.
func claimState(n int) State {
	switch n {
	case 0:
		return Unseen
	case 1:
		return InFlight
	}
	return Duplicate
}

// Done records ids as seen for the TTL, replacing their claims, in one
// round trip (a pipeline of SET PX, one key per command, so that it also
// works on a Redis Cluster).
func (r *Redis) Done(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Set(ctx, r.prefix+id, seenValue, r.ttl)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dedup: redis done: %w", err)
	}
	return nil
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

// ForgetAll implements Batcher: one round trip, a pipeline of DEL, one
// key per command.
func (r *Redis) ForgetAll(ctx context.Context, ids ...string) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.Del(ctx, r.prefix+id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dedup: redis del: %w", err)
	}
	return nil
}
