// Package membus is the in-process bus: topics split into partitions by
// key hash, each an append-only log kept for Retention or up to MaxPerPart
// messages, consumer groups with committed offsets. It is the default bus
// of a single node.
package membus

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Config of the bus.
type Config struct {
	Partitions int           // per topic, default 8
	Retention  time.Duration // default 24h
	MaxPerPart int           // messages kept per partition, default 1,000,000
	MaxBatch   int           // messages per handler call, default 512
}

// Bus is the in-process bus.
type Bus struct {
	cfg    Config
	now    func() time.Time
	mu     sync.Mutex // guards topics and closed
	topics map[string]*topic
	closed bool
	done   chan struct{}
}

var _ hub.Bus = (*Bus)(nil)

type topic struct {
	parts  []*partition
	groups map[string]*group
}

type partition struct {
	mu     sync.Mutex // guards the log
	cond   *sync.Cond
	base   int64 // offset of log[0]
	log    []hub.Message
	notify chan struct{} // closed and replaced on every append
}

// group keeps committed offsets; parts[i] is held while a member handles
// partition i, so members of one group never handle the same message.
type group struct {
	mu        sync.Mutex // guards committed
	committed []int64    // next offset per partition; -1 when none
	parts     []sync.Mutex
}

// New makes a bus.
func New(cfg Config) *Bus {
	if cfg.Partitions <= 0 {
		cfg.Partitions = 8
	}
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.MaxPerPart <= 0 {
		cfg.MaxPerPart = 1_000_000
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	return &Bus{cfg: cfg, now: time.Now, topics: map[string]*topic{}, done: make(chan struct{})}
}

func (b *Bus) topic(name string) (*topic, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, hub.ErrClosed
	}
	t := b.topics[name]
	if t == nil {
		t = &topic{groups: map[string]*group{}}
		for i := 0; i < b.cfg.Partitions; i++ {
			p := &partition{notify: make(chan struct{})}
			p.cond = sync.NewCond(&p.mu)
			t.parts = append(t.parts, p)
		}
		b.topics[name] = t
	}
	return t, nil
}

func (b *Bus) partitionOf(key []byte) int {
	if len(key) == 0 {
		return 0
	}
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % uint32(b.cfg.Partitions))
}

// Publish appends messages to their topics.
func (b *Bus) Publish(ctx context.Context, msgs ...hub.Message) error {
	now := b.now()
	for _, m := range msgs {
		t, err := b.topic(m.Topic)
		if err != nil {
			return err
		}
		pi := b.partitionOf(m.Key)
		p := t.parts[pi]
		p.mu.Lock()
		m.Partition = pi
		m.Offset = p.base + int64(len(p.log))
		if m.Time.IsZero() {
			m.Time = now
		}
		p.log = append(p.log, m)
		b.trim(p, now)
		close(p.notify)
		p.notify = make(chan struct{})
		p.mu.Unlock()
	}
	return nil
}

// trim drops messages past retention; lock must be held.
func (b *Bus) trim(p *partition, now time.Time) {
	drop := 0
	if over := len(p.log) - b.cfg.MaxPerPart; over > 0 {
		drop = over
	}
	for drop < len(p.log) && now.Sub(p.log[drop].Time) > b.cfg.Retention {
		drop++
	}
	if drop > 0 {
		// copy so the old backing array can be collected
		if drop > len(p.log)/2 {
			p.log = append([]hub.Message(nil), p.log[drop:]...)
		} else {
			p.log = p.log[drop:]
		}
		p.base += int64(drop)
	}
}

// Range returns retained messages of a topic partition from offset from,
// at most max; it is how resumable readers catch up.
func (b *Bus) Range(topicName string, part int, from int64, max int) ([]hub.Message, error) {
	t, err := b.topic(topicName)
	if err != nil {
		return nil, err
	}
	if part < 0 || part >= len(t.parts) {
		return nil, fmt.Errorf("membus: partition %d out of range", part)
	}
	p := t.parts[part]
	p.mu.Lock()
	defer p.mu.Unlock()
	if from < p.base {
		from = p.base
	}
	i := int(from - p.base)
	if i >= len(p.log) {
		return nil, nil
	}
	end := min(len(p.log), i+max)
	return append([]hub.Message(nil), p.log[i:end]...), nil
}

// Subscribe consumes until ctx ends or the bus closes.
func (b *Bus) Subscribe(ctx context.Context, sub hub.Subscription, h hub.Handler) error {
	t, err := b.topic(sub.Topic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-b.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	next := make([]int64, len(t.parts))
	var g *group
	if sub.Group != "" {
		b.mu.Lock()
		g = t.groups[sub.Group]
		if g == nil {
			g = &group{committed: make([]int64, len(t.parts)), parts: make([]sync.Mutex, len(t.parts))}
			for i := range g.committed {
				g.committed[i] = -1
			}
			t.groups[sub.Group] = g
		}
		b.mu.Unlock()
	}
	for i, p := range t.parts {
		p.mu.Lock()
		if sub.Start == hub.StartEarliest {
			next[i] = p.base
		} else {
			next[i] = p.base + int64(len(p.log))
		}
		p.mu.Unlock()
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(t.parts))
	for i := range t.parts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := b.consume(ctx, t, i, next[i], g, h); err != nil && ctx.Err() == nil {
				errs <- err
				cancel()
			}
		}(i)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return nil
}

func (b *Bus) consume(ctx context.Context, t *topic, pi int, next int64, g *group, h hub.Handler) error {
	p := t.parts[pi]
	for {
		if g != nil {
			g.mu.Lock()
			if g.committed[pi] >= 0 {
				next = g.committed[pi]
			}
			g.mu.Unlock()
		}
		p.mu.Lock()
		if next < p.base {
			next = p.base
		}
		i := int(next - p.base)
		var batch []hub.Message
		if i < len(p.log) {
			end := min(len(p.log), i+b.cfg.MaxBatch)
			batch = append([]hub.Message(nil), p.log[i:end]...)
		}
		wait := p.notify
		p.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-wait:
				continue
			}
		}
		var err error
		if g != nil {
			g.parts[pi].Lock()
			g.mu.Lock()
			stale := g.committed[pi] > batch[0].Offset
			g.mu.Unlock()
			if !stale {
				if err = h(ctx, batch); err == nil {
					g.mu.Lock()
					g.committed[pi] = batch[len(batch)-1].Offset + 1
					g.mu.Unlock()
				}
			}
			g.parts[pi].Unlock()
			if stale {
				continue
			}
		} else if err = h(ctx, batch); err == nil {
			next = batch[len(batch)-1].Offset + 1
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// Close stops every consumer.
func (b *Bus) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.done)
	}
	return nil
}

// Health is always healthy for the in-process bus.
func (b *Bus) Health(ctx context.Context) string { return "healthy" }
