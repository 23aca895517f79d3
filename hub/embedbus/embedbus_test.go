package embedbus_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
)

func publish(t *testing.T, b *embedbus.Bus, topic string, n, keys int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("v%d", i%keys)
		if err := b.Publish(context.Background(), hub.Message{Topic: topic, Key: []byte(k), Value: []byte(fmt.Sprintf("%s:%d", k, i/keys))}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupGetsEveryMessageOnceInKeyOrder(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 4})
	defer b.Close(context.Background())
	publish(t, b, "t", 2000, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	seen := map[string]int{}
	total := 0
	failed := false
	all := make(chan struct{}) // closed by the handler at the 2000th message
	handler := func(_ context.Context, msgs []hub.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if !failed { // the first batch fails once: it must come back whole
			failed = true
			return errors.New("transient")
		}
		for _, m := range msgs {
			_, num, _ := strings.Cut(string(m.Value), ":")
			n, _ := strconv.Atoi(num)
			key := string(m.Key)
			if want := seen[key]; n != want {
				t.Errorf("key %s: got #%d, want #%d", key, n, want)
			}
			seen[key] = n + 1
			total++
			if total == 2000 {
				close(all)
			}
		}
		return nil
	}
	// two members of one group: every message handled once
	var members sync.WaitGroup
	for i := 0; i < 2; i++ {
		members.Go(func() {
			b.Subscribe(ctx, hub.Subscription{Topic: "t", Group: "g", Start: hub.StartEarliest}, handler)
		})
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
	}
	// Subscribe returns once its handlers did: a batch handled twice is
	// counted by then.
	cancel()
	members.Wait()
	mu.Lock()
	defer mu.Unlock()
	if total != 2000 {
		t.Fatalf("handled %d of 2000", total)
	}
}

func TestGroupResumesAfterCommit(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 2})
	defer b.Close(context.Background())
	publish(t, b, "t", 100, 5)
	count := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var mu sync.Mutex
		n := 0
		b.Subscribe(ctx, hub.Subscription{Topic: "t", Group: "g", Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
			mu.Lock()
			n += len(msgs)
			mu.Unlock()
			return nil
		})
		return n
	}
	if n := count(); n != 100 {
		t.Fatalf("first member: %d", n)
	}
	publish(t, b, "t", 10, 5)
	if n := count(); n != 10 {
		t.Fatalf("second member resumed with %d messages, want only the 10 new ones", n)
	}
}

