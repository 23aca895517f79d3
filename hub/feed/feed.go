// Package feed reads an organization's messages from the durable bus log
// (the events and telemetry topics) by position: the pull and
// Server-Sent Events feed of /api/v1/streaming/feed.
//
// A Feed reads every partition of the topics asked for through a Reader
// (hub/embedbus and hub/kafkabus implement it), keeps the messages of
// the caller's organization and environment that the caller's Matcher
// takes, and hands them out oldest first: the partitions are merged by
// the bus time of their messages (ties by topic, then partition), so a
// page is in the order the bus took the messages within a partition and
// in time order across them.
//
// A position is the next offset of every partition of every topic read;
// it travels as one opaque cursor (Position.Cursor). Every entry carries
// the cursor just past it, so a reader that resumes from an entry's
// cursor gets what follows it with no gap and no duplicate, whatever
// transport it continues on. A cursor older than the oldest retained
// message of a partition is refused with ErrExpired (it would skip what
// retention deleted); a position past a partition's end (a log that
// started over) too.
//
// A Feed keeps the messages it decoded last, per partition (512 each),
// so that readers of the same part of the log (live event streams and
// consoles following the head, several readers of one page) decode each
// message once: an Entry's Message may be shared with other readers and
// must not be changed. It holds no other state between calls: it is safe
// for concurrent use as far as its Reader is. Pull blocks only in Wait,
// bounded by the query's wait and the caller's ctx.
package feed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// Reader reads a bus topic's retained log by offset.
type Reader interface {
	// Partitions is the topic's partition count.
	Partitions(ctx context.Context, topic string) (int, error)
	// Bounds are the oldest retained offset of a partition and the
	// offset its next message will get (first == end when it holds
	// none).
	Bounds(ctx context.Context, topic string, partition int) (first, end int64, err error)
	// ReadAt returns up to max retained messages of a partition with
	// Offset >= from, in offset order.
	ReadAt(ctx context.Context, topic string, partition int, from int64, max int) ([]hub.Message, error)
	// Wait returns nil once the partition holds a message with Offset >=
	// from, or ctx's error when ctx ends first.
	Wait(ctx context.Context, topic string, partition int, from int64) error
}

// Matcher decides which messages of the organization a reader gets.
type Matcher interface {
	Match(env *event.Envelope) bool
}

// Limits of a query.
const (
	MaxLimit = 1000
	MaxWait  = 30 * time.Second
	// scanBudget bounds the messages one Pull looks at: a filter that
	// takes few of them answers fewer entries (its next_cursor past what
	// it looked at) instead of scanning the whole log.
	scanBudget = 50_000
	readChunk  = 256
)

// Errors of a query.
var (
	// ErrExpired is a cursor older than the oldest retained message.
	ErrExpired = errors.New("feed: cursor expired")
)

// ExpiredError is ErrExpired with the cursor of the oldest retained
// message, where a reader may start again.
type ExpiredError struct{ FirstAvailable string }

func (e *ExpiredError) Error() string { return ErrExpired.Error() }
func (e *ExpiredError) Unwrap() error { return ErrExpired }

// Query is one read of the feed.
type Query struct {
	Org, Env string
	Topics   []string // hub.TopicEvents, hub.TopicTelemetry
	// After is a cursor; "" starts at the oldest retained message,
	// "now" at the end (only new messages).
	After string
	Limit int           // 1..MaxLimit
	Wait  time.Duration // 0..MaxWait: how long to wait for a first entry
	Match Matcher       // nil takes every message of the tenant
}

// Entry is one message of the feed and the cursor just past it.
type Entry struct {
	Cursor string
	Topic  string
	// Partition and Offset locate the message in its topic's log.
	Partition int
	Offset    int64
	// Message may be shared with other readers of the feed: read it,
	// never change it.
	Message *event.Envelope
	shared  *decoded // where Message came from, nil if from no cache
}

// MessageJSON is the JSON of the entry's event or telemetry message. An
// entry read from the log shares it with every other reader of the same
// message, so it is encoded once however many readers there are; the
// bytes are shared too: read them, never change them.
func (e Entry) MessageJSON() ([]byte, error) {
	if e.shared != nil && e.shared.env == e.Message {
		return e.shared.messageJSON()
	}
	return encodeMessage(e.Message)
}

// Page is what a Pull returns; Next is where to continue (past the
// last entry, or past what was looked at when nothing matched).
type Page struct {
	Entries []Entry
	Next    string
}

// Feed reads the bus log.
type Feed struct {
	r     Reader
	cache *decodedCache
}

// New makes a feed over r.
func New(r Reader) *Feed { return &Feed{r: r, cache: newDecodedCache()} }

