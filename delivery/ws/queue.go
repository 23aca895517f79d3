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
	bin      bool // binary (msgpack) rather than text
	deflated bool // data is permessage-deflate compressed (RSV1 set)
	data     []byte
	size     int
}

// queue is a connection's bounded byte queue between its producers (the
// pumps and the reader) and its one writer. Bytes count from push until
// the writer has written the frame. Pushing never blocks: a pump that
// finds the queue full gets a channel that is closed when the writer has
// drained it to half, and waits on that (only its own connection waits).
type queue struct {
	limit int
	ready chan struct{} // capacity 1: wakes the writer

	mu    sync.Mutex // guards the fields below
	items []frame
	bytes int
	space chan struct{} // closed when bytes fall to limit/2; nil when no pump waits
}

func newQueue(limit int) *queue {
	return &queue{limit: limit, ready: make(chan struct{}, 1)}
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
	q.mu.Unlock()
	if !more {
		q.wake()
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

func (q *queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
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
