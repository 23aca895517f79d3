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
// a batch is committed only once the handler returned nil. A failed batch
// is retried after a pause, never skipped. Without sub.Group, every
// partition is read from sub.Start and nothing is committed.
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

// consumeGroup runs one group reader; a dispatcher hands each message to
// the worker of its partition, so handlers of different partitions run
// concurrently and one partition's batches run one after another.
func (b *Bus) consumeGroup(ctx context.Context, sub hub.Subscription, h hub.Handler) error {
	start := kafka.LastOffset
	if sub.Start == hub.StartEarliest {
		start = kafka.FirstOffset
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           b.cfg.Brokers,
		GroupID:           sub.Group,
		Topic:             sub.Topic,
		Dialer:            b.dialer,
		QueueCapacity:     readerQueueCapacity,
		MinBytes:          1,
		MaxBytes:          readerMaxBytes,
		MaxWait:           fetchMaxWait,
		ReadLagInterval:   -1,
		HeartbeatInterval: heartbeatInterval,
		CommitInterval:    0, // synchronous: CommitMessages returns once the coordinator stored the offset
		SessionTimeout:    b.cfg.SessionTimeout,
		RebalanceTimeout:  rebalanceTimeout,
		JoinGroupBackoff:  joinGroupBackoff,
		StartOffset:       start,
		ErrorLogger:       b.kafkaLogger(slog.LevelDebug),
	})
	var wg sync.WaitGroup
	workers := map[int]chan kafka.Message{}
	defer func() {
		// Workers finish their batch (and its commit) before the reader
		// leaves the group.
		wg.Wait()
		if err := r.Close(); err != nil {
			b.log.Warn("kafkabus: close group reader", "topic", sub.Topic, "group", sub.Group, "err", err)
		}
	}()
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// Joining failed MaxAttempts times; kafka-go keeps trying.
			b.log.Warn("kafkabus: fetch", "topic", sub.Topic, "group", sub.Group, "err", err)
			if !pause(ctx, fetchErrorPause) {
				return nil
			}
			continue
		}
		in := workers[m.Partition]
		if in == nil {
			in = make(chan kafka.Message, b.cfg.MaxBatch)
			workers[m.Partition] = in
			wg.Add(1)
			go func() {
				defer wg.Done()
				fetch := func(ctx context.Context) (kafka.Message, error) {
					select {
					case m := <-in:
						return m, nil
					case <-ctx.Done():
						return kafka.Message{}, ctx.Err()
					}
				}
				commit := func(ctx context.Context, last kafka.Message) error {
					return r.CommitMessages(ctx, last)
				}
				b.consume(ctx, sub, fetch, commit, h)
			}()
		}
		select {
		case in <- m:
		case <-ctx.Done():
			return nil
		}
	}
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
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:         b.cfg.Brokers,
			Topic:           sub.Topic,
			Partition:       p,
			Dialer:          b.dialer,
			QueueCapacity:   readerQueueCapacity,
			MinBytes:        1,
			MaxBytes:        readerMaxBytes,
			MaxWait:         fetchMaxWait,
			ReadLagInterval: -1,
			ErrorLogger:     b.kafkaLogger(slog.LevelDebug),
		})
		if err := r.SetOffset(offsets[p]); err != nil {
			r.Close()
			return fmt.Errorf("kafkabus: set offset: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			b.consume(ctx, sub, r.FetchMessage, nil, h)
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

// consume is the loop of one partition: gather a batch, call h until it
// returns nil, then commit (when commit is not nil). In a group, messages
// below the offset after the last handled batch are dropped: after a
// rebalance that leaves the partition here, kafka-go restarts from the
// committed offset and refetches what is already queued or handled.
func (b *Bus) consume(ctx context.Context, sub hub.Subscription, fetch fetchFunc, commit func(context.Context, kafka.Message) error, h hub.Handler) {
	next := int64(-1) // offset after the last handled message
	buf := make([]kafka.Message, 0, b.cfg.MaxBatch)
	for {
		batch, err := gather(ctx, fetch, buf[:0], b.cfg.MaxBatch)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			b.log.Warn("kafkabus: fetch", "topic", sub.Topic, "err", err)
			if !pause(ctx, fetchErrorPause) {
				return
			}
			continue
		}
		if commit != nil && next >= 0 {
			batch = dropBelow(batch, next)
			if len(batch) == 0 {
				continue
			}
		}
		msgs := make([]hub.Message, len(batch))
		for i, m := range batch {
			msgs[i] = toHub(m)
		}
		for {
			err := h(ctx, msgs)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return // not handled: the next owner gets it again
			}
			b.log.Debug("kafkabus: handler failed, retrying", "topic", sub.Topic, "partition", msgs[0].Partition, "offset", msgs[0].Offset, "err", err)
			if !pause(ctx, handlerRetryPause) {
				return
			}
		}
		last := batch[len(batch)-1]
		next = last.Offset + 1
		if commit == nil {
			continue
		}
		// The batch is handled: commit it even when ctx just ended, so a
		// stopped member leaves no handled tail behind.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		err = commit(cctx, last)
		cancel()
		if err != nil {
			// A later commit covers this one; if none comes, the batch is
			// delivered again (at-least-once).
			b.log.Warn("kafkabus: commit", "topic", sub.Topic, "group", sub.Group, "partition", last.Partition, "offset", next, "err", err)
		}
	}
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

// dropBelow removes the messages before offset next, keeping order.
func dropBelow(batch []kafka.Message, next int64) []kafka.Message {
	i := 0
	for _, m := range batch {
		if m.Offset >= next {
			batch[i] = m
			i++
		}
	}
	return batch[:i]
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
