package kafkabus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/kafkabus"
)

func TestGroupDeliversEveryMessageOnceInKeyOrder(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey = "fleethub.locations", 50, 200
	c := newCluster(t)
	b := newBus(t, c, topic)
	col := newCollector(keys * perKey)
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	errc := subscribe(ctx, b, hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest},
		func(ctx context.Context, msgs []hub.Message) error {
			calls.Add(1)
			col.add(msgs)
			return nil
		})
	start := time.Now()
	publishKeys(t, b, topic, keys, perKey, 10)
	t.Logf("published %d messages in %v", keys*perKey, time.Since(start))
	col.wait(t)
	cancel()
	awaitReturn(t, errc) // after its handlers: a message handled twice is counted
	col.checkExactlyOnce(t)
	t.Logf("%d handler calls, %.1f messages per call", calls.Load(), float64(keys*perKey)/float64(calls.Load()))
}

func TestGroupRedeliversFailedBatch(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey = "fleethub.events", 10, 100
	c := newCluster(t)
	b := newBus(t, c, topic)
	publishKeys(t, b, topic, keys, perKey, 25)

	col := newCollector(keys * perKey)
	var (
		mu        sync.Mutex
		failed    []hub.Message // the batch that failed
		retried   []hub.Message // the next batch of its partition
		failCalls int
	)
	ctx, cancel := context.WithCancel(context.Background())
	errc := subscribe(ctx, b, hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest},
		func(ctx context.Context, msgs []hub.Message) error {
			mu.Lock()
			if failed == nil {
				failed = append([]hub.Message(nil), msgs...)
				failCalls++
				mu.Unlock()
				return errors.New("downstream unavailable")
			}
			if retried == nil && msgs[0].Partition == failed[0].Partition {
				retried = append([]hub.Message(nil), msgs...)
			}
			mu.Unlock()
			col.add(msgs)
			return nil
		})
	col.wait(t)
	cancel()
	awaitReturn(t, errc) // after its handlers: a message handled twice is counted
	col.checkExactlyOnce(t)

	mu.Lock()
	defer mu.Unlock()
	if failCalls != 1 || len(failed) == 0 {
		t.Fatalf("handler failed %d times with %d messages", failCalls, len(failed))
	}
	if len(retried) != len(failed) {
		t.Fatalf("retried batch has %d messages, failed one %d", len(retried), len(failed))
	}
	for i := range failed {
		if retried[i].Offset != failed[i].Offset || string(retried[i].Value) != string(failed[i].Value) {
			t.Fatalf("retried[%d] = offset %d %q, failed[%d] = offset %d %q", i, retried[i].Offset, retried[i].Value, i, failed[i].Offset, failed[i].Value)
		}
	}
	t.Logf("failed batch of %d messages (partition %d, offsets %d..%d) redelivered whole", len(failed), failed[0].Partition, failed[0].Offset, failed[len(failed)-1].Offset)
}

// waitGroupStable waits until group has n members, each with partitions.
func waitGroupStable(t *testing.T, c *kfake.Cluster, group string, n int) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 5 * time.Second}
	eventually(t, fmt.Sprintf("group %s stable with %d members", group, n), func() error {
		resp, err := client.DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err != nil || len(resp.Groups) != 1 {
			return fmt.Errorf("describe: %v", err)
		}
		g := resp.Groups[0]
		assigned := 0
		for _, m := range g.Members {
			for _, tp := range m.MemberAssignments.Topics {
				if len(tp.Partitions) > 0 {
					assigned++
					break
				}
			}
		}
		if g.GroupState != "Stable" || len(g.Members) != n || assigned != n {
			return fmt.Errorf("state %s, %d members, %d with partitions", g.GroupState, len(g.Members), assigned)
		}
		return nil
	})
}

func TestGroupMembersSplitPartitions(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey = "fleethub.telemetry", 50, 40
	c := newCluster(t)
	nodes := []*kafkabus.Bus{newBus(t, c, topic), newBus(t, c, topic)}
	col := newCollector(keys * perKey)
	var (
		mu    sync.Mutex
		parts = []map[int]int{{}, {}} // per member: partition → messages
	)
	ctx, cancel := context.WithCancel(context.Background())
	var errcs []<-chan error
	for i, b := range nodes {
		errcs = append(errcs, subscribe(ctx, b, hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest},
			func(ctx context.Context, msgs []hub.Message) error {
				mu.Lock()
				parts[i][msgs[0].Partition] += len(msgs)
				mu.Unlock()
				col.add(msgs)
				return nil
			}))
	}
	waitGroupStable(t, c, "pipeline", 2)
	publishKeys(t, nodes[0], topic, keys, perKey, 10)
	col.wait(t)
	cancel()
	for _, errc := range errcs {
		awaitReturn(t, errc) // after its handlers: a message handled twice is counted
	}
	col.checkExactlyOnce(t)

	mu.Lock()
	defer mu.Unlock()
	for i, p := range parts {
		if len(p) == 0 {
			t.Errorf("member %d handled no partition", i)
		}
	}
	for p := range parts[0] {
		if _, ok := parts[1][p]; ok {
			t.Errorf("partition %d handled by both members", p)
		}
	}
	t.Logf("member partitions: %v and %v", parts[0], parts[1])
}