// Start resolves a query's After to a position, checking it against
// what the log retains.
func (f *Feed) Start(ctx context.Context, q *Query) (Position, error) {
	bounds := make(map[string][][2]int64, len(q.Topics))
	for _, t := range q.Topics {
		bs, err := f.topicBounds(ctx, t)
		if err != nil {
			return nil, err
		}
		bounds[t] = bs
	}
	pick := func(which int) Position {
		p := Position{}
		for t, bs := range bounds {
			p[t] = make([]int64, len(bs))
			for i, b := range bs {
				p[t][i] = b[which]
			}
		}
		return p
	}
	switch q.After {
	case "":
		return pick(0), nil
	case "now":
		return pick(1), nil
	}
	pos, err := ParseCursor(q.After)
	if err != nil {
		return nil, err
	}
	if len(pos) != len(q.Topics) {
		return nil, fmt.Errorf("%w: made for other types", ErrBadCursor)
	}
	for _, t := range q.Topics {
		offs, ok := pos[t]
		if !ok || len(offs) > len(bounds[t]) {
			return nil, fmt.Errorf("%w: made for other types", ErrBadCursor)
		}
		for i, b := range bounds[t] {
			if i >= len(offs) {
				offs = append(offs, b[0]) // a partition added since: from its start
				continue
			}
			if offs[i] < b[0] || offs[i] > b[1] {
				return nil, &ExpiredError{FirstAvailable: pick(0).Cursor(q.Topics)}
			}
		}
		pos[t] = offs
	}
	return pos, nil
}

// AllBounds is an optional ability of a Reader: the bounds of every
// partition of a topic in one request (Kafka's ListOffsets takes them
// all at once).
type AllBounds interface {
	AllBounds(ctx context.Context, topic string) ([][2]int64, error)
}

// topicBounds are the first and end offsets of every partition of a
// topic.
func (f *Feed) topicBounds(ctx context.Context, topic string) ([][2]int64, error) {
	if ab, ok := f.r.(AllBounds); ok {
		bs, err := ab.AllBounds(ctx, topic)
		if err != nil {
			return nil, fmt.Errorf("feed: bounds of %s: %w", topic, err)
		}
		return bs, nil
	}
	n, err := f.r.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("feed: partitions of %s: %w", topic, err)
	}
	bs := make([][2]int64, n)
	for i := range n {
		first, end, err := f.r.Bounds(ctx, topic, i)
		if err != nil {
			return nil, fmt.Errorf("feed: bounds of %s/%d: %w", topic, i, err)
		}
		bs[i] = [2]int64{first, end}
	}
	return bs, nil
}

// Pull reads up to q.Limit entries after q.After, waiting up to q.Wait
// for the first one.
func (f *Feed) Pull(ctx context.Context, q Query) (Page, error) {
	pos, err := f.Start(ctx, &q)
	if err != nil {
		return Page{}, err
	}
	return f.PullFrom(ctx, q, pos)
}

// PullFrom is Pull from a position Start resolved; pos moves past what
// was read.
func (f *Feed) PullFrom(ctx context.Context, q Query, pos Position) (Page, error) {
	var deadline time.Time
	if q.Wait > 0 {
		deadline = time.Now().Add(q.Wait)
	}
	for {
		entries, err := f.read(ctx, q, pos)
		if err != nil {
			return Page{}, err
		}
		if len(entries) > 0 || q.Wait <= 0 || !time.Now().Before(deadline) {
			return Page{Entries: entries, Next: pos.Cursor(q.Topics)}, nil
		}
		wctx, cancel := context.WithDeadline(ctx, deadline)
		err = f.wait(wctx, q.Topics, pos)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return Page{}, ctx.Err()
			}
			return Page{Entries: entries, Next: pos.Cursor(q.Topics)}, nil // waited the whole time
		}
	}
}

