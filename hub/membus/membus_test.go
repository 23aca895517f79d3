package membus_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/membus"
)

func publish(t *testing.T, b *membus.Bus, topic string, n, keys int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("v%d", i%keys)
		if err := b.Publish(context.Background(), hub.Message{Topic: topic, Key: []byte(k), Value: []byte(fmt.Sprintf("%s:%d", k, i/keys))}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupGetsEveryMessageOnceInKeyOrder(t *testing.T) {
	b := membus.New(membus.Config{Partitions: 4})
	defer b.Close(context.Background())
	publish(t, b, "t", 2000, 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	seen := map[string]int{}
	total := 0
	failed := false
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
		}
		return nil
	}
	// two members of one group: every message handled once
	for i := 0; i < 2; i++ {
		go b.Subscribe(ctx, hub.Subscription{Topic: "t", Group: "g", Start: hub.StartEarliest}, handler)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		done := total >= 2000
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if total != 2000 {
		t.Fatalf("handled %d of 2000", total)
	}
}

func TestGroupResumesAfterCommit(t *testing.T) {
	b := membus.New(membus.Config{Partitions: 2})
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
	b := membus.New(membus.Config{Partitions: 1, MaxPerPart: 50})
	defer b.Close(context.Background())
	publish(t, b, "t", 120, 1)
	msgs, err := b.Range("t", 0, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 50 || msgs[0].Offset != 70 || msgs[49].Offset != 119 {
		t.Fatalf("retained %d from %d", len(msgs), msgs[0].Offset)
	}
	if _, err := b.Range("t", 5, 0, 1); err == nil {
		t.Fatal("partition out of range accepted")
	}
	b.Close(context.Background())
	if err := b.Publish(context.Background(), hub.Message{Topic: "t"}); !errors.Is(err, hub.ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
}
