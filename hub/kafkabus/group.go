package kafkabus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

// member is the bus's one member of a consumer group: the Subscribe calls
// of every topic with the group's ID share it, so a node is one member of
// the group however many topics it consumes there, and a rebalance waits
// for one join per node (see "Consumer groups after a crash" in doc.go).
type member struct {
	b     *Bus
	group string
	bal   *balancer

	mu       sync.Mutex           // guards the fields below
	subs     map[string]*groupSub // topic → its subscription
	removed  []*groupSub          // subscriptions that left; released by run between sessions
	changed  chan struct{}        // closed, then replaced, when subs change
	suspects map[suspect]bool     // stalled partitions a rebalance was asked for already
	lastID   string               // member ID of the last generation; "" once kafka-go forgot it
}

// groupSub is one Subscribe call in a group.
type groupSub struct {
	sub     hub.Subscription
	h       hub.Handler
	ctx     context.Context // the Subscribe call's; its handler calls get it
	stopped chan struct{}   // closed once no generation runs the subscription any more
}

// consumeGroup adds the subscription to the bus's member of sub.Group and
// consumes until ctx ends; it returns once no generation runs the
// subscription any more, its last batch committed.
func (b *Bus) consumeGroup(ctx context.Context, sub hub.Subscription, h hub.Handler) error {
	gs := &groupSub{sub: sub, h: h, ctx: ctx, stopped: make(chan struct{})}
	m, err := b.joinMember(gs)
	if err != nil {
		return err
	}
	<-ctx.Done()
	m.remove(gs)
	<-gs.stopped
	return nil
}

// joinMember adds gs to the bus's member of its group, starting the member
// when the group has none.
func (b *Bus) joinMember(gs *groupSub) (*member, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.groups[gs.sub.Group]
	if m == nil {
		m = &member{b: b, group: gs.sub.Group, bal: &balancer{}, subs: map[string]*groupSub{},
			changed: make(chan struct{}), suspects: map[suspect]bool{}}
		b.groups[gs.sub.Group] = m
		b.subs.Add(1) // the calling Subscribe holds the count above zero
		go m.run()
	}
	return m, m.add(gs)
}

func (m *member) add(gs *groupSub) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.subs[gs.sub.Topic]; ok {
		return fmt.Errorf("kafkabus: subscribe: topic %s already has a subscriber in group %s on this bus", gs.sub.Topic, m.group)
	}
	m.subs[gs.sub.Topic] = gs
	m.signal()
	return nil
}

func (m *member) remove(gs *groupSub) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.subs, gs.sub.Topic)
	m.removed = append(m.removed, gs)
	m.signal()
}

// signal tells run that subs changed; m.mu must be held.
func (m *member) signal() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// run is the member's goroutine: one session (one kafka-go ConsumerGroup)
// per set of subscriptions, until none is left.
func (m *member) run() {
	defer m.b.subs.Done()
	for {
		subs, changed, ok := m.next()
		if !ok {
			return
		}
		if m.settle(changed) {
			m.session(subs, changed)
		}
	}
}

// next releases the subscriptions that left (no session runs now) and
// returns a copy of those that remain, with the channel closed at their
// next change. ok is false when none remains; the member is then gone
// from the bus, and a later Subscribe starts a new one.
func (m *member) next() (subs map[string]*groupSub, changed chan struct{}, ok bool) {
	m.b.mu.Lock()
	defer m.b.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, gs := range m.removed {
		close(gs.stopped)
	}
	m.removed = nil
	if len(m.subs) == 0 {
		delete(m.b.groups, m.group)
		return nil, nil, false
	}
	return maps.Clone(m.subs), m.changed, true
}

// settle waits groupSettle for more subscriptions, so that a node whose
// topics subscribe one after the other joins once with all of them. It
// reports false when they changed meanwhile, or once one left after the
// bus began closing: no session starts then.
func (m *member) settle(changed chan struct{}) bool {
	t := time.NewTimer(groupSettle)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-changed:
		return false
	case <-m.b.done:
		<-changed // a Subscribe call leaves; next releases it
		return false
	}
}

