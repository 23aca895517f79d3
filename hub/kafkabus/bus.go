package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

// Named limits and pauses, in one place.
const (
	defaultPartitions     = 8
	defaultReplication    = 1
	defaultBatchTimeout   = 2 * time.Millisecond
	defaultBatchSize      = 1000
	defaultMaxBatch       = 512
	minSessionTimeout     = 6 * time.Second // kfake's and Kafka's default group.min.session.timeout.ms
	defaultClientID       = "fleethub"
	dialTimeout           = 5 * time.Second  // one broker connection attempt
	setupTimeout          = 30 * time.Second // topic creation, when ctx has no deadline
	healthFresh           = time.Second      // a probe younger than this answers Health
	healthProbeTimeout    = 2 * time.Second
	coordinatorTimeout    = rebalanceTimeout + 5*time.Second // each group coordinator request, commits included; a JoinGroup gets rebalanceTimeout more, a SyncGroup the session timeout
	batchLinger           = time.Millisecond
	handlerRetryPause     = 100 * time.Millisecond
	heldRecheck           = 250 * time.Millisecond // how soon a commit held back by Subscription.Held is tried again
	fetchErrorPause       = 250 * time.Millisecond
	fetchMaxWait          = 500 * time.Millisecond // broker long-poll; bounds how late a reader notices a stop
	heartbeatInterval     = time.Second
	rebalanceTimeout      = 4 * time.Second // below the session timeout: see "Consumer groups after a crash" in doc.go
	groupSettle           = 100 * time.Millisecond
	stallCheckInterval    = time.Second
	stallCheckTimeout     = 5 * time.Second
	maxSuspects           = 1024
	joinGroupBackoff      = 500 * time.Millisecond
	readerQueueCapacity   = 1024
	readerMaxBytes        = 10 << 20
	rangeTimeout          = 10 * time.Second
	rangeFetchMaxBytes    = 4 << 20
	rangeInitialCapacity  = 1024
	topicReadyPollBackoff = 50 * time.Millisecond
)

// Config of the bus. Zero fields take the defaults.
type Config struct {
	Brokers           []string      // host:port of one or more brokers; required
	Partitions        int           // for topics created if missing, default 8
	ReplicationFactor int           // for topics created if missing, default 1
	BatchTimeout      time.Duration // writer linger, default 2ms
	BatchSize         int           // writer messages per partition batch, default 1000
	SessionTimeout    time.Duration // consumer groups, default and minimum 6s
	ClientID          string        // default "fleethub"
	MaxBatch          int           // messages per handler call, default 512
	Logger            *slog.Logger  // default discards
}

func (cfg *Config) applyDefaults() {
	if cfg.Partitions <= 0 {
		cfg.Partitions = defaultPartitions
	}
	if cfg.ReplicationFactor <= 0 {
		cfg.ReplicationFactor = defaultReplication
	}
	if cfg.BatchTimeout <= 0 {
		cfg.BatchTimeout = defaultBatchTimeout
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = defaultBatchSize
	}
	if cfg.SessionTimeout < minSessionTimeout {
		cfg.SessionTimeout = minSessionTimeout
	}
	if cfg.ClientID == "" {
		cfg.ClientID = defaultClientID
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = defaultMaxBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
}

// Bus is the Kafka bus.
type Bus struct {
	cfg       Config
	log       *slog.Logger
	transport *kafka.Transport // shared by writer and client: one metadata cache, one connection pool
	client    *kafka.Client
	dialer    *kafka.Dialer // for consumer readers and admin connections
	w         *kafka.Writer

	mu     sync.Mutex // guards closed, topics and groups
	closed bool
	topics map[string]int     // topics known to exist → partition count
	groups map[string]*member // consumer group → the bus's member
	done   chan struct{}      // closed by Close
	pubs   sync.WaitGroup     // in-flight Publish calls
	subs   sync.WaitGroup     // running Subscribe calls and group members

	probe  sync.Mutex   // serialises health probes
	lastOK atomic.Int64 // unix nanos of the last successful metadata probe

	watch endWatch // the partitions' ends for waiting feed readers (feed.go)
}

var (
	_ hub.Bus            = (*Bus)(nil)
	_ hub.HealthReporter = (*Bus)(nil)
)

// New connects to the brokers and creates the missing topics. It fails
// when no broker answers a metadata request before ctx ends.
func New(ctx context.Context, cfg Config, topics []string) (*Bus, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafkabus: no brokers configured")
	}
	cfg.applyDefaults()
	b := &Bus{
		cfg:    cfg,
		log:    cfg.Logger,
		topics: map[string]int{},
		groups: map[string]*member{},
		done:   make(chan struct{}),
		dialer: &kafka.Dialer{ClientID: cfg.ClientID, Timeout: dialTimeout, DualStack: true},
	}
	b.transport = &kafka.Transport{ClientID: cfg.ClientID, DialTimeout: dialTimeout}
	b.client = &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: b.transport}
	b.w = &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Balancer:     &kafka.Hash{},
		BatchSize:    cfg.BatchSize,
		BatchTimeout: cfg.BatchTimeout,
		RequiredAcks: kafka.RequireAll,
		Transport:    b.transport,
		ErrorLogger:  b.kafkaLogger(slog.LevelWarn),
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, setupTimeout)
		defer cancel()
	}
	if err := b.probeBrokers(ctx); err != nil {
		b.transport.CloseIdleConnections()
		return nil, err
	}
	if len(topics) > 0 {
		if err := b.ensureTopics(ctx, topics); err != nil {
			b.transport.CloseIdleConnections()
			return nil, err
		}
	}
	return b, nil
}