func TestRetentionAndRange(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 1, MemBytes: 1 << 20})
	defer b.Close(context.Background())
	big := strings.Repeat("x", 10<<10)
	for i := range 300 {
		if err := b.Publish(context.Background(), hub.Message{Topic: "t", Key: []byte("k"), Value: []byte(fmt.Sprint(i, big))}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := b.Range(context.Background(), "t", 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || len(msgs) > 100 || msgs[len(msgs)-1].Offset != 300 {
		t.Fatalf("retained %d ending at %d; want at most 1 MiB of the newest, ending at 300", len(msgs), msgs[len(msgs)-1].Offset)
	}
	if _, err := b.Range(context.Background(), "t", 5, 0, 1); err == nil {
		t.Fatal("partition out of range accepted")
	}
	b.Close(context.Background())
	if err := b.Publish(context.Background(), hub.Message{Topic: "t"}); !errors.Is(err, hub.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
}

// consumeUntil runs a group member until it handled n messages and
// returns their values.
func consumeUntil(t *testing.T, b *embedbus.Bus, group string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string
	enough := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Subscribe(ctx, hub.Subscription{Topic: "t", Group: group, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
			mu.Lock()
			defer mu.Unlock()
			if len(got) >= n {
				return errors.New("enough")
			}
			take := min(len(msgs), n-len(got))
			for _, m := range msgs[:take] {
				got = append(got, string(m.Value))
			}
			if len(got) >= n {
				close(enough)
			}
			if take < len(msgs) {
				return errors.New("enough") // the rest comes back later
			}
			return nil
		})
	}()
	select {
	case <-enough:
	case <-time.After(20 * time.Second):
		t.Fatalf("group %s: %d of %d messages", group, len(got), n)
	}
	cancel()
	<-done
	return got
}

func TestDurableBusResumesAfterReopen(t *testing.T) {
	dir := t.TempDir()
	b, err := embedbus.Open(embedbus.Config{Dir: dir, Partitions: 1, MaxBatch: 10})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, b, "t", 100, 1)
	first := consumeUntil(t, b, "g", 40)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err = embedbus.Open(embedbus.Config{Dir: dir, Partitions: 1, MaxBatch: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	publish(t, b, "t", 10, 1)
	rest := consumeUntil(t, b, "g", 70)
	all := append(first, rest...)
	for i, v := range all {
		if want := fmt.Sprintf("v0:%d", i); i < 100 && v != want {
			t.Fatalf("message %d after a reopen is %q, want %q", i, v, want)
		}
	}
	// a new group reads everything retained, offsets continuing past the reopen
	msgs, err := b.Range(context.Background(), "t", 0, 1, 1000)
	if err != nil || len(msgs) != 110 || msgs[109].Offset != 110 {
		t.Fatalf("Range after reopen: %d messages, %v", len(msgs), err)
	}
}

// Committed offsets are written only once BeforeCommit says what the
// handlers did is durable: while it fails the group's position is not
// recorded, and a reopened bus hands the messages again.
func TestCommitWaitsForBeforeCommit(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		resume string
	}{
		{"durable", nil, "v0:40"},
		{"not durable", errors.New("stream log fsync failed"), "v0:0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var mu sync.Mutex
			calls := 0
			cfg := embedbus.Config{Dir: dir, Partitions: 1, MaxBatch: 10, CommitEvery: 10 * time.Millisecond,
				BeforeCommit: func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					calls++
					return c.err
				}}
			b, err := embedbus.Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			publish(t, b, "t", 100, 1)
			consumeUntil(t, b, "g", 40)
			err = b.Close(context.Background())
			if (err != nil) != (c.err != nil) {
				t.Fatalf("Close: %v", err)
			}
			mu.Lock()
			if calls == 0 {
				t.Error("BeforeCommit never called")
			}
			mu.Unlock()
			cfg.BeforeCommit = nil
			b, err = embedbus.Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(context.Background())
			if got := consumeUntil(t, b, "g", 1); got[0] != c.resume {
				t.Errorf("after a reopen the group resumes at %q, want %q", got[0], c.resume)
			}
		})
	}
}

// A message's partition is its key's 32-bit FNV-1a hash modulo the
// partition count, as it was when a log on disk was written: one call
// with messages of two topics and many keys puts each message in its
// topic's partition of its key, in the call's order within a partition,
// with its key and value intact.
func TestPublishPartitionsByKey(t *testing.T) {
	const parts = 8
	b := embedbus.New(embedbus.Config{Partitions: parts})
	defer b.Close(context.Background())
	var msgs []hub.Message
	for i := range 600 {
		topic := []string{"telemetry", "events"}[i%2]
		key := fmt.Sprintf("vehicle-%d", i%37)
		msgs = append(msgs, hub.Message{Topic: topic, Key: []byte(key), Value: []byte(fmt.Sprintf("%s %d", key, i))})
	}
	if err := b.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{} // topic/partition → values in order
	for _, m := range msgs {
		h := fnv.New32a()
		h.Write(m.Key)
		tp := fmt.Sprintf("%s/%d", m.Topic, h.Sum32()%parts)
		want[tp] = append(want[tp], string(m.Value))
	}
	for _, topic := range []string{"telemetry", "events"} {
		for p := range parts {
			got, err := b.Range(context.Background(), topic, p, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var vals []string
			for _, m := range got {
				if !strings.HasPrefix(string(m.Value), string(m.Key)+" ") {
					t.Errorf("%s/%d: key %q with value %q", topic, p, m.Key, m.Value)
				}
				vals = append(vals, string(m.Value))
			}
			if tp := fmt.Sprintf("%s/%d", topic, p); strings.Join(vals, ",") != strings.Join(want[tp], ",") {
				t.Errorf("%s: %d messages %v, want %d %v", tp, len(vals), vals, len(want[tp]), want[tp])
			}
		}
	}
}
