package kafkabus_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
)

// recoverLimit bounds how long a test waits for a group to recover from
// members that died; generous, as it only tells a recovery from a stall.
const recoverLimit = 2 * waitLimit

// doomedMember is a kafka-go group member in this process whose death we
// choose: kill cuts its connections and refuses new ones, as a SIGKILL of
// its process would, so it neither leaves the group nor answers.
type doomedMember struct {
	cg    *kafka.ConsumerGroup
	mu    sync.Mutex
	conns []net.Conn
	dead  bool
}

// newDoomedMember joins group with the bus's timeouts, as the member of a
// node would.
func newDoomedMember(t *testing.T, c *kfake.Cluster, group, topic string) *doomedMember {
	t.Helper()
	d := &doomedMember{}
	dialer := &kafka.Dialer{ClientID: "doomed", Timeout: 5 * time.Second,
		DialFunc: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.dead {
				return nil, fmt.Errorf("dial %s: dead", addr)
			}
			var nd net.Dialer
			conn, err := nd.DialContext(ctx, network, addr)
			if err == nil {
				d.conns = append(d.conns, conn)
			}
			return conn, err
		}}
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                group,
		Brokers:           c.ListenAddrs(),
		Dialer:            dialer,
		Topics:            []string{topic},
		HeartbeatInterval: time.Second,
		SessionTimeout:    6 * time.Second,
		RebalanceTimeout:  4 * time.Second,
		JoinGroupBackoff:  time.Hour, // once dead, never back
		Timeout:           5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	d.cg = cg
	t.Cleanup(func() { cg.Close() })
	return d
}

// kill cuts every connection of the member and refuses new ones.
func (d *doomedMember) kill() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dead = true
	for _, c := range d.conns {
		c.Close()
	}
}

// describeGroup is the coordinator's view of group: state and members.
func describeGroup(t *testing.T, c *kfake.Cluster, group string) kafka.DescribeGroupsResponseGroup {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 5 * time.Second}
	resp, err := client.DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil || len(resp.Groups) != 1 {
		t.Fatalf("describe group %s: %v", group, err)
	}
	return resp.Groups[0]
}

// awaitGroup polls group until ok accepts it.
func awaitGroup(t *testing.T, c *kfake.Cluster, group string, what string, ok func(kafka.DescribeGroupsResponseGroup) bool) {
	t.Helper()
	eventually(t, "group "+group+": "+what, func() error {
		if g := describeGroup(t, c, group); !ok(g) {
			return fmt.Errorf("state %s with %d members", g.GroupState, len(g.Members))
		}
		return nil
	})
}

