package ws

import (
	"sync"
)

// frame is one websocket message waiting in a connection's queue. Data
// frames reference the shared, immutable payload bytes of the ring
// (a wrapper, a batch, either deflated): the writer only adds the header.
type frame struct {
	sub      *sub // the subscription of a data frame; nil for control frames
	ctl      int  // a websocket control frame (pong): its opcode
	msgs     int  // messages carried, for the delivered counter
	last     int64
	epoch    string // the history last belongs to (data frames of a stream)
	bin      bool   // binary (msgpack) rather than text
	deflated bool   // data is permessage-deflate compressed (RSV1 set)
	data     []byte
	size     int
}

// queue is a connection's bounded byte queue between its producers (the
// pumps, the reader and the Server's pinger) and its one writer. Bytes
// count from push until the writer has written the frame. Pushing never
// blocks: a pump that finds the queue full gets a channel that is closed
// when the writer has drained it to half, and waits on that (only its own
// connection waits).
//
// The writer runs only while there is something to write: wake starts it
// (run) when frames wait and none runs, and it ends when it finds the
// queue empty (stop), so an idle connection has no writer goroutine. A
// data frame pushed while none runs takes the writer's role on the
// pusher's goroutine (direct), which writes what the socket takes at
// once and starts a writer goroutine only for the rest.
type queue struct {
	limit  int
	run    func() // starts a writer goroutine
	direct func() // writes at once on the pusher's goroutine, else runs one (nil: run)

	mu      sync.Mutex // guards the fields below
	items   []frame
	bytes   int
	space   chan struct{} // closed when bytes fall to limit/2; nil when no pump waits
	running bool          // a writer runs, or the last one ran to the connection's end
}

func newQueue(limit int, run func()) *queue {
	return &queue{limit: limit, run: run}
}

// push adds a data frame while the queue is under its limit. Otherwise it
// wakes the writer and returns false and a channel closed when there is
// room again. With more set, the pump has further frames to push at once
// and the writer is not woken yet: it then takes them all for one writev
// instead of waking for the first.
func (q *queue) push(f frame, more bool) (bool, <-chan struct{}) {
	q.mu.Lock()
	if q.bytes >= q.limit {
		if q.space == nil {
			q.space = make(chan struct{})
		}
		ch := q.space
		q.mu.Unlock()
		q.wake()
		return false, ch
	}
	q.items = append(q.items, f)
	q.bytes += f.size
	start := !more && !q.running
	if start {
		q.running = true
	}
	q.mu.Unlock()
	if start {
		if q.direct != nil {
			q.direct() // the pusher writes what it can without blocking
		} else {
			q.run()
		}
	}
	return true, nil
}

// pushControl adds a control frame, which may take the queue up to
// controlSlack past its limit; false means even that is exceeded.
func (q *queue) pushControl(f frame) bool {
	q.mu.Lock()
	if q.bytes+f.size > q.limit+controlSlack {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, f)
	q.bytes += f.size
	q.mu.Unlock()
	q.wake()
	return true
}

// wake starts the writer when frames wait and no writer runs.
func (q *queue) wake() { q.kick(false) }

// kick starts the writer when none runs and frames wait, or always
// (the connection is closing: the writer ends it).
func (q *queue) kick(always bool) {
	q.mu.Lock()
	start := !q.running && (always || len(q.items) > 0)
	if start {
		q.running = true
	}
	q.mu.Unlock()
	if start {
		q.run()
	}
}

// stop ends the writer's run when the queue is empty and the connection
// is not closing; false means the writer goes on. Checked under mu, so a
// frame pushed meanwhile either is seen here or starts a new writer.
func (q *queue) stop(closing func() bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) > 0 || closing() {
		return false
	}
	q.running = false
	return true
}

// take moves the queued frames to buf (emptied by the caller) and returns
// it; the writer and the queue swap their slices.
func (q *queue) take(buf []frame) []frame {
	q.mu.Lock()
	buf, q.items = q.items, buf[:0]
	q.mu.Unlock()
	return buf
}

// done releases the bytes of written (or discarded) frames.
func (q *queue) done(n int) {
	q.mu.Lock()
	q.bytes -= n
	q.signal()
	q.mu.Unlock()
}

// signal wakes waiting pumps once the queue drained to half; mu held.
func (q *queue) signal() {
	if q.space != nil && q.bytes <= q.limit/2 {
		close(q.space)
		q.space = nil
	}
}

// purge drops the queued frames of a subscription (unsubscribe, resume).
// Frames the writer already took still go out.
func (q *queue) purge(s *sub) {
	q.mu.Lock()
	kept := q.items[:0]
	for _, f := range q.items {
		if f.sub == s {
			q.bytes -= f.size
			continue
		}
		kept = append(kept, f)
	}
	clear(q.items[len(kept):])
	q.items = kept
	q.signal()
	q.mu.Unlock()
}
