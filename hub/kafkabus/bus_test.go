package kafkabus_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/kafkabus"
)

const waitLimit = 30 * time.Second

// newCluster starts a one-broker in-process Kafka on 127.0.0.1.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newBus connects a bus to c; it is closed before c.
func newBus(t testing.TB, c *kfake.Cluster, topics ...string) *kafkabus.Bus {
	t.Helper()
	return newBusConfig(t, c, kafkabus.Config{}, topics...)
}

func newBusConfig(t testing.TB, c *kfake.Cluster, cfg kafkabus.Config, topics ...string) *kafkabus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.Brokers, cfg.ClientID = c.ListenAddrs(), t.Name()
	b, err := kafkabus.New(ctx, cfg, topics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// subscribe runs b.Subscribe in a goroutine; the channel yields its result.
func subscribe(ctx context.Context, b *kafkabus.Bus, sub hub.Subscription, h hub.Handler) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- b.Subscribe(ctx, sub, h) }()
	return errc
}

// eventually polls cond until it returns nil, failing the test with
// what and cond's last error after waitLimit.
func eventually(t testing.TB, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func awaitReturn(t *testing.T, errc <-chan error) {
	t.Helper()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("subscribe: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("subscribe did not return")
	}
}

func key(k int) []byte { return fmt.Appendf(nil, "v%02d", k) }

// publishKeys publishes perKey messages for each of keys vehicles, value
// "vKK:SEQ", each key from its own goroutine in chunks of chunk messages,
// so each key's order is its sequence.
func publishKeys(t *testing.T, b *kafkabus.Bus, topic string, keys, perKey, chunk int) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, keys)
	for k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := 0; s < perKey; s += chunk {
				var msgs []hub.Message
				for i := s; i < min(s+chunk, perKey); i++ {
					msgs = append(msgs, hub.Message{Topic: topic, Key: key(k), Value: fmt.Appendf(nil, "v%02d:%05d", k, i)})
				}
				if err := b.Publish(context.Background(), msgs...); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatalf("publish: %v", err)
	}
}

// collector records what handlers receive.
type collector struct {
	mu      sync.Mutex
	count   map[string]int // value → deliveries
	lastSeq map[string]int // key → last sequence seen
	errs    []string
	want    int
	done    chan struct{}
}

func newCollector(want int) *collector {
	return &collector{count: map[string]int{}, lastSeq: map[string]int{}, want: want, done: make(chan struct{})}
}

// add checks a batch (one partition, offsets rising, each key in sequence)
// and records it.
func (c *collector) add(msgs []hub.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		if m.Partition != msgs[0].Partition {
			c.errs = append(c.errs, fmt.Sprintf("batch mixes partitions %d and %d", msgs[0].Partition, m.Partition))
		}
		if i > 0 && m.Offset <= msgs[i-1].Offset {
			c.errs = append(c.errs, fmt.Sprintf("offsets not rising: %d after %d", m.Offset, msgs[i-1].Offset))
		}
		k, seqText, _ := strings.Cut(string(m.Value), ":")
		seq, _ := strconv.Atoi(seqText)
		if string(m.Key) != k {
			c.errs = append(c.errs, fmt.Sprintf("key %q carries value %q", m.Key, m.Value))
		}
		last, ok := c.lastSeq[k]
		if !ok {
			last = -1
		}
		if seq != last+1 {
			c.errs = append(c.errs, fmt.Sprintf("key %s: seq %d after %d", k, seq, last))
		}
		c.lastSeq[k] = seq
		c.count[string(m.Value)]++
	}
	if len(c.count) >= c.want {
		select {
		case <-c.done:
		default:
			close(c.done)
		}
	}
}

func (c *collector) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(waitLimit):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("got %d distinct messages, want %d", len(c.count), c.want)
	}
}

// checkExactlyOnce reports order errors and any message not seen once.
func (c *collector) checkExactlyOnce(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.errs {
		if i == 10 {
			t.Errorf("... %d more", len(c.errs)-10)
			break
		}
		t.Error(e)
	}
	if len(c.count) != c.want {
		t.Errorf("got %d distinct messages, want %d", len(c.count), c.want)
	}
	dups := 0
	for _, n := range c.count {
		if n != 1 {
			dups++
		}
	}
	if dups > 0 {
		t.Errorf("%d messages delivered more than once", dups)
	}
}

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

func TestClose(t *testing.T) {
	t.Parallel()
	const topic = "fleethub.events"
	c := newCluster(t)
	b, err := kafkabus.New(context.Background(), kafkabus.Config{Brokers: c.ListenAddrs()}, []string{topic})
	if err != nil {
		t.Fatal(err)
	}
	if h := b.Health(context.Background()); h != "healthy" {
		t.Errorf("Health = %q before Close", h)
	}
	if err := b.Publish(context.Background(), hub.Message{Topic: topic, Value: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	var errcs []<-chan error
	for _, group := range []string{"", "pipeline"} {
		running := make(chan struct{})
		var once sync.Once
		errcs = append(errcs, subscribe(context.Background(), b, hub.Subscription{Topic: topic, Group: group, Start: hub.StartEarliest},
			func(ctx context.Context, msgs []hub.Message) error { once.Do(func() { close(running) }); return nil }))
		select {
		case <-running:
		case <-time.After(waitLimit):
			t.Fatalf("subscriber (group %q) never ran", group)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, errc := range errcs {
		awaitReturn(t, errc) // running subscribers stop with the bus
	}
	if err := b.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.Publish(context.Background(), hub.Message{Topic: topic, Value: []byte("after")}); !errors.Is(err, hub.ErrClosed) {
		t.Errorf("Publish after Close = %v, want hub.ErrClosed", err)
	}
	if err := b.Subscribe(context.Background(), hub.Subscription{Topic: topic}, nil); !errors.Is(err, hub.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want hub.ErrClosed", err)
	}
	if _, err := b.Range(topic, 0, 0, 1); !errors.Is(err, hub.ErrClosed) {
		t.Errorf("Range after Close = %v, want hub.ErrClosed", err)
	}
	if h := b.Health(context.Background()); h != "unhealthy" {
		t.Errorf("Health = %q after Close", h)
	}
}

func TestHealthFollowsBrokers(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	b := newBus(t, c)
	if h := b.Health(context.Background()); h != "healthy" {
		t.Fatalf("Health = %q with the broker up", h)
	}
	c.Close()
	// healthy until the last probe's success is a second old, then probed
	eventually(t, "Health with the broker down", func() error {
		if h := b.Health(context.Background()); h != "unhealthy" {
			return fmt.Errorf("Health = %q", h)
		}
		return nil
	})
}

func TestNewFailsWithoutBrokers(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := kafkabus.New(ctx, kafkabus.Config{Brokers: []string{"127.0.0.1:1"}}, []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "no broker reachable") {
		t.Fatalf("New with no broker = %v", err)
	}
	if _, err := kafkabus.New(ctx, kafkabus.Config{}, nil); err == nil {
		t.Fatal("New without brokers: no error")
	}
}
