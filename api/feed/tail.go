package feed

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fleethub/fleethub/hub/feed"
)

// A tail follows the head of the feed for every event stream of one
// organization, environment, list of types and filter: it reads each new
// entry once, filters it once and encodes its event once, and keeps the
// last TailEntries events in a ring that its clients copy from. A client
// that falls further behind than the ring leaves the tail and pulls on its
// own from its cursor (client.alone), then joins again at the head, so a
// slow client neither delays the others nor loses anything.
//
// A client joins at a position P of its own: the tail takes it from the
// newest point of its ring at or before P in every partition, and the
// client skips the entries below P that it sent already (client.skip).
// Between two consecutive entries of the ring the tail's read took
// nothing else, so a client that joined gets every entry once.
type tail struct {
	h      *Handlers
	key    string
	q      feed.Query // the first client's query; every client of the key has the same filter
	start  feed.Position
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex // guards the fields below, and next, beat and running of every client in clients
	ring    []item     // len a power of two; item seq is at ring[seq&(len-1)]
	seq     uint64     // the next item's sequence number
	base    string     // the cursor just before the oldest item of the ring
	head    feed.Position
	beat    uint64 // heartbeats sent: a client whose beat differs owes one
	clients map[*client]struct{}
	stopped bool
}

// item is one entry of the tail: where it lies in the log, the cursor
// past it, the message's JSON and its whole event as sent (immutable,
// shared by every client).
type item struct {
	topic  string
	part   int
	offset int64
	cursor string
	typ    string
	msg    []byte
	text   []byte
}

// maxBatch bounds the items a client takes from its tail at a time:
// about flushAt of events, so that a client far behind holds no more
// buffer than one that is not (at 256, 10,000 clients behind a loaded
// machine held 94 MB of write buffers and 17 MB of item lists).
const maxBatch = 64

// newTail makes a tail of key reading from pos; the caller runs it.
func (h *Handlers) newTail(key string, q feed.Query, pos feed.Position) *tail {
	ctx, cancel := context.WithCancel(h.ctx)
	size := 1
	for size < h.cfg.TailEntries {
		size <<= 1
	}
	return &tail{h: h, key: key, q: q, start: pos, ctx: ctx, cancel: cancel, ring: make([]item, size),
		base: pos.Cursor(q.Topics), head: pos.Clone(), clients: map[*client]struct{}{}}
}

// join adds c, standing at pos, to its key's tail, making the tail if
// there is none; false when no point of the tail is at or before pos (the
// tail is ahead of c in a partition: c pulls on).
func (h *Handlers) join(c *client, pos feed.Position) bool {
	for {
		h.tmu.Lock()
		t := h.tails[c.key]
		if t == nil {
			if !h.begin() {
				h.tmu.Unlock()
				return false // shutting down
			}
			t = h.newTail(c.key, c.q, pos.Clone())
			h.tails[c.key] = t
			go t.run()
		}
		h.tmu.Unlock()
		if ok, stopped := t.add(c, pos); !stopped {
			return ok
		}
	}
}

// searchDepth bounds the ring entries a joining client looks back over;
// one further behind pulls on.
const searchDepth = 256

// add makes c a client of t from pos; stopped when t has ended (its key
// gets a new tail).
func (t *tail) add(c *client, pos feed.Position) (ok, stopped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false, true
	}
	topics := t.q.Topics
	next, found, exact := t.seq, false, false
	if t.head.Within(pos, topics) {
		found, exact = true, pos.Within(t.head, topics)
	} else {
		// the position before item k is the one after item k-1 (the
		// tail took nothing between them), or the ring's base
		size := uint64(len(t.ring))
		oldest := t.seq - min(t.seq, size)
		for k := t.seq; k >= oldest && t.seq-k < searchDepth && !found; k-- {
			cur := t.base
			if k > oldest {
				cur = t.ring[(k-1)&(size-1)].cursor
			}
			p, err := feed.ParseCursor(cur)
			if err == nil && p.Within(pos, topics) {
				next, found = k, true
			}
			if k == 0 {
				break
			}
		}
	}
	if !found {
		return false, false
	}
	c.next, c.beat, c.running = next, t.beat, true
	c.skip = nil
	if !exact {
		c.skip = pos.Clone()
	}
	t.clients[c] = struct{}{}
	c.t.Store(t)
	return true, false
}

// run reads the feed from the tail's start until it has no client left,
// its read fails or the handlers shut down.
func (t *tail) run() {
	defer t.h.wg.Done()
	defer t.cancel()
	q := t.q
	q.Limit, q.Wait = feed.MaxLimit, t.h.cfg.Heartbeat
	pos := t.start
	var items []item
	var wake []*client
	for {
		page, err := t.h.feed.PullFrom(t.ctx, q, pos)
		if err == nil {
			items, err = encodeItems(items[:0], page.Entries)
		}
		if err != nil {
			if t.ctx.Err() == nil {
				t.h.logger().Warn("feed tail ended; its clients read on their own", "error", err)
			}
			t.stop(true)
			return
		}
		var idle bool
		wake, idle = t.publish(items, pos.Clone(), len(page.Entries) == 0, wake[:0])
		for _, c := range wake {
			go c.runFn()
		}
		clear(wake)
		if idle && t.stop(false) {
			return
		}
	}
}

