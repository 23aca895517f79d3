package streams_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/testredis"
)

// TestRedisLeaseHasOneHolder: one node holds the reaper's lease and
// renews it; another takes it only once the holder stopped renewing.
func TestRedisLeaseHasOneHolder(t *testing.T) {
	rdb := testredis.Client(t)
	ctx := context.Background()
	name := fmt.Sprintf("test-%d", time.Now().UnixNano())
	a := streams.NewRedisLease(rdb, name, "node-a", time.Minute)
	b := streams.NewRedisLease(rdb, name, "node-b", time.Minute)
	for _, c := range []struct {
		l    *streams.RedisLease
		want bool
	}{{a, true}, {b, false}, {a, true}, {b, false}} {
		if held, err := c.l.Hold(ctx); err != nil || held != c.want {
			t.Fatalf("hold: %v %v, want %v", held, err, c.want)
		}
	}
	// the holder stops renewing: its lease runs out (here: removed as
	// expiry would) and the other node takes it
	if err := rdb.Del(ctx, "fleethub:lease:"+name).Err(); err != nil {
		t.Fatal(err)
	}
	if held, err := b.Hold(ctx); err != nil || !held {
		t.Fatalf("b after a's lease ran out: %v %v", held, err)
	}
	if held, err := a.Hold(ctx); err != nil || held {
		t.Fatalf("a while b holds: %v %v", held, err)
	}
	if ttl, err := rdb.PTTL(ctx, "fleethub:lease:"+name).Result(); err != nil || ttl <= 0 {
		t.Fatalf("the lease has no expiry: %v %v", ttl, err)
	}
}
