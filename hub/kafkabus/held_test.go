package kafkabus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/kafkabus"
)

// committedOffset is the group's committed offset of partition 0 of
// topic, -1 when it has none.
func committedOffset(t *testing.T, c *kfake.Cluster, group, topic string) int64 {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 5 * time.Second}
	resp, err := client.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	for _, p := range resp.Topics[topic] {
		if p.Partition == 0 {
			return p.CommittedOffset
		}
	}
	return -1
}

// awaitCommitted polls until the group's committed offset is want; it
// fails at once when the offset passes want.
func awaitCommitted(t *testing.T, c *kfake.Cluster, group, topic string, want int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("committed offset %d", want), func() error {
		got := committedOffset(t, c, group, topic)
		if got > want {
			t.Fatalf("committed offset %d, past %d", got, want)
		}
		if got != want {
			return fmt.Errorf("committed offset %d", got)
		}
		return nil
	})
}

// offsets records the offsets a handler received and signals when it saw
// one.
type offsets struct {
	mu   sync.Mutex
	got  []int64
	vals map[int64]string
	seen map[int64]chan struct{}
}

func newOffsets() *offsets {
	return &offsets{vals: map[int64]string{}, seen: map[int64]chan struct{}{}}
}

func (o *offsets) signal(off int64) chan struct{} {
	if o.seen[off] == nil {
		o.seen[off] = make(chan struct{})
	}
	return o.seen[off]
}

func (o *offsets) handler(ctx context.Context, msgs []hub.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range msgs {
		o.got = append(o.got, m.Offset)
		o.vals[m.Offset] = string(m.Value)
		ch := o.signal(m.Offset)
		select {
		case <-ch:
		default:
			close(ch)
		}
	}
	return nil
}

func (o *offsets) await(t *testing.T, off int64) {
	t.Helper()
	o.mu.Lock()
	ch := o.signal(off)
	o.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("offset %d never handled", off)
	}
}

// TestGroupCommitStaysAtHeldOffset: while the handler reports holding the
// message at offset 3, the group never commits past it, so a member that
// takes over after a crash gets that message again; once nothing is held
// the commit moves to the end.
func TestGroupCommitStaysAtHeldOffset(t *testing.T) {
	t.Parallel()
	const topic, group = "fleethub.events", "pipeline"
	c := newCluster(t)
	cfg := kafkabus.Config{Partitions: 1}
	first := newBusConfig(t, c, cfg, topic)
	var msgs []hub.Message
	for i := range 10 {
		msgs = append(msgs, hub.Message{Topic: topic, Key: key(1), Value: fmt.Appendf(nil, "m%d", i)})
	}
	if err := first.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}

	// The first member handles all ten and keeps holding offset 3.
	held := func(partition int) (int64, bool) { return 3, partition == 0 }
	a := newOffsets()
	ctx, cancel := context.WithCancel(context.Background())
	errc := subscribe(ctx, first, hub.Subscription{Topic: topic, Group: group, Start: hub.StartEarliest, Held: held}, a.handler)
	a.await(t, 9)
	awaitCommitted(t, c, group, topic, 3)
	cancel() // the member goes away with offset 3 still held
	awaitReturn(t, errc)
	if got := committedOffset(t, c, group, topic); got != 3 {
		t.Fatalf("committed offset %d after the member left, want 3", got)
	}

	// The next member starts at the held message. It holds nothing, so
	// its commit reaches the end.
	second := newBusConfig(t, c, cfg, topic)
	b := newOffsets()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	errc = subscribe(ctx, second, hub.Subscription{Topic: topic, Group: group, Start: hub.StartEarliest,
		Held: func(int) (int64, bool) { return 0, false }}, b.handler)
	b.await(t, 9)
	awaitCommitted(t, c, group, topic, 10)
	cancel()
	awaitReturn(t, errc)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.got[0] != 3 || b.vals[3] != "m3" {
		t.Fatalf("the next member started at offset %d (%q), want the held message 3 (m3)", b.got[0], b.vals[b.got[0]])
	}
}
