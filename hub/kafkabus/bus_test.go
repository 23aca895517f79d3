package kafkabus_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/kafkabus"
	"github.com/fleethub/fleethub/internal/waitfor"
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
	waitfor.NoError(t, waitLimit, what, cond)
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
