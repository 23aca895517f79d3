package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

// Subscribe consumes sub.Topic until ctx ends or the bus closes; it returns
// nil then. The topic is created first when it is missing, so the group's
// first assignment already covers its partitions.
//
// With sub.Group, the group's members share the partitions; each handler
// call gets messages of one partition in offset order, and the offset after
// a batch is committed only once the handler returned nil, and never past
// the oldest offset sub.Held reports for the partition. A failed batch
// is retried after a pause, never skipped. The bus is one member of each
// group, whatever the number of topics subscribed in it; a topic has at
// most one subscriber per group on a bus, and a second Subscribe fails.
// Without sub.Group, every partition is read from sub.Start and nothing is
// committed.
func (b *Bus) Subscribe(ctx context.Context, sub hub.Subscription, h hub.Handler) error {
	if sub.Topic == "" {
		return errors.New("kafkabus: subscribe: empty topic")
	}
	if !b.enter(&b.subs) {
		return hub.ErrClosed
	}
	defer b.subs.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()

	n, err := b.partitions(ctx, sub.Topic)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if sub.Group != "" {
		return b.consumeGroup(ctx, sub, h)
	}
	return b.consumePartitions(ctx, sub, n, h)
}

// partitionReader reads one partition, without a group.
func (b *Bus) partitionReader(topic string, partition int) *kafka.Reader {
	return kafka.NewReader(kafka.ReaderConfig{
		Brokers:         b.cfg.Brokers,
		Topic:           topic,
		Partition:       partition,
		Dialer:          b.dialer,
		QueueCapacity:   readerQueueCapacity,
		MinBytes:        1,
		MaxBytes:        readerMaxBytes,
		MaxWait:         fetchMaxWait,
		ReadLagInterval: -1,
		ErrorLogger:     b.kafkaLogger(slog.LevelDebug),
	})
}

// consumePartitions reads every partition from sub.Start without a group.
func (b *Bus) consumePartitions(ctx context.Context, sub hub.Subscription, n int, h hub.Handler) error {
	offsets, err := b.startOffsets(ctx, sub, n)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	var wg sync.WaitGroup
	for p := 0; p < n; p++ {
		r := b.partitionReader(sub.Topic, p)
		if err := r.SetOffset(offsets[p]); err != nil {
			r.Close()
			return fmt.Errorf("kafkabus: set offset: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			b.consume(ctx, ctx, sub, r.FetchMessage, -1, nil, h)
		}()
	}
	wg.Wait()
	return nil
}

// startOffsets resolves sub.Start for each partition now, so that a
// StartLatest subscriber sees every message published after Subscribe
// was called, not only after its readers connected.
func (b *Bus) startOffsets(ctx context.Context, sub hub.Subscription, n int) ([]int64, error) {
	offsets := make([]int64, n)
	if sub.Start == hub.StartEarliest {
		for p := range offsets {
			offsets[p] = kafka.FirstOffset
		}
		return offsets, nil
	}
	reqs := make([]kafka.OffsetRequest, n)
	for p := range reqs {
		reqs[p] = kafka.LastOffsetOf(p)
	}
	resp, err := b.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{sub.Topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: list offsets of %s: %w", sub.Topic, err)
	}
	for p := range offsets {
		offsets[p] = kafka.LastOffset
	}
	for _, po := range resp.Topics[sub.Topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("kafkabus: list offsets of %s/%d: %w", sub.Topic, po.Partition, po.Error)
		}
		if po.Partition >= 0 && po.Partition < n {
			offsets[po.Partition] = po.LastOffset
		}
	}
	return offsets, nil
}

// consume is the loop of one partition: gather a batch, call h with hctx
// until it returns nil, then commit it (when commit is not nil). It returns
// once stop ends; a batch whose handler already returned nil is committed
// even then. committed is the partition's committed offset when the loop
// starts (negative: none); see commitOffset for what is committed.
func (b *Bus) consume(stop, hctx context.Context, sub hub.Subscription, fetch fetchFunc, committed int64, commit func(partition int, next int64) error, h hub.Handler) {
	buf := make([]kafka.Message, 0, b.cfg.MaxBatch)
	var handled *kafka.Message // the last message of the last handled batch
	for {
		fctx, cancel := stop, context.CancelFunc(func() {})
		if commit != nil && handled != nil && sub.Held != nil && committed <= handled.Offset {
			// the commit stopped at a held message: look again soon, so
			// that it moves once the handler released it even when no
			// new message comes (a still commit looks like a dead member)
			fctx, cancel = context.WithTimeout(stop, heldRecheck)
		}
		batch, err := gather(fctx, fetch, buf[:0], b.cfg.MaxBatch)
		cancel()
		if err != nil && stop.Err() == nil && fctx.Err() != nil {
			if next, ok := commitOffset(sub, *handled, committed); ok {
				if err := commit(handled.Partition, next); err == nil {
					committed = next
				}
			}
			continue
		}
		if err != nil {
			if stop.Err() != nil {
				return
			}
			b.log.Warn("kafkabus: fetch", "topic", sub.Topic, "err", err)
			if !pause(stop, fetchErrorPause) {
				return
			}
			continue
		}
		msgs := make([]hub.Message, len(batch))
		for i, m := range batch {
			msgs[i] = toHub(m)
		}
		for {
			err := h(hctx, msgs)
			if err == nil {
				break
			}
			if stop.Err() != nil || hctx.Err() != nil {
				return // not handled: the partition's next reader gets it again
			}
			b.log.Debug("kafkabus: handler failed, retrying", "topic", sub.Topic, "partition", msgs[0].Partition, "offset", msgs[0].Offset, "err", err)
			if !pause(stop, handlerRetryPause) {
				return
			}
		}
		if commit == nil {
			continue
		}
		last := batch[len(batch)-1]
		handled = &last
		next, ok := commitOffset(sub, last, committed)
		if !ok {
			continue
		}
		if err := commit(last.Partition, next); err != nil {
			// A later commit covers this one; if none comes, the batch is
			// delivered again (at-least-once).
			b.log.Warn("kafkabus: commit", "topic", sub.Topic, "group", sub.Group, "partition", last.Partition, "offset", next, "err", err)
			continue
		}
		committed = next
	}
}

// commitOffset is the offset to commit after a handled batch ending with
// last: the offset after it, clamped to the oldest offset sub.Held reports
// for the partition, so a message the handler still holds is delivered
// again after a crash. ok is false when that would not move the committed
// offset forward (a held offset below it was committed past before this
// member owned the partition; committing it again would only replay).
func commitOffset(sub hub.Subscription, last kafka.Message, committed int64) (next int64, ok bool) {
	next = last.Offset + 1
	if sub.Held != nil {
		if held, ok := sub.Held(last.Partition); ok && held < next {
			next = held
		}
	}
	return next, next > committed
}

type fetchFunc func(context.Context) (kafka.Message, error)

// gather blocks for one message, then adds those that arrive within
// batchLinger, up to max.
func gather(ctx context.Context, fetch fetchFunc, batch []kafka.Message, max int) ([]kafka.Message, error) {
	m, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	batch = append(batch, m)
	lctx, cancel := context.WithTimeout(ctx, batchLinger)
	defer cancel()
	for len(batch) < max {
		m, err := fetch(lctx)
		if err != nil {
			break // linger over; a reader error shows on the next blocking fetch
		}
		batch = append(batch, m)
	}
	return batch, nil
}

func toHub(m kafka.Message) hub.Message {
	return hub.Message{Topic: m.Topic, Key: m.Key, Value: m.Value, Partition: m.Partition, Offset: m.Offset, Time: m.Time}
}

// pause waits d; it reports false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
