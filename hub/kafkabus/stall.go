package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

type topicPartition struct {
	topic     string
	partition int
}

// progress is what watch saw of a partition another member holds, since
// it last changed hands or moved its committed offset.
type progress struct {
	owner     string
	committed int64 // -1: none
	end       int64 // the partition's end offset then
	since     time.Time
}

// suspect is a partition held without progress: the rebalance that
// watch asks for is asked once per owner, partition and committed offset.
type suspect struct {
	topicPartition
	owner     string
	committed int64
}

// watch checks, every stallCheckInterval, whether another member holds a
// partition of the generation without consuming it: messages past its
// committed offset, and the same owner and committed offset for the
// session timeout. It returns true, to ask for a rebalance, the first time
// it finds one it did not ask for before; false once gctx ends. While this
// member is stalled the same way on a partition of its own, nobody is
// suspected: every consumer waits on a part they share.
//
// A dead member cannot rejoin, so the rebalance drops it and its
// partitions move. Kafka would have expired it already; kfake keeps a
// member whose JoinGroup answer went to a closed connection without a
// session timer, holding its partitions for good. A live member that is
// merely slow rejoins with the same ID and keeps its partitions, and is
// not asked again for the same offset.
func (m *member) watch(gctx context.Context, self string, subs map[string]*groupSub) bool {
	t := time.NewTicker(stallCheckInterval)
	defer t.Stop()
	seen := map[topicPartition]progress{}
	for {
		s, err := m.stalled(gctx, self, subs, seen)
		if err != nil && gctx.Err() == nil {
			m.b.log.Debug("kafkabus: stall check", "group", m.group, "err", err)
		}
		if s != nil {
			m.b.log.Warn("kafkabus: another member holds a partition without consuming it; rebalancing the group",
				"group", m.group, "topic", s.topic, "partition", s.partition, "member", s.owner, "committed", s.committed)
			return true
		}
		select {
		case <-gctx.Done():
			return false
		case <-t.C:
		}
	}
}

// stalled updates seen and returns a partition held without progress for
// the session timeout, if one is not a suspect already.
func (m *member) stalled(ctx context.Context, self string, subs map[string]*groupSub, seen map[topicPartition]progress) (*suspect, error) {
	ctx, cancel := context.WithTimeout(ctx, stallCheckTimeout)
	defer cancel()
	owners, err := m.owners(ctx, self, subs)
	if err != nil {
		return nil, err
	}
	for tp := range seen {
		if _, ok := owners[tp]; !ok {
			delete(seen, tp)
		}
	}
	if len(owners) == 0 {
		return nil, nil
	}
	tps := make([]topicPartition, 0, len(owners))
	for tp := range owners {
		tps = append(tps, tp)
	}
	committed, err := m.committed(ctx, tps)
	if err != nil {
		return nil, err
	}
	ends, err := m.b.offsets(ctx, tps, kafka.LastOffset)
	if err != nil {
		return nil, err
	}
	var firsts map[topicPartition]int64 // fetched only when needed
	now := time.Now()
	var found []suspect
	for _, tp := range tps {
		owner, c, end := owners[tp], committed[tp], ends[tp]
		p, ok := seen[tp]
		if !ok || p.owner != owner || p.committed != c {
			seen[tp] = progress{owner: owner, committed: c, end: end, since: now}
			continue
		}
		if now.Sub(p.since) < m.b.cfg.SessionTimeout {
			continue
		}
		from := c
		if c < 0 { // nothing committed: where the owner started reading
			from = p.end
			if subs[tp.topic].sub.Start == hub.StartEarliest {
				if firsts == nil {
					if firsts, err = m.b.offsets(ctx, tps, kafka.FirstOffset); err != nil {
						return nil, err
					}
				}
				from = firsts[tp]
			}
		}
		if end <= from {
			continue
		}
		if owner == self {
			// this member holds work it has not committed either: the
			// consumers wait on something they share (the stream logs'
			// Redis, say), and a rebalance would only move the wait
			return nil, nil
		}
		found = append(found, suspect{topicPartition: tp, owner: owner, committed: c})
	}
	for _, s := range found {
		if m.suspect(s) {
			return &s, nil
		}
	}
	return nil, nil
}

// suspect records s and reports whether it is new.
func (m *member) suspect(s suspect) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.suspects[s] {
		return false
	}
	if len(m.suspects) >= maxSuspects {
		clear(m.suspects)
	}
	m.suspects[s] = true
	return true
}

// owners maps each partition of subs to the member holding it (this one
// too), as the coordinator describes the group; it is empty unless the
// group is stable.
func (m *member) owners(ctx context.Context, self string, subs map[string]*groupSub) (map[topicPartition]string, error) {
	resp, err := m.b.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{m.group}})
	if err != nil {
		return nil, fmt.Errorf("kafkabus: describe group %s: %w", m.group, err)
	}
	if len(resp.Groups) != 1 {
		return nil, fmt.Errorf("kafkabus: describe group %s: %d groups in the answer", m.group, len(resp.Groups))
	}
	g := resp.Groups[0]
	if g.Error != nil {
		return nil, fmt.Errorf("kafkabus: describe group %s: %w", m.group, g.Error)
	}
	owners := map[topicPartition]string{}
	if g.GroupState != "Stable" {
		return owners, nil // a rebalance is under way
	}
	for _, gm := range g.Members {
		for _, t := range gm.MemberAssignments.Topics {
			if _, ok := subs[t.Topic]; !ok {
				continue
			}
			for _, p := range t.Partitions {
				owners[topicPartition{t.Topic, p}] = gm.MemberID
			}
		}
	}
	return owners, nil
}

// committed is the group's committed offset of each of tps, -1 for none.
func (m *member) committed(ctx context.Context, tps []topicPartition) (map[topicPartition]int64, error) {
	req := &kafka.OffsetFetchRequest{GroupID: m.group, Topics: map[string][]int{}}
	out := make(map[topicPartition]int64, len(tps))
	for _, tp := range tps {
		req.Topics[tp.topic] = append(req.Topics[tp.topic], tp.partition)
		out[tp] = -1
	}
	resp, err := m.b.client.OffsetFetch(ctx, req)
	if err == nil {
		err = resp.Error
	}
	if err != nil {
		return nil, fmt.Errorf("kafkabus: committed offsets of group %s: %w", m.group, err)
	}
	for topic, ps := range resp.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("kafkabus: committed offset of group %s, %s/%d: %w", m.group, topic, p.Partition, p.Error)
			}
			out[topicPartition{topic, p.Partition}] = p.CommittedOffset
		}
	}
	return out, nil
}

// offsets lists the first (kafka.FirstOffset) or end (kafka.LastOffset)
// offset of each of tps.
func (b *Bus) offsets(ctx context.Context, tps []topicPartition, at int64) (map[topicPartition]int64, error) {
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, tp := range tps {
		req.Topics[tp.topic] = append(req.Topics[tp.topic], kafka.OffsetRequest{Partition: tp.partition, Timestamp: at})
	}
	resp, err := b.client.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafkabus: list offsets: %w", err)
	}
	out := make(map[topicPartition]int64, len(tps))
	for topic, ps := range resp.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("kafkabus: list offsets of %s/%d: %w", topic, p.Partition, p.Error)
			}
			off := p.LastOffset
			if at == kafka.FirstOffset {
				off = p.FirstOffset
			}
			out[topicPartition{topic, p.Partition}] = off
		}
	}
	if len(out) != len(tps) {
		return nil, errors.New("kafkabus: list offsets: partitions missing from the answer")
	}
	return out, nil
}
