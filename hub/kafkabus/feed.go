package kafkabus

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

// endPoll is how often the partitions' ends are asked while a feed
// reader waits for a new message: on Kafka a waiting reader sees a new
// message within about this long.
const endPoll = 100 * time.Millisecond

// Partitions is the partition count of an existing topic.
func (b *Bus) Partitions(ctx context.Context, topic string) (int, error) {
	return b.knownPartitions(ctx, topic)
}

// Bounds are the oldest retained offset of a partition (the log start)
// and the offset its next message will get (the high watermark).
func (b *Bus) Bounds(ctx context.Context, topic string, partition int) (first, end int64, err error) {
	res, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {kafka.FirstOffsetOf(partition), kafka.LastOffsetOf(partition)}}})
	if err != nil {
		return 0, 0, fmt.Errorf("kafkabus: offsets of %s/%d: %w", topic, partition, err)
	}
	for _, po := range res.Topics[topic] {
		if po.Partition != partition {
			continue
		}
		if po.Error != nil {
			return 0, 0, fmt.Errorf("kafkabus: offsets of %s/%d: %w", topic, partition, po.Error)
		}
		return po.FirstOffset, po.LastOffset, nil
	}
	return 0, 0, fmt.Errorf("kafkabus: offsets of %s/%d: not in the answer", topic, partition)
}

// AllBounds are the bounds of every partition of a topic, in one
// ListOffsets request.
func (b *Bus) AllBounds(ctx context.Context, topic string) ([][2]int64, error) {
	n, err := b.knownPartitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	reqs := make([]kafka.OffsetRequest, 0, 2*n)
	for i := range n {
		reqs = append(reqs, kafka.FirstOffsetOf(i), kafka.LastOffsetOf(i))
	}
	res, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: offsets of %s: %w", topic, err)
	}
	out := make([][2]int64, n)
	got := 0
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("kafkabus: offsets of %s/%d: %w", topic, po.Partition, po.Error)
		}
		if po.Partition >= 0 && po.Partition < n {
			out[po.Partition] = [2]int64{po.FirstOffset, po.LastOffset}
			got++
		}
	}
	if got != n {
		return nil, fmt.Errorf("kafkabus: offsets of %s: %d of %d partitions answered", topic, got, n)
	}
	return out, nil
}

// ReadAt is RangeContext (the feed's name for it).
func (b *Bus) ReadAt(ctx context.Context, topic string, partition int, from int64, max int) ([]hub.Message, error) {
	return b.RangeContext(ctx, topic, partition, from, max)
}

// endWatch shares one poll of the partitions' ends among every waiting
// reader of a bus: one ListOffsets per topic every endPoll while anyone
// waits, none otherwise.
type endWatch struct {
	mu      sync.Mutex // guards the fields below
	ends    map[string][]int64
	changed chan struct{} // closed (and replaced) when an end moves
	waiters map[string]int
	running bool
}

// Wait returns nil once the partition holds a message with Offset >=
// from, or ctx's error when ctx ends first.
func (b *Bus) Wait(ctx context.Context, topic string, partition int, from int64) error {
	w := &b.watch
	w.mu.Lock()
	if w.waiters == nil {
		w.waiters, w.ends, w.changed = map[string]int{}, map[string][]int64{}, make(chan struct{})
	}
	w.waiters[topic]++
	if !w.running {
		b.mu.Lock()
		closed := b.closed
		if !closed {
			b.subs.Add(1)
		}
		b.mu.Unlock()
		if closed {
			w.waiters[topic]--
			w.mu.Unlock()
			return hub.ErrClosed
		}
		w.running = true
		go b.pollEnds()
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.waiters[topic]--
		w.mu.Unlock()
	}()
	for {
		w.mu.Lock()
		ends, ch := w.ends[topic], w.changed
		w.mu.Unlock()
		if partition < len(ends) && ends[partition] > from {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.done:
			return hub.ErrClosed
		}
	}
}

// pollEnds asks the ends of the topics waited on every endPoll until no
// one waits or the bus closes.
func (b *Bus) pollEnds() {
	defer b.subs.Done()
	w := &b.watch
	t := time.NewTicker(endPoll)
	defer t.Stop()
	for {
		w.mu.Lock()
		var topics []string
		for topic, n := range w.waiters {
			if n > 0 {
				topics = append(topics, topic)
			}
		}
		if len(topics) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		moved := false
		for _, topic := range topics {
			ends, err := b.ends(topic)
			if err != nil {
				b.log.Warn("kafkabus: cannot read the partitions' ends for waiting feed readers", "topic", topic, "error", err)
				continue
			}
			w.mu.Lock()
			old := w.ends[topic]
			if fmt.Sprint(old) != fmt.Sprint(ends) {
				w.ends[topic], moved = ends, true
			}
			w.mu.Unlock()
		}
		if moved {
			w.mu.Lock()
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
		}
		select {
		case <-b.done:
			w.mu.Lock()
			w.running = false
			w.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

// ends are the high watermarks of every partition of a topic.
func (b *Bus) ends(topic string) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rangeTimeout)
	defer cancel()
	n, err := b.knownPartitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	reqs := make([]kafka.OffsetRequest, n)
	for i := range reqs {
		reqs[i] = kafka.LastOffsetOf(i)
	}
	res, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, err
	}
	out := make([]int64, n)
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return nil, po.Error
		}
		if po.Partition >= 0 && po.Partition < n {
			out[po.Partition] = po.LastOffset
		}
	}
	return out, nil
}
