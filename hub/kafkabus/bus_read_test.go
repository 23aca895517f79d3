package kafkabus_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
)

func TestGrouplessReadsFromStart(t *testing.T) {
	t.Parallel()
	const topic = "fleethub.events"
	c := newCluster(t)
	b := newBus(t, c, topic)
	publishKeys(t, b, topic, 5, 20, 20) // "old" messages

	// StartEarliest sees everything retained.
	col := newCollector(100)
	ctx, cancel := context.WithCancel(context.Background())
	errc := subscribe(ctx, b, hub.Subscription{Topic: topic, Start: hub.StartEarliest},
		func(ctx context.Context, msgs []hub.Message) error { col.add(msgs); return nil })
	col.wait(t)
	cancel()
	awaitReturn(t, errc)
	col.checkExactlyOnce(t)

	// StartLatest sees only what is published after Subscribe.
	var sawOld, sawNew atomic.Int64
	ctx, cancel = context.WithCancel(context.Background())
	errc = subscribe(ctx, b, hub.Subscription{Topic: topic, Start: hub.StartLatest},
		func(ctx context.Context, msgs []hub.Message) error {
			for _, m := range msgs {
				if strings.HasPrefix(string(m.Value), "new") {
					sawNew.Add(1)
				} else {
					sawOld.Add(1)
				}
			}
			return nil
		})
	// the subscription's start is not observable: publish until it sees one
	eventually(t, "StartLatest to see a new message", func() error {
		if err := b.Publish(context.Background(), hub.Message{Topic: topic, Key: key(1), Value: []byte("new")}); err != nil {
			t.Fatal(err)
		}
		if sawNew.Load() == 0 {
			return errors.New("none seen")
		}
		return nil
	})
	cancel()
	awaitReturn(t, errc)
	if sawNew.Load() == 0 || sawOld.Load() != 0 {
		t.Fatalf("StartLatest saw %d new and %d old messages", sawNew.Load(), sawOld.Load())
	}
}

func TestRange(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey = "fleethub.locations", 3, 100
	c := newCluster(t)
	b := newBus(t, c, topic)
	publishKeys(t, b, topic, keys, perKey, 7)

	total := 0
	var busy int // a partition holding at least 30 messages
	for p := range 8 {
		msgs, err := b.Range(topic, p, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		col := newCollector(0)
		col.add(msgs)
		for i, m := range msgs {
			if time.Since(m.Time) > time.Minute || time.Until(m.Time) > time.Minute {
				t.Fatalf("partition %d message %d: time %v", p, i, m.Time)
			}
			if m.Offset != int64(i) || m.Partition != p || m.Topic != topic {
				t.Fatalf("partition %d message %d: %s/%d@%d", p, i, m.Topic, m.Partition, m.Offset)
			}
		}
		if len(col.errs) > 0 {
			t.Fatalf("partition %d: %v", p, col.errs)
		}
		if len(msgs) >= 30 {
			busy = p
		}
		total += len(msgs)
	}
	if total != keys*perKey {
		t.Fatalf("Range over all partitions gave %d messages, want %d", total, keys*perKey)
	}

	all, _ := b.Range(topic, busy, 0, 1000)
	tests := []struct {
		name      string
		from      int64
		max       int
		wantFirst int64
		wantLen   int
	}{
		{"window", 5, 10, 5, 10},
		{"before start", -7, 3, 0, 3},
		{"tail", int64(len(all) - 4), 100, int64(len(all) - 4), 4},
		{"at end", int64(len(all)), 10, 0, 0},
		{"past end", int64(len(all) + 50), 10, 0, 0},
		{"zero max", 0, 0, 0, 0},
	}
	for _, tt := range tests {
		got, err := b.Range(topic, busy, tt.from, tt.max)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(got) != tt.wantLen {
			t.Fatalf("%s: %d messages, want %d", tt.name, len(got), tt.wantLen)
		}
		for i, m := range got {
			if want := all[int(tt.wantFirst)+i]; m.Offset != want.Offset || string(m.Value) != string(want.Value) {
				t.Fatalf("%s: message %d is %d %q, want %d %q", tt.name, i, m.Offset, m.Value, want.Offset, want.Value)
			}
		}
	}
	if _, err := b.Range(topic, 8, 0, 10); err == nil {
		t.Error("Range of partition 8 of 8: no error")
	}
	if _, err := b.Range("no.such.topic", 0, 0, 10); err == nil {
		t.Error("Range of a missing topic: no error")
	}
}

func TestExistingTopicKeepsItsPartitions(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(3, "seeded"))
	b := newBus(t, c, "seeded")
	publishKeys(t, b, "seeded", 20, 5, 5)
	total := 0
	for p := range 3 {
		msgs, err := b.Range("seeded", p, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		total += len(msgs)
	}
	if total != 100 {
		t.Fatalf("3 partitions hold %d messages, want 100", total)
	}
	if _, err := b.Range("seeded", 3, 0, 10); err == nil {
		t.Error("Range of partition 3 of 3: no error")
	}
	// A topic first seen by Publish is created on the fly.
	if err := b.Publish(context.Background(), hub.Message{Topic: "fresh", Key: key(1), Value: []byte("x")}); err != nil {
		t.Fatalf("publish to a new topic: %v", err)
	}
}