// encodeItems appends the tail's items of entries.
func encodeItems(items []item, entries []feed.Entry) ([]item, error) {
	for _, e := range entries {
		msg, err := e.MessageJSON()
		if err != nil {
			return items, err
		}
		typ := typeOf(e.Topic)
		items = append(items, item{topic: e.Topic, part: e.Partition, offset: e.Offset, cursor: e.Cursor, typ: typ, msg: msg,
			text: appendEntry(make([]byte, 0, len(msg)+2*len(e.Cursor)+64), e.Cursor, typ, msg)})
	}
	return items, nil
}

// publish adds items to the ring (a heartbeat when beat), sets the
// position the tail read to, and returns the parked clients to start;
// idle when it has no client.
func (t *tail) publish(items []item, head feed.Position, beat bool, wake []*client) ([]*client, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	mask := uint64(len(t.ring) - 1)
	for _, it := range items {
		slot := &t.ring[t.seq&mask]
		if t.seq >= uint64(len(t.ring)) {
			t.base = slot.cursor
		}
		*slot = it
		t.seq++
	}
	t.head = head
	if beat {
		t.beat++
	}
	for c := range t.clients {
		if !c.running && (c.next != t.seq || c.beat != t.beat) {
			c.running = true
			wake = append(wake, c)
		}
	}
	return wake, len(t.clients) == 0
}

// stop ends the tail when it has no client, or always when force: its
// clients then leave it and pull on their own. It reports whether the
// tail ended.
func (t *tail) stop(force bool) bool {
	h := t.h
	h.tmu.Lock()
	t.mu.Lock()
	if !force && len(t.clients) > 0 {
		t.mu.Unlock()
		h.tmu.Unlock()
		return false
	}
	t.stopped = true
	if h.tails[t.key] == t {
		delete(h.tails, t.key)
	}
	var wake []*client
	for c := range t.clients {
		delete(t.clients, c)
		c.t.Store(nil)
		if !c.running {
			c.running = true
			wake = append(wake, c)
		}
	}
	t.mu.Unlock()
	h.tmu.Unlock()
	for _, c := range wake {
		go c.runFn()
	}
	return true
}

// What a client's turn at its tail found.
const (
	turnSend   = iota // items or a heartbeat to send
	turnParked        // nothing: the client stopped running until the tail wakes it
	turnLeft          // the client is no longer the tail's: it fell behind the ring or the tail ended
	turnEnded         // the client's stream is ending
)

// take copies into items what c has to send next, and whether it owes a
// heartbeat.
func (t *tail) take(c *client, items []item) ([]item, bool, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.clients[c]; !ok {
		return items, false, turnLeft
	}
	if c.ctx.Err() != nil {
		delete(t.clients, c)
		c.t.Store(nil)
		return items, false, turnEnded
	}
	size := uint64(len(t.ring))
	if t.seq > size && c.next < t.seq-size {
		// overwritten before c took it: c reads on its own from its cursor
		delete(t.clients, c)
		c.t.Store(nil)
		return items, false, turnLeft
	}
	beat := c.beat != t.beat
	c.beat = t.beat
	n := min(t.seq-c.next, maxBatch)
	if n == 0 && !beat {
		c.running = false
		return items, false, turnParked
	}
	for k := c.next; k < c.next+n; k++ {
		items = append(items, t.ring[k&(size-1)])
	}
	c.next += n
	return items, beat, turnSend
}

// wake starts c when it is parked at its tail (its stream is ending).
func (c *client) wake() {
	t := c.t.Load()
	if t == nil {
		return // running on its own: it sees its context end
	}
	t.mu.Lock()
	_, in := t.clients[c]
	start := in && !c.running
	if start {
		c.running = true
	}
	t.mu.Unlock()
	if start {
		go c.runFn()
	}
}

// tailKey is the tail of a query: its tenant, its types in order (they
// make the cursor) and its filter parameters, each's values sorted and
// without repeats, so that the same filter written in another order
// shares the tail.
func tailKey(q feed.Query, args map[string][]string) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	field(q.Org)
	field(q.Env)
	field(strings.Join(q.Topics, ","))
	names := make([]string, 0, len(args))
	for k := range args {
		switch k {
		case "after", "types", "token", "limit", "wait": // not filters; limit and wait are the pull's
		default:
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		vs := append([]string(nil), args[k]...)
		sort.Strings(vs)
		field(k)
		for i, v := range vs {
			if i == 0 || v != vs[i-1] {
				field(v)
			}
		}
		b.WriteByte(';')
	}
	return b.String()
}