// kafkaLogger routes kafka-go's logging to slog at level.
func (b *Bus) kafkaLogger(level slog.Level) kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) {
		if b.log.Enabled(context.Background(), level) {
			b.log.Log(context.Background(), level, "kafkabus: "+strings.TrimSpace(fmt.Sprintf(msg, args...)))
		}
	})
}

// groupLogger routes a ConsumerGroup's progress (joins, assignments,
// heartbeats) to slog at debug level, without its line per commit.
func (b *Bus) groupLogger() kafka.Logger {
	return kafka.LoggerFunc(func(msg string, args ...any) {
		if b.log.Enabled(context.Background(), slog.LevelDebug) && !strings.HasPrefix(msg, "committed offsets") {
			b.log.Debug("kafkabus: " + strings.TrimSpace(fmt.Sprintf(msg, args...)))
		}
	})
}

// probeBrokers sends a metadata request to each broker in turn until one
// answers.
func (b *Bus) probeBrokers(ctx context.Context) error {
	var errs []error
	for _, addr := range b.cfg.Brokers {
		conn, err := b.dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			if dl, ok := ctx.Deadline(); ok {
				_ = conn.SetDeadline(dl)
			}
			_, err = conn.Brokers()
			conn.Close()
		}
		if err == nil {
			b.lastOK.Store(time.Now().UnixNano())
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("kafkabus: no broker reachable at %s: %w", strings.Join(b.cfg.Brokers, ","), errors.Join(errs...))
}

// enter registers work on wg unless the bus is closed.
func (b *Bus) enter(wg *sync.WaitGroup) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	wg.Add(1)
	return true
}

// Publish writes msgs and returns once the brokers acknowledged all of
// them (acks=all). Messages are partitioned by a hash of Key, so one key
// keeps its order. Concurrent calls share the writer's batches.
func (b *Bus) Publish(ctx context.Context, msgs ...hub.Message) error {
	if !b.enter(&b.pubs) {
		return hub.ErrClosed
	}
	defer b.pubs.Done()
	if len(msgs) == 0 {
		return nil
	}
	if missing := b.unknownTopics(msgs); len(missing) > 0 {
		if err := b.ensureTopics(ctx, missing); err != nil {
			return err
		}
	}
	now := time.Now()
	km := make([]kafka.Message, len(msgs))
	for i, m := range msgs {
		if m.Time.IsZero() {
			m.Time = now // as embedbus; kafka-go would send timestamp 0
		}
		km[i] = kafka.Message{Topic: m.Topic, Key: m.Key, Value: m.Value, Time: m.Time}
	}
	if err := b.w.WriteMessages(ctx, km...); err != nil {
		if unknownTopic(err) {
			// the broker lost the topic (a broker started afresh): the
			// next publish creates it again instead of failing forever
			b.forgetTopics(msgs)
		}
		return fmt.Errorf("kafkabus: publish: %w", err)
	}
	return nil
}

// unknownTopic reports whether err, or one of a batch's errors, is
// UNKNOWN_TOPIC_OR_PARTITION.
func unknownTopic(err error) bool {
	if errors.Is(err, kafka.UnknownTopicOrPartition) {
		return true
	}
	var we kafka.WriteErrors
	if errors.As(err, &we) {
		for _, e := range we {
			if errors.Is(e, kafka.UnknownTopicOrPartition) {
				return true
			}
		}
	}
	return false
}

// forgetTopics drops the topics of msgs from the known ones.
func (b *Bus) forgetTopics(msgs []hub.Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range msgs {
		delete(b.topics, m.Topic)
	}
}

// unknownTopics lists the topics of msgs not yet known to exist.
func (b *Bus) unknownTopics(msgs []hub.Message) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var missing []string
	last := ""
	for _, m := range msgs {
		if m.Topic == last {
			continue
		}
		last = m.Topic
		if _, ok := b.topics[m.Topic]; !ok && !contains(missing, m.Topic) {
			missing = append(missing, m.Topic)
		}
	}
	return missing
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Close stops taking publishes and subscriptions, waits for in-flight
// publishes, flushes the writer and waits for the subscribers to stop,
// all before ctx ends. It is idempotent.
func (b *Bus) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.done)
	b.mu.Unlock()

	errPubs := wait(ctx, &b.pubs)
	errW := b.w.Close()
	errSubs := wait(ctx, &b.subs)
	b.transport.CloseIdleConnections()
	if errW != nil {
		errW = fmt.Errorf("kafkabus: close writer: %w", errW)
	}
	return errors.Join(errPubs, errW, errSubs)
}

// wait waits for wg or ctx.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("kafkabus: close: %w", ctx.Err())
	}
}

// Health is "healthy" when a metadata request to a broker succeeded within
// the last second, probing again when the last success is older, and
// "unhealthy" otherwise or once the bus is closed.
// Probe asks the brokers for their metadata now, whatever the last
// answer: nil when one of them answers. Health answers from a recent
// probe; a circuit breaker's watch calls Probe.
func (b *Bus) Probe(ctx context.Context) error {
	b.probe.Lock()
	defer b.probe.Unlock()
	return b.probeBrokers(ctx)
}

func (b *Bus) Health(ctx context.Context) string {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return "unhealthy"
	}
	b.probe.Lock()
	defer b.probe.Unlock()
	if time.Since(time.Unix(0, b.lastOK.Load())) < healthFresh {
		return "healthy"
	}
	ctx, cancel := context.WithTimeout(ctx, healthProbeTimeout)
	defer cancel()
	if err := b.probeBrokers(ctx); err != nil {
		b.log.Warn("kafkabus: health probe failed", "err", err)
		return "unhealthy"
	}
	return "healthy"
}
