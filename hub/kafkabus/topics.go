package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// ensureTopics creates those of names that are missing, with
// Config.Partitions and Config.ReplicationFactor, waits until the writer's
// metadata cache holds every one of them and records their partition
// counts. Existing topics keep their partition count.
func (b *Bus) ensureTopics(ctx context.Context, names []string) error {
	if err := b.createTopics(ctx, names); err != nil {
		return err
	}
	counts, err := b.awaitTopics(ctx, names)
	if err != nil {
		return err
	}
	b.mu.Lock()
	for name, n := range counts {
		b.topics[name] = n
	}
	b.mu.Unlock()
	return nil
}

// createTopics asks the controller to create names; kafka-go ignores
// TOPIC_ALREADY_EXISTS, so the call is idempotent. We create before any
// metadata request: kafka-go's Conn.ReadPartitions sets
// AllowAutoTopicCreation, and a broker with auto-creation enabled would
// create the topic with its own defaults first.
func (b *Bus) createTopics(ctx context.Context, names []string) error {
	conn, err := b.dialAny(ctx)
	if err != nil {
		return err
	}
	ctrl, err := conn.Controller()
	conn.Close()
	if err != nil {
		return fmt.Errorf("kafkabus: find controller: %w", err)
	}
	addr := net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port))
	cc, err := b.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("kafkabus: dial controller %s: %w", addr, err)
	}
	defer cc.Close()
	setDeadline(ctx, cc)
	configs := make([]kafka.TopicConfig, len(names))
	for i, name := range names {
		configs[i] = kafka.TopicConfig{
			Topic:             name,
			NumPartitions:     b.cfg.Partitions,
			ReplicationFactor: b.cfg.ReplicationFactor,
		}
	}
	if err := cc.CreateTopics(configs...); err != nil {
		return fmt.Errorf("kafkabus: create topics %v: %w", names, err)
	}
	return nil
}

// awaitTopics returns the partition count of each of names once every
// partition has a leader and the shared transport's metadata cache holds
// the topic. kafka-go's Writer fails at once with UNKNOWN_TOPIC_OR_PARTITION
// for a topic missing from that cache (refreshed only every 6 s); a metadata
// request that allows auto-creation is the one request that makes the
// transport fetch uncached topics and wait until they appear. The topics
// exist by now, so nothing is auto-created.
func (b *Bus) awaitTopics(ctx context.Context, names []string) (map[string]int, error) {
	req := &metadataAPI.Request{TopicNames: names, AllowAutoTopicCreation: true}
	for {
		r, err := b.transport.RoundTrip(ctx, b.client.Addr, req)
		counts, pending := map[string]int{}, error(nil)
		if err == nil {
			for _, t := range r.(*metadataAPI.Response).Topics {
				if t.ErrorCode != 0 {
					pending = fmt.Errorf("topic %s: %w", t.Name, kafka.Error(t.ErrorCode))
					continue
				}
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 || p.LeaderID < 0 {
						pending = fmt.Errorf("topic %s partition %d: no leader yet", t.Name, p.PartitionIndex)
					}
				}
				counts[t.Name] = len(t.Partitions)
			}
			for _, name := range names {
				if _, ok := counts[name]; !ok && pending == nil {
					pending = fmt.Errorf("topic %s: not in metadata", name)
				}
			}
			if pending == nil {
				return counts, nil
			}
			err = pending
		}
		var kerr kafka.Error
		if errors.As(err, &kerr) && !kerr.Temporary() {
			return nil, fmt.Errorf("kafkabus: topic metadata: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kafkabus: topics %v not ready: %w", names, errors.Join(err, ctx.Err()))
		case <-time.After(topicReadyPollBackoff):
		}
	}
}

// partitions returns the partition count of a known topic, creating the
// topic when it is missing.
func (b *Bus) partitions(ctx context.Context, topic string) (int, error) {
	b.mu.Lock()
	n, ok := b.topics[topic]
	b.mu.Unlock()
	if ok {
		return n, nil
	}
	if err := b.ensureTopics(ctx, []string{topic}); err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.topics[topic], nil
}

// dialAny connects to the first broker that answers.
func (b *Bus) dialAny(ctx context.Context) (*kafka.Conn, error) {
	var errs []error
	for _, addr := range b.cfg.Brokers {
		conn, err := b.dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			setDeadline(ctx, conn)
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("kafkabus: dial brokers: %w", errors.Join(errs...))
}

// setDeadline bounds conn's requests by ctx's deadline, or setupTimeout.
func setDeadline(ctx context.Context, conn *kafka.Conn) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(setupTimeout)
	}
	_ = conn.SetDeadline(dl)
}
