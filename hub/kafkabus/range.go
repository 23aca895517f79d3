package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

// Range returns retained messages of a topic partition from offset from,
// at most max, in offset order; it is how resumable readers catch up. An
// offset before the log start begins at the log start; one at or past the
// end returns nothing. It gives up after 10 s; RangeContext takes a ctx.
func (b *Bus) Range(topic string, partition int, from int64, max int) ([]hub.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rangeTimeout)
	defer cancel()
	return b.RangeContext(ctx, topic, partition, from, max)
}

// RangeContext is Range bounded by ctx.
func (b *Bus) RangeContext(ctx context.Context, topic string, partition int, from int64, max int) ([]hub.Message, error) {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, hub.ErrClosed
	}
	if max <= 0 {
		return nil, nil
	}
	n, err := b.knownPartitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	if partition < 0 || partition >= n {
		return nil, fmt.Errorf("kafkabus: range: partition %d of %s out of range [0,%d)", partition, topic, n)
	}
	conn, err := b.dialLeader(ctx, topic, partition)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	setDeadline(ctx, conn)
	first, last, err := conn.ReadOffsets()
	if err != nil {
		return nil, fmt.Errorf("kafkabus: range: offsets of %s/%d: %w", topic, partition, err)
	}
	from = max64(from, first)
	if from >= last {
		return nil, nil
	}
	out := make([]hub.Message, 0, min(int64(max), last-from, rangeInitialCapacity))
	for next := from; len(out) < max && next < last; {
		if _, err := conn.Seek(next, kafka.SeekAbsolute|kafka.SeekDontCheck); err != nil {
			return nil, fmt.Errorf("kafkabus: range: seek: %w", err)
		}
		batch := conn.ReadBatch(1, rangeFetchMaxBytes)
		read := 0
		for len(out) < max {
			m, err := batch.ReadMessage()
			if err != nil {
				break
			}
			read++
			out = append(out, toHub(m))
			next = m.Offset + 1
		}
		if err := batch.Close(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("kafkabus: range: read %s/%d at %d: %w", topic, partition, next, err)
		}
		if read == 0 {
			break // nothing retained between next and last (a gap at the end)
		}
	}
	return out, nil
}

// knownPartitions returns the partition count of an existing topic without
// creating it: from the bus's own record, else the transport's metadata
// cache (a metadata request from a kafka.Conn could auto-create the topic).
func (b *Bus) knownPartitions(ctx context.Context, topic string) (int, error) {
	b.mu.Lock()
	n, ok := b.topics[topic]
	b.mu.Unlock()
	if ok {
		return n, nil
	}
	md, err := b.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("kafkabus: metadata of %s: %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name == topic && t.Error == nil {
			return len(t.Partitions), nil
		}
	}
	return 0, fmt.Errorf("kafkabus: unknown topic %s: %w", topic, kafka.UnknownTopicOrPartition)
}

// dialLeader connects to the leader of an existing topic partition,
// looking it up through the first broker that answers.
func (b *Bus) dialLeader(ctx context.Context, topic string, partition int) (*kafka.Conn, error) {
	var errs []error
	for _, addr := range b.cfg.Brokers {
		conn, err := b.dialer.DialLeader(ctx, "tcp", addr, topic, partition)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("kafkabus: dial leader of %s/%d: %w", topic, partition, errors.Join(errs...))
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