func TestGroupResumesAfterLastCommit(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey, handled = "fleethub.locations", 50, 80, 1500
	c := newCluster(t)
	publisher := newBus(t, c, topic)
	publishKeys(t, publisher, topic, keys, perKey, 20)

	// Member A handles about `handled` messages, then every batch fails
	// (its downstream is gone) and it stops.
	a := newBus(t, c, topic)
	var (
		mu       sync.Mutex
		okA      = map[string]bool{} // handled and so committed by A
		tailA    = map[string]bool{} // seen by A in failed batches
		failures = make(chan struct{}, 1)
	)
	ctxA, cancelA := context.WithCancel(context.Background())
	errA := subscribe(ctxA, a, hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest},
		func(ctx context.Context, msgs []hub.Message) error {
			mu.Lock()
			defer mu.Unlock()
			if len(okA) >= handled {
				for _, m := range msgs {
					tailA[string(m.Value)] = true
				}
				select {
				case failures <- struct{}{}:
				default:
				}
				return errors.New("downstream gone")
			}
			for _, m := range msgs {
				okA[string(m.Value)] = true
			}
			return nil
		})
	select {
	case <-failures:
	case <-time.After(waitLimit):
		t.Fatal("member A never reached its failing phase")
	}
	cancelA()
	awaitReturn(t, errA)

	// Member B joins the same group and must start right after A's commits.
	b := newBus(t, c, topic)
	mu.Lock()
	col := newCollector(keys*perKey - len(okA))
	mu.Unlock()
	var dupOfCommitted atomic.Int64
	ctxB, cancelB := context.WithCancel(context.Background())
	errB := subscribe(ctxB, b, hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest},
		func(ctx context.Context, msgs []hub.Message) error {
			mu.Lock()
			for _, m := range msgs {
				if okA[string(m.Value)] {
					dupOfCommitted.Add(1)
				}
			}
			mu.Unlock()
			col.mu.Lock()
			for _, m := range msgs {
				col.count[string(m.Value)]++
			}
			if len(col.count) >= col.want {
				select {
				case <-col.done:
				default:
					close(col.done)
				}
			}
			col.mu.Unlock()
			return nil
		})
	col.wait(t)
	cancelB()
	awaitReturn(t, errB) // after its handlers: a message handled twice is counted

	mu.Lock()
	defer mu.Unlock()
	if n := dupOfCommitted.Load(); n > 0 {
		t.Errorf("B redelivered %d messages A had committed", n)
	}
	missing, tailDups := 0, 0
	for k := range keys {
		for s := range perKey {
			v := fmt.Sprintf("v%02d:%05d", k, s)
			if !okA[v] && col.count[v] == 0 {
				missing++
			}
			if col.count[v] > 1 {
				t.Errorf("B delivered %s %d times", v, col.count[v])
			}
			if tailA[v] && col.count[v] > 0 {
				tailDups++
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d messages lost", missing)
	}
	t.Logf("A handled %d, saw %d in failed batches; B handled %d (%d of A's uncommitted tail again)", len(okA), len(tailA), len(col.count), tailDups)
}

func TestGroupRebalanceMidStream(t *testing.T) {
	t.Parallel()
	const topic, keys, perKey = "fleethub.locations", 50, 120
	c := newCluster(t)
	cfg := kafkabus.Config{MaxBatch: 20} // many small batches, so the join lands mid-stream
	nodes := []*kafkabus.Bus{newBusConfig(t, c, cfg, topic), newBusConfig(t, c, cfg, topic)}
	publishKeys(t, nodes[0], topic, keys, perKey, 20)

	var (
		mu         sync.Mutex
		count      = map[string]int{}
		active     = map[int]int{} // partition → handlers running now
		overlaps   int
		perMember  [2]int
		done       = make(chan struct{})
		secondTime = make(chan struct{})
	)
	handler := func(member int) hub.Handler {
		return func(ctx context.Context, msgs []hub.Message) error {
			p := msgs[0].Partition
			mu.Lock()
			if active[p] > 0 {
				overlaps++
			}
			active[p]++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // real time: a slow downstream, so the join finds handlers running
			mu.Lock()
			defer mu.Unlock()
			active[p]--
			perMember[member] += len(msgs)
			for _, m := range msgs {
				count[string(m.Value)]++
			}
			if perMember[0] >= 300 {
				select {
				case <-secondTime:
				default:
					close(secondTime)
				}
			}
			if len(count) == keys*perKey {
				select {
				case <-done:
				default:
					close(done)
				}
			}
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	sub := hub.Subscription{Topic: topic, Group: "pipeline", Start: hub.StartEarliest}
	errA := subscribe(ctx, nodes[0], sub, handler(0))
	select {
	case <-secondTime:
	case <-time.After(waitLimit):
		t.Fatal("first member handled nothing")
	}
	errB := subscribe(ctx, nodes[1], sub, handler(1))
	select {
	case <-done:
	case <-time.After(waitLimit):
		mu.Lock()
		n := len(count)
		mu.Unlock()
		t.Fatalf("got %d of %d messages", n, keys*perKey)
	}
	cancel()
	awaitReturn(t, errA) // after their handlers: a message handled twice is counted
	awaitReturn(t, errB)

	mu.Lock()
	defer mu.Unlock()
	dups := 0
	for _, n := range count {
		dups += n - 1
	}
	if overlaps > 0 {
		t.Errorf("a partition was handled by two members at once %d times", overlaps)
	}
	if dups > 0 {
		t.Errorf("%d duplicates across a clean rebalance", dups)
	}
	if perMember[1] == 0 {
		t.Error("the member that joined mid-stream handled nothing")
	}
	t.Logf("members handled %v messages, %d duplicates", perMember, dups)
}