// session runs a kafka-go ConsumerGroup for the topics of subs until they
// change or the bus closes. It returns after closing the group: the
// generation's partitions finished their batches and committed them, and
// the member left the group.
func (m *member) session(subs map[string]*groupSub, changed chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-changed:
		case <-m.b.done:
		case <-ctx.Done():
		}
		cancel()
	}()
	b := m.b
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                m.group,
		Brokers:           b.cfg.Brokers,
		Dialer:            b.dialer,
		Topics:            slices.Sorted(maps.Keys(subs)),
		GroupBalancers:    []kafka.GroupBalancer{m.bal},
		HeartbeatInterval: heartbeatInterval,
		SessionTimeout:    b.cfg.SessionTimeout,
		RebalanceTimeout:  rebalanceTimeout,
		JoinGroupBackoff:  joinGroupBackoff,
		StartOffset:       kafka.FirstOffset, // a partition without a commit; readPartition applies its topic's Start
		Timeout:           coordinatorTimeout,
		Logger:            b.groupLogger(),
		ErrorLogger:       b.kafkaLogger(slog.LevelDebug),
	})
	if err != nil {
		b.log.Error("kafkabus: consumer group", "group", m.group, "err", err)
		<-ctx.Done()
		return
	}
	// Close ends the current generation, waits for its partition
	// goroutines (and their last commits), then leaves the group.
	defer cg.Close()
	for {
		gen, err := cg.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			m.joinFailed(ctx, err)
			continue
		}
		m.generation(gen, subs)
	}
}

// joinFailed logs a failed join. On any error but REBALANCE_IN_PROGRESS,
// kafka-go forgets its member ID, and after a failed JoinGroup (its
// deadline passed, say) it does so without leaving: the coordinator would
// keep that member as one waiting in JoinGroup, part of the next
// generation. The bus leaves for it.
func (m *member) joinFailed(ctx context.Context, err error) {
	level := slog.LevelWarn
	if errors.Is(err, kafka.RebalanceInProgress) {
		level = slog.LevelDebug // another member joined meanwhile
	}
	m.b.log.Log(ctx, level, "kafkabus: join group", "group", m.group, "err", err)
	if errors.Is(err, kafka.RebalanceInProgress) {
		return
	}
	m.mu.Lock()
	id := m.lastID
	m.lastID = ""
	m.mu.Unlock()
	if id == "" {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, coordinatorTimeout)
	defer cancel()
	_, err = m.b.client.LeaveGroup(lctx, &kafka.LeaveGroupRequest{GroupID: m.group, Members: []kafka.LeaveGroupRequestMember{{ID: id}}})
	m.b.log.Debug("kafkabus: left the group for the member kafka-go forgot", "group", m.group, "member", id, "err", err)
}

// generation starts, for a new generation, one reader per assigned
// partition and the watch for stalled partitions. A generation ends at a
// rebalance, or when one of its functions returns: each partition
// goroutine lets the batch in its handler finish, commits it and stops
// before the member rejoins, so a partition is handled by one member at a
// time. (kafka-go's Reader with a GroupID hides generation boundaries:
// batches already taken from it keep flowing after their partition moved.)
func (m *member) generation(gen *kafka.Generation, subs map[string]*groupSub) {
	m.mu.Lock()
	m.lastID = gen.MemberID
	m.mu.Unlock()
	var commitMu sync.Mutex // the generation's commits share one coordinator connection
	for topic, gs := range subs {
		commit := func(partition int, next int64) error {
			commitMu.Lock()
			defer commitMu.Unlock()
			return gen.CommitOffsets(map[string]map[int]int64{topic: {partition: next}})
		}
		for _, a := range gen.Assignments[topic] {
			gen.Start(func(gctx context.Context) {
				m.b.readPartition(gctx, gs, a, commit)
				<-gctx.Done() // returning would end the generation
			})
		}
	}
	gen.Start(func(gctx context.Context) {
		if m.watch(gctx, gen.MemberID, subs) {
			// Rejoining with the same metadata does not make the
			// coordinator rebalance (unless this member leads the
			// group); with a new epoch in it, it does.
			m.bal.epoch.Add(1)
		}
	})
}

// readPartition consumes one assigned partition from its committed offset
// until gctx ends.
func (b *Bus) readPartition(gctx context.Context, gs *groupSub, a kafka.PartitionAssignment, commit func(partition int, next int64) error) {
	offset := a.Offset
	if offset < 0 { // no committed offset
		offset = kafka.LastOffset
		if gs.sub.Start == hub.StartEarliest {
			offset = kafka.FirstOffset
		}
	}
	r := b.partitionReader(gs.sub.Topic, a.ID)
	defer r.Close()
	if err := r.SetOffset(offset); err != nil {
		b.log.Warn("kafkabus: set offset", "topic", gs.sub.Topic, "partition", a.ID, "err", err)
		return
	}
	b.consume(gctx, gs.ctx, gs.sub, r.FetchMessage, a.Offset, commit, gs.h)
}

// balancer is kafka-go's range assignment whose member metadata carries an
// epoch: the member bumps it to make its next join rebalance the group.
type balancer struct {
	kafka.RangeGroupBalancer
	epoch atomic.Uint32
}

func (b *balancer) UserData() ([]byte, error) {
	return binary.BigEndian.AppendUint32(nil, b.epoch.Load()), nil
}