// publishToEveryPartition publishes one message to each of the n
// partitions of topic, choosing keys the bus's hash puts there.
func publishToEveryPartition(t *testing.T, c *kfake.Cluster, topic string, n int) {
	t.Helper()
	b := newBus(t, c, topic)
	parts := make([]int, n)
	for i := range parts {
		parts[i] = i
	}
	var msgs []hub.Message
	covered := map[int]bool{}
	for k := 0; len(covered) < n; k++ {
		key := fmt.Appendf(nil, "vehicle-%d", k)
		p := (&kafka.Hash{}).Balance(kafka.Message{Key: key}, parts...)
		if !covered[p] {
			covered[p] = true
			msgs = append(msgs, hub.Message{Topic: topic, Key: key, Value: key})
		}
	}
	if err := b.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

// TestGroupRecoversFromMembersKilledMidJoin is a node killed while its
// member waited in JoinGroup, then restarted: the coordinator keeps the dead
// member as one that joined, and the rebalance that the restarted node's
// member completes may give the dead member partitions (kfake then never
// expires it: its JoinGroup answer went to a closed connection, so its
// session timer never starts), or make it the leader whose SyncGroup never
// comes. The restarted node must still end up consuming every partition.
//
// Before it, an older incarnation of the node died while the group was
// stable, so the rebalance completes only when that member's session
// expires, after the restarted node joined. kfake draws the leader and
// whether the dead member's session timer starts at random, so several
// groups run the scenario at once.
func TestGroupRecoversFromMembersKilledMidJoin(t *testing.T) {
	t.Parallel()
	const topic, partitions, groups = "fleethub.telemetry", 8, 4
	c := newCluster(t)
	publishToEveryPartition(t, c, topic, partitions)
	for i := range groups {
		group := fmt.Sprintf("pipeline-%d", i)
		t.Run(group, func(t *testing.T) {
			t.Parallel()
			// The older incarnation, stable with every partition, dies.
			old := newDoomedMember(t, c, group, topic)
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if _, err := old.cg.Next(ctx); err != nil {
				t.Fatalf("first member: %v", err)
			}
			old.kill()

			// The next incarnation dies while its JoinGroup waits for the
			// old member to rejoin.
			joining := newDoomedMember(t, c, group, topic)
			awaitGroup(t, c, group, "second member joining", func(g kafka.DescribeGroupsResponseGroup) bool {
				return g.GroupState == "PreparingRebalance" && len(g.Members) == 2
			})
			joining.kill()

			// The restarted node joins before the old member's session
			// expires, and must get every partition.
			b := newBus(t, c, topic)
			var (
				mu   sync.Mutex
				seen = map[int]bool{}
				all  = make(chan struct{})
			)
			sctx, stop := context.WithCancel(context.Background())
			errc := subscribe(sctx, b, hub.Subscription{Topic: topic, Group: group, Start: hub.StartEarliest},
				func(ctx context.Context, msgs []hub.Message) error {
					mu.Lock()
					defer mu.Unlock()
					seen[msgs[0].Partition] = true
					if len(seen) == partitions {
						select {
						case <-all:
						default:
							close(all)
						}
					}
					return nil
				})
			defer func() {
				stop()
				awaitReturn(t, errc)
			}()
			start := time.Now()
			select {
			case <-all:
				t.Logf("every partition consumed %v after the restarted node subscribed", time.Since(start).Round(100*time.Millisecond))
			case <-time.After(recoverLimit):
				mu.Lock()
				defer mu.Unlock()
				g := describeGroup(t, c, group)
				var members []string
				for _, m := range g.Members {
					members = append(members, fmt.Sprintf("%s %v", m.MemberID, m.MemberAssignments.Topics))
				}
				t.Fatalf("after %v the restarted node consumed partitions %v of %d; group %s: %v", recoverLimit, seen, partitions, g.GroupState, members)
			}
		})
	}
}

// TestGroupTopicsShareOneMember: the subscriptions of several topics in
// one group make the bus one member of it; when one ends, the others go on
// (the member rejoins with the topics left), and a second subscriber of a
// topic in the group is refused.
func TestGroupTopicsShareOneMember(t *testing.T) {
	t.Parallel()
	const group = "pipeline"
	topics := []string{"fleethub.telemetry", "fleethub.events"}
	c := newCluster(t)
	b := newBus(t, c, topics...)
	var (
		mu  sync.Mutex
		got = map[string]int{} // topic → messages
	)
	handler := func(ctx context.Context, msgs []hub.Message) error {
		mu.Lock()
		defer mu.Unlock()
		got[msgs[0].Topic] += len(msgs)
		return nil
	}
	count := func(topic string) int {
		mu.Lock()
		defer mu.Unlock()
		return got[topic]
	}
	ctxs := map[string]context.CancelFunc{}
	errcs := map[string]<-chan error{}
	for _, topic := range topics {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[topic] = cancel
		errcs[topic] = subscribe(ctx, b, hub.Subscription{Topic: topic, Group: group, Start: hub.StartEarliest}, handler)
	}
	defer func() {
		for topic, cancel := range ctxs {
			cancel()
			awaitReturn(t, errcs[topic])
		}
	}()
	awaitGroup(t, c, group, "one member with both topics", func(g kafka.DescribeGroupsResponseGroup) bool {
		if g.GroupState != "Stable" || len(g.Members) != 1 {
			return false
		}
		n := 0
		for _, tp := range g.Members[0].MemberAssignments.Topics {
			n += len(tp.Partitions)
		}
		return n == 16
	})
	if err := b.Subscribe(context.Background(), hub.Subscription{Topic: topics[0], Group: group}, handler); err == nil {
		t.Error("a second subscriber of a topic in the group was accepted")
	}

	publish := func(topic string, n int) {
		t.Helper()
		msgs := make([]hub.Message, n)
		for i := range msgs {
			msgs[i] = hub.Message{Topic: topic, Key: key(i), Value: fmt.Appendf(nil, "%s:%d", topic, i)}
		}
		if err := b.Publish(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
	}
	await := func(topic string, want int) {
		t.Helper()
		eventually(t, fmt.Sprintf("%d messages of %s", want, topic), func() error {
			if n := count(topic); n < want {
				return fmt.Errorf("got %d", n)
			}
			return nil
		})
	}
	for _, topic := range topics {
		publish(topic, 50)
	}
	for _, topic := range topics {
		await(topic, 50)
	}

	// The events subscription ends; telemetry goes on alone.
	ctxs[topics[1]]()
	awaitReturn(t, errcs[topics[1]])
	delete(ctxs, topics[1])
	publish(topics[0], 50)
	await(topics[0], 100)
	awaitGroup(t, c, group, "one member with telemetry only", func(g kafka.DescribeGroupsResponseGroup) bool {
		return g.GroupState == "Stable" && len(g.Members) == 1 && len(g.Members[0].MemberAssignments.Topics) == 1 &&
			g.Members[0].MemberAssignments.Topics[0].Topic == topics[0]
	})
}
