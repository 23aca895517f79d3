// Package embedbus is the bus of a single node: topics split into
// partitions by key hash, each a sequence of messages with offsets from
// 1, consumer groups with committed offsets. It is the default bus.
//
// The partitions are keys of one hub/seglog log. With a directory (the
// embedded default, under --data) Publish returns only once its messages
// are durable (group commit: one fsync for whatever the publishers queued
// meanwhile), consumers see a message only once it is durable, and the
// groups' committed offsets are written to a file beside the segments at
// most CommitEvery after they move, and at Close: after a crash a group
// resumes from its last written commit, so at worst it is handed again
// what it had handled in that interval (at-least-once). Consumers follow
// the tail from memory; the disk serves recovery and readers far behind.
// Without a directory the bus lives in memory (tests).
//
// A Bus is safe for concurrent use: Publish, Range and Subscribe may be
// called from any goroutine. Subscribe runs one goroutine per partition
// and calls the handler from it; the members of one group take a
// per-partition mutex while they handle a batch, so two members never
// handle one partition at once. The groups' offsets are guarded by a
// mutex per group and the bus's own state by one more; with a directory,
// one goroutine writes the moved commits every CommitEvery, and the log's
// single writer goroutine (hub/seglog) group-commits the publishes.
package embedbus

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/seglog"
)

// Config of the bus.
type Config struct {
	// Dir keeps the bus durable there; "" keeps it in memory.
	Dir        string
	Partitions int           // per topic, default 8
	Retention  time.Duration // default 24h
	// MaxBytes bounds the bytes kept on disk (default
	// seglog.DefaultMaxBytes); MemBytes the messages kept in memory
	// over all partitions (default 128 MiB), which is also the
	// retention without Dir.
	MaxBytes int64
	MemBytes int64
	// SegmentBytes is the size of a segment file (default 64 MiB).
	SegmentBytes int64
	MaxBatch     int // messages per handler call, default 512
	// CommitEvery is how often moved group offsets are written (default
	// 100 ms).
	CommitEvery time.Duration
	// BeforeCommit, when set, is called each time committed offsets are
	// about to be written, after they were read: what the handlers did
	// with the messages below them must be durable when it returns nil
	// (cmd/fleethub syncs the stream log, which appends without an
	// fsync). On an error nothing is written and the next round tries
	// again.
	BeforeCommit func(context.Context) error
	Logger       *slog.Logger
}

// Default memory bound.
const DefaultMemBytes = 128 << 20

// groupsFile holds the committed offsets of every group.
const groupsFile = "groups"

// Bus is the single-node bus.
type Bus struct {
	cfg Config
	log *seglog.Log

	mu     sync.Mutex // guards groups, dirty and closed
	groups map[string]*group
	dirty  bool
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup // the commit loop
	subs   sync.WaitGroup // running Subscribe calls; added to under mu while not closed
	state  writeState     // the last writes' outcomes, for Health
	keys   sync.Map       // topic → []string, the log keys of its partitions (see partKey)
}

var _ hub.Bus = (*Bus)(nil)

// group keeps a group's offsets of one topic; parts[i] is held while a
// member handles partition i, so members of one group never handle the
// same message at once.
//
// Two offsets per partition: pos is the next offset to hand to a member
// (memory only), committed the one a group resumes from after a restart
// (written to disk). They differ while the handler holds a message
// (Subscription.Held): the commit stays at the held message, while the
// members go on from pos, so a held message costs no redelivery in a
// running process and is delivered again only after a crash, or to a
// member that joins once every member left (as on Kafka).
type group struct {
	mu        sync.Mutex // guards committed, pos and members
	committed []int64    // resume offset per partition; 0 when none
	pos       []int64    // next offset to hand out per partition; 0 when none
	members   int        // Subscribe calls consuming in the group
	parts     []sync.Mutex
}

func newGroup(committed []int64) *group {
	return &group{committed: committed, pos: append([]int64(nil), committed...), parts: make([]sync.Mutex, len(committed))}
}

// New makes a bus in memory.
func New(cfg Config) *Bus {
	cfg.Dir = ""
	b, err := Open(cfg)
	if err != nil {
		panic(err) // a bus without a directory opens no file
	}
	return b
}

