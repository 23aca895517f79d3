package roadspeed

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/internal/testredis"
)

// TestSharedAcrossNodes: two nodes on one Redis, each with its own
// table. What one node's trips were driven is read by the other once
// flushed, the two nodes' observations of one road summed; weeks past
// the retention are not read; with Redis unreachable a node answers from
// its own table, and what it could not flush is kept for the next flush.
func TestSharedAcrossNodes(t *testing.T) {
	ctx := context.Background()
	rdb := testredis.Client(t)
	prefix := testredis.Prefix(t, rdb, "speeds")
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := NewShared(New(Config{Now: clock}), rdb, prefix, nil)
	b := NewShared(New(Config{Now: clock}), rdb, prefix, nil)
	h := HourOfWeek(now)
	for _, v := range []float64{20, 30} {
		a.Observe("org", 3, false, now, v)
	}
	b.Observe("org", 3, false, now, 40)
	if s := b.Observed(ctx, "org", []int{h}); s.Edges != 0 {
		t.Fatalf("read before any flush: %d edges", s.Edges)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]*Shared{"a": a, "b": b} {
		s := n.Observed(ctx, "org", []int{h})
		if v, ok := s.Speed(3, false); !ok || math.Abs(v-30) > 1e-9 {
			t.Errorf("node %s reads %v %v, want the mean of both nodes' 20, 30 and 40", name, v, ok)
		}
	}
	// five weeks later the week is past the retention
	later := now.Add(5 * 7 * 24 * time.Hour)
	c := NewShared(New(Config{Now: func() time.Time { return later }}), rdb, prefix, nil)
	if s := c.Observed(ctx, "org", []int{h}); s.Edges != 0 {
		t.Errorf("five weeks on: %d edges read", s.Edges)
	}
	// Redis away: the node's own table answers, and the flush keeps what
	// it could not add
	gone := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { gone.Close() })
	d := NewShared(New(Config{Now: clock}), gone, prefix, nil)
	for range 3 {
		d.Observe("org", 9, true, now, 12)
	}
	if v, ok := d.Observed(ctx, "org", []int{h}).Speed(9, true); !ok || v != 12 {
		t.Errorf("without Redis: %v %v, want the node's own 12 km/h", v, ok)
	}
	if err := d.Flush(ctx); err == nil {
		t.Fatal("a flush to an unreachable Redis succeeded")
	}
	d.rdb = rdb
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok := a.Observed(ctx, "org", []int{h}).Speed(9, true); !ok || v != 12 {
		t.Errorf("after Redis came back: %v %v, want the kept 12 km/h", v, ok)
	}
}