// wait returns nil once any partition holds a message at or past pos.
func (f *Feed) wait(ctx context.Context, topics []string, pos Position) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan error, 1)
	for _, t := range topics {
		for i, off := range pos[t] {
			go func() {
				if err := f.r.Wait(ctx, t, i, off); err == nil {
					select {
					case got <- nil:
					default:
					}
				}
			}()
		}
	}
	select {
	case <-got:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// part is one partition's read-ahead during a merge.
type part struct {
	topic string
	index int
	buf   []hub.Message
	done  bool // read to its end
	// decoded is the partition's cache of decoded messages
	decoded *slots
	// the bus time of buf[0], as seconds and nanoseconds: compared on
	// every message the merge takes, cheaper than time.Time's methods
	sec  int64
	nsec int32
}

// advance drops the head of buf.
func (p *part) advance() {
	p.buf = p.buf[1:]
	p.head()
}

// head notes the time of buf[0].
func (p *part) head() {
	if len(p.buf) > 0 {
		t := p.buf[0].Time
		p.sec, p.nsec = t.Unix(), int32(t.Nanosecond())
	}
}

// read merges the partitions from pos, oldest first, into at most
// q.Limit entries of the tenant that q.Match takes, moving pos past
// every message looked at. Another tenant's message is skipped by the
// tenant at the head of its encoding, undecoded; a partition is read
// ahead (readChunk messages) only once the merge has used what it had.
func (f *Feed) read(ctx context.Context, q Query, pos Position) ([]Entry, error) {
	var parts []*part
	for _, t := range q.Topics {
		for i := range pos[t] {
			p := &part{topic: t, index: i, decoded: f.cache.of(t, i)}
			if err := f.fill(ctx, q.Topics, pos, p); err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
	}
	var cw cursorWriter
	out := make([]Entry, 0, min(q.Limit, readChunk))
	for scanned := 0; len(out) < q.Limit && scanned < scanBudget; scanned++ {
		next := oldest(parts)
		if next == nil {
			break
		}
		m := next.buf[0]
		next.advance()
		pos[next.topic][next.index] = m.Offset + 1
		if d := f.take(q, next.decoded, m); d != nil {
			out = append(out, Entry{Cursor: cw.cursor(pos, q.Topics), Topic: next.topic, Partition: next.index, Offset: m.Offset, Message: d.env, shared: d})
		}
		if len(next.buf) == 0 && len(out) < q.Limit {
			if err := f.fill(ctx, q.Topics, pos, next); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// take decodes a message of the query's tenant (or finds it decoded) that
// its filter takes; nil for any other.
func (f *Feed) take(q Query, s *slots, m hub.Message) *decoded {
	if org, env, ok := event.Tenant(m.Value); ok && (string(org) != q.Org || string(env) != q.Env) {
		return nil // another tenant's: not decoded
	}
	d, err := f.cache.decode(s, m.Offset, m.Value)
	if err != nil || d.env.Org != q.Org || d.env.Env != q.Env {
		return nil // another tenant's, or not a message of the model
	}
	if q.Match != nil && !q.Match.Match(d.env) {
		return nil
	}
	return d
}

// oldest is the partition whose next message the merge takes: the
// oldest head, nil when every partition is read to its end.
func oldest(parts []*part) *part {
	var next *part
	for _, p := range parts {
		if len(p.buf) > 0 && (next == nil || older(p, next)) {
			next = p
		}
	}
	return next
}

// fill reads ahead a partition whose read-ahead is used up, from its
// position; a partition that has nothing more is done for this read.
func (f *Feed) fill(ctx context.Context, topics []string, pos Position, p *part) error {
	if len(p.buf) > 0 || p.done {
		return nil
	}
	from := pos[p.topic][p.index]
	msgs, err := f.r.ReadAt(ctx, p.topic, p.index, from, readChunk)
	if err != nil {
		return fmt.Errorf("feed: read %s/%d: %w", p.topic, p.index, err)
	}
	if len(msgs) > 0 && msgs[0].Offset > from {
		// a gap: retention cut the log under the reader, or (Kafka)
		// offsets the log never had; only the first is an error
		if err := f.cutUnder(ctx, topics, p.topic, p.index, from); err != nil {
			return err
		}
	}
	p.buf, p.done = msgs, len(msgs) == 0
	p.head()
	return nil
}

// cutUnder returns an ExpiredError when from is older than the oldest
// retained offset of the partition: what lay between was deleted while
// the reader was behind it, and is reported rather than skipped.
func (f *Feed) cutUnder(ctx context.Context, topics []string, topic string, partition int, from int64) error {
	first, _, err := f.r.Bounds(ctx, topic, partition)
	if err != nil {
		return fmt.Errorf("feed: bounds of %s/%d: %w", topic, partition, err)
	}
	if from >= first {
		return nil
	}
	q := Query{Topics: topics, After: ""}
	oldest, err := f.Start(ctx, &q)
	if err != nil {
		return err
	}
	return &ExpiredError{FirstAvailable: oldest.Cursor(topics)}
}

// older orders the heads of two partitions: bus time, then topic, then
// partition.
func older(a, b *part) bool {
	if a.sec != b.sec {
		return a.sec < b.sec
	}
	if a.nsec != b.nsec {
		return a.nsec < b.nsec
	}
	if c := cmp.Compare(a.topic, b.topic); c != 0 {
		return c < 0
	}
	return a.index < b.index
}
