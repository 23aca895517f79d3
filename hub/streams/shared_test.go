package streams_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/redisresend"
	"github.com/fleethub/fleethub/internal/testredis"
)

// TestRedisCountersFlushOnce: a flush the Redis client sends again after
// its read timeout (Redis ran it), and a flush the registry sends again
// under the same name after a failure, add their deltas once.
func TestRedisCountersFlushOnce(t *testing.T) {
	direct := testredis.Client(t)
	ctx := context.Background()
	id := fmt.Sprintf("str_test_%d", time.Now().UnixNano())
	warm := streams.NewRedisCounters(direct, "node-w")
	if err := warm.Flush(ctx, id+"-warm", "w", map[string]int64{"matched": 1}, 0); err != nil { // the script in Redis's cache
		t.Fatal(err)
	}
	slow := redisresend.New(t, direct.Options())
	node := streams.NewRedisCounters(slow.Client, "node-a")
	delivered := func() int64 {
		t.Helper()
		tot, _, err := warm.Totals(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return tot["delivered"]
	}
	slow.Hold(t)
	if err := node.Flush(ctx, id, "c1", map[string]int64{"delivered": 5}, 1); err != nil {
		t.Fatal(err)
	}
	if n := delivered(); n != 5 {
		t.Fatalf("a flush of 5 sent again by the client: delivered %d, want 5", n)
	}
	if err := node.Flush(ctx, id, "c1", map[string]int64{"delivered": 5}, 1); err != nil {
		t.Fatal(err)
	}
	if n := delivered(); n != 5 {
		t.Fatalf("the same flush sent again by the registry: delivered %d, want 5", n)
	}
	if err := node.Flush(ctx, id, "c2", map[string]int64{"delivered": 2}, 1); err != nil {
		t.Fatal(err)
	}
	if err := streams.NewRedisCounters(direct, "node-b").Flush(ctx, id, "c2", map[string]int64{"delivered": 3}, 0); err != nil {
		t.Fatal(err)
	}
	if n := delivered(); n != 10 {
		t.Fatalf("after the next flush and another node's of the same name: delivered %d, want 10", n)
	}
}