// Open opens a bus; with cfg.Dir it is durable there.
func Open(cfg Config) (*Bus, error) {
	if cfg.Partitions <= 0 {
		cfg.Partitions = 8
	}
	if cfg.MemBytes <= 0 {
		cfg.MemBytes = DefaultMemBytes
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if cfg.CommitEvery <= 0 {
		cfg.CommitEvery = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Bus{cfg: cfg, groups: map[string]*group{}, done: make(chan struct{})}
	if cfg.Dir != "" {
		if err := b.loadGroups(); err != nil {
			return nil, err
		}
	}
	var err error
	b.log, err = seglog.Open(seglog.Config{Dir: cfg.Dir, Retention: cfg.Retention, MaxBytes: cfg.MaxBytes,
		SegmentBytes: cfg.SegmentBytes, MemBytes: cfg.MemBytes, KeyMemBytes: max(cfg.MemBytes/int64(cfg.Partitions), 1<<20),
		Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	if cfg.Dir != "" {
		b.wg.Add(1)
		go b.commitLoop()
	}
	return b, nil
}

// partKey is the log key of a topic partition, topic + "/" + part. The
// keys of a topic's partitions are made once and kept: a publish asked
// for its key each time, a concatenation per message. Topics are few (a
// bus serves a fixed set), so the cache stays small.
func (b *Bus) partKey(topic string, part int) string {
	if part < 0 || part >= b.cfg.Partitions {
		return topic + "/" + strconv.Itoa(part) // a key no record has
	}
	if ks, ok := b.keys.Load(topic); ok {
		return ks.([]string)[part]
	}
	ks := make([]string, b.cfg.Partitions)
	for i := range ks {
		ks[i] = topic + "/" + strconv.Itoa(i)
	}
	got, _ := b.keys.LoadOrStore(topic, ks)
	return got.([]string)[part]
}

// partitionOf is a key's partition: its 32-bit FNV-1a hash modulo the
// partition count (written out: hash/fnv's hasher is allocated per call).
func (b *Bus) partitionOf(key []byte) int {
	if len(key) == 0 {
		return 0
	}
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	for _, c := range key {
		h = (h ^ uint32(c)) * prime32
	}
	return int(h % uint32(b.cfg.Partitions))
}

// Publish appends messages; it returns once they are durable.
func (b *Bus) Publish(ctx context.Context, msgs ...hub.Message) error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return hub.ErrClosed
	}
	recs := b.records(msgs)
	err := b.log.Append(ctx, recs)
	if ctx.Err() == nil {
		b.state.appended(err)
	}
	if err != nil {
		if errors.Is(err, seglog.ErrClosed) {
			return hub.ErrClosed
		}
		return fmt.Errorf("bus: %w", err)
	}
	return nil
}

// records makes the log's records of msgs. The data of a call's records
// of one partition share one array: the log keeps a partition's records
// in memory in order and lets them go in order, so the array is held by
// those records only, about as long as each would hold its own (one
// array for the whole call would be held by whichever partition keeps
// its records longest).
func (b *Bus) records(msgs []hub.Message) []seglog.Record {
	type part struct {
		topic string
		part  int
		key   string
		size  int
		buf   []byte
	}
	// the call's partitions, in the order met, and each message's index
	// among them; on the stack for the common small call
	var partsArr [4]part
	var atArr [8]int
	parts, at := partsArr[:0], atArr[:0]
	if len(msgs) > len(atArr) {
		at = make([]int, len(msgs))
	} else {
		at = at[:len(msgs)]
	}
	for i, m := range msgs {
		p, k := b.partitionOf(m.Key), -1
		for j := range parts {
			if parts[j].part == p && parts[j].topic == m.Topic {
				k = j
				break
			}
		}
		if k < 0 {
			k = len(parts)
			parts = append(parts, part{topic: m.Topic, part: p, key: b.partKey(m.Topic, p)})
		}
		at[i] = k
		parts[k].size += binary.MaxVarintLen32 + len(m.Key) + len(m.Value)
	}
	for j := range parts {
		parts[j].buf = make([]byte, 0, parts[j].size)
	}
	recs := make([]seglog.Record, len(msgs))
	for i, m := range msgs {
		p := &parts[at[i]]
		start := len(p.buf)
		p.buf = binary.AppendUvarint(p.buf, uint64(len(m.Key)))
		p.buf = append(append(p.buf, m.Key...), m.Value...)
		recs[i] = seglog.Record{Key: p.key, Time: m.Time, Data: p.buf[start:len(p.buf):len(p.buf)]}
	}
	return recs
}

// decode turns log entries of a partition into messages.
func decode(topic string, part int, es []hub.Entry) ([]hub.Message, error) {
	out := make([]hub.Message, 0, len(es))
	for _, e := range es {
		n, w := binary.Uvarint(e.Data)
		if w <= 0 || uint64(len(e.Data)-w) < n {
			return out, fmt.Errorf("bus: %s partition %d offset %d: undecodable record", topic, part, e.Offset)
		}
		k := e.Data[w : w+int(n)]
		out = append(out, hub.Message{Topic: topic, Partition: part, Offset: e.Offset, Time: e.Time, Key: k, Value: e.Data[w+int(n):]})
	}
	return out, nil
}

// Range returns retained messages of a topic partition from offset from,
// at most max.
func (b *Bus) Range(ctx context.Context, topic string, part int, from int64, max int) ([]hub.Message, error) {
	if part < 0 || part >= b.cfg.Partitions {
		return nil, fmt.Errorf("embedbus: partition %d out of range", part)
	}
	es, err := b.log.Read(ctx, b.partKey(topic, part), from, max)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	return decode(topic, part, es)
}

// Partitions is the partition count of every topic.
func (b *Bus) Partitions(ctx context.Context, topic string) (int, error) {
	return b.cfg.Partitions, nil
}

// Bounds are the oldest retained offset of a partition and the offset
// its next message will get.
func (b *Bus) Bounds(ctx context.Context, topic string, part int) (first, end int64, err error) {
	if part < 0 || part >= b.cfg.Partitions {
		return 0, 0, fmt.Errorf("embedbus: partition %d out of range", part)
	}
	first, last := b.log.Bounds(b.partKey(topic, part))
	return first, last + 1, nil
}

// ReadAt is Range (the feed's name for it).
func (b *Bus) ReadAt(ctx context.Context, topic string, part int, from int64, max int) ([]hub.Message, error) {
	return b.Range(ctx, topic, part, from, max)
}

// Wait returns nil once the partition holds a message with Offset >=
// from (durable: consumers see it), or ctx's error.
func (b *Bus) Wait(ctx context.Context, topic string, part int, from int64) error {
	select {
	case <-b.log.Wait(b.partKey(topic, part), from):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-b.done:
		return hub.ErrClosed
	}
}

func (b *Bus) group(topic, name string) *group {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := topic + "\x00" + name
	g := b.groups[k]
	if g == nil {
		g = newGroup(make([]int64, b.cfg.Partitions))
		b.groups[k] = g
	}
	return g
}

// Subscribe consumes until ctx ends or the bus closes.
func (b *Bus) Subscribe(ctx context.Context, sub hub.Subscription, h hub.Handler) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return hub.ErrClosed
	}
	b.subs.Add(1)
	b.mu.Unlock()
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
	var g *group
	if sub.Group != "" {
		g = b.group(sub.Topic, sub.Group)
		g.mu.Lock()
		if g.members == 0 {
			// the first member resumes where the group committed, held
			// messages included
			copy(g.pos, g.committed)
		}
		g.members++
		for i, c := range g.committed {
			// offsets that started again (a wiped log) restart the group
			if _, last := b.log.Bounds(b.partKey(sub.Topic, i)); c > last+1 || g.pos[i] > last+1 {
				b.cfg.Logger.Warn("bus: committed offset past the log's end; the group restarts from the oldest retained message",
					"topic", sub.Topic, "group", sub.Group, "partition", i, "committed", c, "last", last)
				g.committed[i], g.pos[i] = 0, 0
			}
		}
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.members--
			g.mu.Unlock()
		}()
	}
	var wg sync.WaitGroup
	errs := make(chan error, b.cfg.Partitions)
	for i := range b.cfg.Partitions {
		first, last := b.log.Bounds(b.partKey(sub.Topic, i))
		next := last + 1
		if sub.Start == hub.StartEarliest {
			next = first
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.consume(ctx, sub, i, next, g, h); err != nil && ctx.Err() == nil {
				errs <- err
				cancel()
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	return nil
}

func (b *Bus) consume(ctx context.Context, sub hub.Subscription, pi int, next int64, g *group, h hub.Handler) error {
	key := b.partKey(sub.Topic, pi)
	for {
		if g != nil {
			g.mu.Lock()
			if g.pos[pi] > 0 {
				next = g.pos[pi]
			}
			g.mu.Unlock()
		}
		wait := b.log.Wait(key, next)
		es, err := b.log.Read(ctx, key, next, b.cfg.MaxBatch)
		if err != nil {
			return fmt.Errorf("bus: %w", err)
		}
		if len(es) == 0 {
			var recheck *time.Timer
			var fire <-chan time.Time
			if g != nil && sub.Held != nil && b.heldBack(g, pi) {
				// the commit stopped at a held message: move it once the
				// handler released it, even when no new message comes
				recheck = time.NewTimer(heldRecheck)
				fire = recheck.C
			}
			select {
			case <-ctx.Done():
				return nil
			case <-wait:
			case <-fire:
				g.mu.Lock()
				pos := g.pos[pi]
				g.mu.Unlock()
				b.commit(g, pi, pos, sub.Held)
			}
			if recheck != nil {
				recheck.Stop()
			}
			continue
		}
		batch, err := decode(sub.Topic, pi, es)
		if err != nil {
			b.cfg.Logger.Error("bus: skipping an undecodable record", "error", err)
			if len(batch) == 0 {
				next = es[0].Offset + 1
				b.commit(g, pi, next, sub.Held)
				continue
			}
		}
		if g != nil {
			g.parts[pi].Lock()
			g.mu.Lock()
			stale := g.pos[pi] > batch[0].Offset
			g.mu.Unlock()
			if !stale {
				if err = h(ctx, batch); err == nil {
					b.commit(g, pi, batch[len(batch)-1].Offset+1, sub.Held)
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

// commit moves a group's position in a partition to next, and its
// committed offset too, but never past the oldest message the handler
// still holds.
func (b *Bus) commit(g *group, pi int, next int64, held func(int) (int64, bool)) {
	if g == nil {
		return
	}
	g.mu.Lock()
	if next > g.pos[pi] {
		g.pos[pi] = next
	}
	g.mu.Unlock()
	if held != nil {
		if h, ok := held(pi); ok && h < next {
			next = h
		}
	}
	g.mu.Lock()
	moved := next > g.committed[pi]
	if moved {
		g.committed[pi] = next
	}
	g.mu.Unlock()
	if moved {
		b.mu.Lock()
		b.dirty = true
		b.mu.Unlock()
	}
}

// heldRecheck is how soon a commit held back by Subscription.Held is
// tried again while no message comes.
const heldRecheck = 250 * time.Millisecond

// heldBack reports whether a group's commit of a partition is behind its
// position (stopped at a held message).
func (b *Bus) heldBack(g *group, pi int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.committed[pi] < g.pos[pi]
}

// commitLoop writes moved group offsets every CommitEvery.
func (b *Bus) commitLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.CommitEvery)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-t.C:
			if err := b.writeGroups(false); err != nil {
				b.cfg.Logger.Error("bus: cannot write committed offsets", "error", err)
			}
		}
	}
}

// writeGroups writes every group's committed offsets when they moved
// (or always with force).
func (b *Bus) writeGroups(force bool) error {
	b.mu.Lock()
	if !b.dirty && !force {
		b.mu.Unlock()
		return nil
	}
	b.dirty = false
	snap := make(map[string][]int64, len(b.groups))
	for k, g := range b.groups {
		g.mu.Lock()
		snap[k] = append([]int64(nil), g.committed...)
		g.mu.Unlock()
	}
	b.mu.Unlock()
	if b.cfg.BeforeCommit != nil {
		if err := b.cfg.BeforeCommit(context.Background()); err != nil {
			b.mu.Lock()
			b.dirty = true
			b.mu.Unlock()
			return fmt.Errorf("bus: before the commit: %w", err)
		}
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	path := filepath.Join(b.cfg.Dir, groupsFile)
	tmp := path + ".tmp"
	err = os.WriteFile(tmp, raw, 0o644)
	var f *os.File
	if err == nil {
		f, err = os.Open(tmp)
	}
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	b.state.committed(err)
	if err != nil {
		b.mu.Lock()
		b.dirty = true
		b.mu.Unlock()
		return fmt.Errorf("bus: %w", err)
	}
	return nil
}

func (b *Bus) loadGroups() error {
	if err := os.MkdirAll(b.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(b.cfg.Dir, groupsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bus: %w", err)
	}
	var snap map[string][]int64
	if err := json.Unmarshal(raw, &snap); err != nil {
		// written by rename, so a torn file means a damaged disk: the
		// groups start over from the oldest retained message
		b.cfg.Logger.Error("bus: committed offsets unreadable; every group restarts from the oldest retained message", "file", filepath.Join(b.cfg.Dir, groupsFile), "error", err)
		return nil
	}
	for k, offs := range snap {
		if len(offs) != b.cfg.Partitions {
			return fmt.Errorf("bus: %s: %d partitions recorded, %d configured", filepath.Join(b.cfg.Dir, groupsFile), len(offs), b.cfg.Partitions)
		}
		b.groups[k] = newGroup(offs)
	}
	return nil
}

// Close stops every consumer and waits, until ctx ends, for their handler
// calls to return and the batches handled to be committed; it then writes
// the committed offsets and closes the log. A handler still running when
// ctx ends has its batch handed again after a restart.
func (b *Bus) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.done)
	b.mu.Unlock()
	errSubs := waitSubs(ctx, &b.subs)
	b.wg.Wait()
	var err error
	if b.cfg.Dir != "" {
		err = b.writeGroups(true)
	}
	return errors.Join(errSubs, err, b.log.Close())
}

// waitSubs waits for wg or ctx.
func waitSubs(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("bus: close: consumers still running: %w", ctx.Err())
	}
}

// Stats returns the sizes of the bus log.
func (b *Bus) Stats() seglog.Stats { return b.log.Stats() }
