package pipeline

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/redislog"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/redis/go-redis/v9"
)

// redisLog is a Redis stream log under a fresh prefix, or a skip (a
// failure under CI) without FLEETHUB_TEST_REDIS_URL.
func redisLog(t *testing.T) *redislog.Log {
	t.Helper()
	u := os.Getenv("FLEETHUB_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETHUB_TEST_REDIS_URL is not set but CI=true")
		}
		t.Skip("FLEETHUB_TEST_REDIS_URL not set: skipping the Redis stream log test")
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	l := redislog.New(redislog.Config{Prefix: fmt.Sprintf("fleethub:test:pipeline:%d:", time.Now().UnixNano())}, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { l.Close() })
	return l
}

// TestRedisLogHoldsEventOnceAfterLostDone: on Redis the node crashed
// after appending a batch and before recording its events as seen (its
// claims lapse), so the bus hands the batch again to a node whose window
// does not know them. The deduplicating streams still hold each event
// once, and the webhook stream's entries reach the delivery queue again
// under their first offsets; a stream without deduplication takes them
// twice (documented re-delivery).
func TestRedisLogHoldsEventOnceAfterLostDone(t *testing.T) {
	f := newFixture(t)
	rl := redisLog(t)
	ws := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"deduplication": true}}`)
	wh := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	plain := f.start("org-a", "live", hub.KindEvents, `{}`)
	batch := orderedEvents(t, 0, 1, 2, 3)
	for range 2 { // the second node starts with an empty window
		p := New(Config{}, nil, f.reg, rl, dedup.NewLocal(100, time.Hour), nil, f.sink, f.logger)
		if err := p.Handle(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id string) []string {
		ents, err := rl.Read(t.Context(), id, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		return eventIDs(decode(t, ents))
	}
	want := []string{"evt_1", "evt_2", "evt_3"}
	for _, id := range []string{ws, wh} {
		if got := read(id); !slices.Equal(got, want) {
			t.Errorf("deduplicating stream %s holds %v, want %v", id, got, want)
		}
	}
	if got := read(plain); len(got) != 6 {
		t.Errorf("the stream without deduplication holds %v, want every event twice", got)
	}
	f.sink.mu.Lock()
	offs := map[int64]int{}
	for _, e := range f.sink.got[wh] {
		offs[e.Offset]++
	}
	f.sink.mu.Unlock()
	if len(offs) != 3 || offs[1] == 0 || offs[2] == 0 || offs[3] == 0 {
		t.Errorf("the delivery queue got offsets %v, want 1, 2 and 3 (each handed again is fine: the queue keeps one)", offs)
	}
}

// TestStreamStartedOnAnotherNodeTakesTheNextEvent: two nodes share a
// store and count stream changes in Redis; node B polls its registry
// only hourly. A stream started on node A takes an event ingested after
// its start answered, though node B consumes it; a stream B has not
// heard of without the shared count would miss it (the control).
func TestStreamStartedOnAnotherNodeTakesTheNextEvent(t *testing.T) {
	rl := redisLog(t)
	opt, err := redis.ParseURL(os.Getenv("FLEETHUB_TEST_REDIS_URL"))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	a := newFixture(t) // node A: its registry and service
	a.reg.ShareChanges(streams.NewRedisChanges(rdb))
	node := func(share bool) *Pipeline {
		reg := streams.NewRegistry(streams.RegistryConfig{PollEvery: time.Hour}, a.st, a.logger)
		if err := reg.Load(t.Context()); err != nil {
			t.Fatal(err)
		}
		if share {
			reg.ShareChanges(streams.NewRedisChanges(rdb))
		}
		return New(Config{}, nil, reg, rl, dedup.NewLocal(100, time.Hour), nil, a.sink, a.logger)
	}
	b, control := node(true), node(false)
	id := a.start("org-a", "live", hub.KindEvents, `{}`)
	ev := anEvent("org-a", "live", "evt_after_start", "veh-1", 0)
	ev.IngestedAt = time.Now()
	for _, p := range []*Pipeline{control, b} {
		if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicEvents, 1, ev)}); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := rl.Read(t.Context(), id, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(decode(t, ents)); !slices.Equal(got, []string{"evt_after_start"}) {
		t.Fatalf("the stream started on node A holds %v, want the event node B consumed once (and nothing from the node that did not catch up)", got)
	}
}
