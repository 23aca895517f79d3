package feed

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/apikey"
)

// A client is one event stream of the feed on a hijacked connection. It
// has a goroutine only while it has something to do: while it follows a
// tail and has entries or a heartbeat to send, or while it pulls on its
// own (from an old cursor, or after falling behind its tail). A client
// parked at its tail costs its connection and this struct; the tail
// starts it again when entries come.
type client struct {
	h    *Handlers
	conn net.Conn
	out  sseWriter
	ctx  context.Context // ends with the stream: client gone, token ended, shutdown
	end  func()          // releases ctx and what watches it
	life context.Context // the browser token's, nil for a key
	q    feed.Query      // Org, Env, Topics, Match
	key  string          // its tail's

	t atomic.Pointer[tail] // followed; nil while pulling on its own
	// runFn is run as a func value made once: starting it in a
	// goroutine allocates nothing
	runFn func()

	// Owned by the goroutine running the client (running says which, under
	// the tail's lock): where it is and what it skips.
	cursor string        // past the last entry sent
	skip   feed.Position // while set: entries below it were sent before joining

	// Guarded by t.mu while the client follows t.
	next    uint64 // the tail's item to send next
	beat    uint64 // the tail's heartbeats sent
	running bool
}

// scratch is a running client's buffers, pooled: an event stream holds
// none while parked.
type scratch struct {
	buf   []byte
	items []item
	vec   net.Buffers // a vectored write's parts: the events' shared bytes
	line  [chunkRoom]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }} // buf made when first needed (not on TCP)

// flushAt is how much a client gathers before writing: one write per
// batch of pending entries, at most about this much.
const flushAt = 32 << 10

// run serves the client until its stream ends or it parks at its tail.
func (c *client) run() {
	for c.step() {
	}
}

// step sends one batch, or pulls on its own until it joins its tail
// again; false once the client parked or its stream ended. It holds
// buffers of the pool only meanwhile, so that a thousand clients woken
// together hold as many as are writing at once.
func (c *client) step() bool {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		clear(sc.items) // the events' bytes go with the ring
		sc.buf, sc.items = sc.buf[:0], sc.items[:0]
		scratchPool.Put(sc)
	}()
	t := c.t.Load()
	if t == nil {
		if !c.alone(sc) {
			c.finish(sc)
			return false
		}
		return true
	}
	var beat bool
	var turn int
	sc.items, beat, turn = t.take(c, sc.items[:0])
	switch turn {
	case turnParked:
		return false
	case turnEnded:
		c.finish(sc)
		return false
	case turnLeft:
		return true
	}
	if err := c.send(sc, beat); err != nil {
		c.leave(t)
		c.finish(sc)
		return false
	}
	return true
}

// send writes the items taken from the tail (those below skip were sent
// before joining), or a heartbeat when there are none, in one write: on a
// TCP connection one writev of the events' shared bytes, so that a write
// that waits for a slow reader holds references, not a copy.
func (c *client) send(sc *scratch, beat bool) error {
	if !c.out.vectored {
		return c.sendCopy(sc, beat)
	}
	vec := append(sc.vec[:0], nil) // [0]: the chunk's size line
	n := 0
	for i := range sc.items {
		text, err := c.text(&sc.items[i])
		if err != nil {
			return err
		}
		if text != nil {
			vec = append(vec, text)
			n += len(text)
		}
	}
	if n == 0 && beat {
		vec = append(vec, []byte(heartbeat))
		n = len(heartbeat)
	}
	defer func() {
		clear(vec)
		sc.vec = vec[:0]
	}()
	if n == 0 {
		return nil
	}
	parts := vec[1:]
	if c.out.chunked {
		vec[0] = append(strconv.AppendInt(sc.line[:0], int64(n), 16), "\r\n"...)
		vec = append(vec, crlf)
		parts = vec
	}
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.out.timeout)); err != nil {
		return err
	}
	_, err := parts.WriteTo(c.conn)
	return err
}

var crlf = []byte("\r\n")

// text is what c sends of a tail's item: its shared event, nil when c
// sent it before joining, or the event with a cursor of c's own while c
// is ahead of the tail in a partition.
func (c *client) text(it *item) ([]byte, error) {
	if c.skip == nil {
		c.cursor = it.cursor
		return it.text, nil
	}
	if it.offset < c.skip[it.topic][it.part] {
		return nil, nil // sent by the client's own pull
	}
	p, err := feed.ParseCursor(it.cursor)
	if err != nil {
		return nil, err
	}
	topics := c.q.Topics
	if c.skip.Within(p, topics) {
		c.skip = nil // from here on the tail's cursors are past all the client sent
		c.cursor = it.cursor
		return it.text, nil
	}
	// the client read further than the tail in another partition: its
	// cursor is past both
	c.cursor = p.Max(c.skip, topics).Cursor(topics)
	return appendEntry(nil, c.cursor, it.typ, it.msg), nil
}

// sendCopy is send on a connection without vectored writes (TLS): the
// events copied into one buffer, written when it holds flushAt.
func (c *client) sendCopy(sc *scratch, beat bool) error {
	b := c.out.begin(sc.buf)
	for i := range sc.items {
		if len(b) >= flushAt {
			if err := c.out.write(c.conn, b, false); err != nil {
				return err
			}
			b = c.out.begin(b)
		}
		text, err := c.text(&sc.items[i])
		if err != nil {
			return err
		}
		b = append(b, text...)
	}
	if len(sc.items) == 0 && beat {
		b = append(b, heartbeat...)
	}
	sc.buf = b
	return c.out.write(c.conn, b, false)
}

// leave takes c off t after a failed write.
func (c *client) leave(t *tail) {
	t.mu.Lock()
	delete(t.clients, c)
	t.mu.Unlock()
	c.t.Store(nil)
}

// alone pulls the feed from c's cursor and sends what it reads until it
// reaches the head and joins the tail (true), or the stream ends (false).
func (c *client) alone(sc *scratch) bool {
	q := c.q
	q.After = c.cursor
	pos, err := c.h.feed.Start(c.ctx, &q)
	if err != nil {
		return c.failed(sc, err)
	}
	var wait time.Duration
	for c.ctx.Err() == nil {
		q.Limit, q.Wait = feed.MaxLimit, wait
		page, err := c.h.feed.PullFrom(c.ctx, q, pos)
		if err != nil {
			return c.failed(sc, err)
		}
		b := c.out.begin(sc.buf)
		for _, e := range page.Entries {
			msg, err := e.MessageJSON()
			if err != nil {
				return c.failed(sc, err)
			}
			b = appendEntry(b, e.Cursor, typeOf(e.Topic), msg)
			if len(b) >= flushAt {
				if err := c.out.write(c.conn, b, false); err != nil {
					return false
				}
				b = c.out.begin(b)
			}
		}
		if len(page.Entries) == 0 && wait > 0 {
			b = append(b, heartbeat...)
		}
		moved := page.Next != c.cursor
		c.cursor = page.Next
		if err := c.out.write(c.conn, b, false); err != nil {
			return false
		}
		sc.buf = b
		if len(page.Entries) < feed.MaxLimit && c.h.join(c, pos) {
			return true
		}
		wait = 0
		if len(page.Entries) == 0 && !moved {
			wait = c.h.cfg.Heartbeat // at the head, and the tail ahead by what the client has yet to see
		}
	}
	return false
}

// failed tells the client why the feed could not be read and reports
// that the stream ends (false).
func (c *client) failed(sc *scratch, err error) bool {
	if c.ctx.Err() != nil {
		return false
	}
	var ee *feed.ExpiredError
	b := c.out.begin(sc.buf)
	if errors.As(err, &ee) {
		// retention passed the stream's position: said, not skipped
		b = appendEvent(b, "error", map[string]string{"code": "cursor_expired", "first_available": ee.FirstAvailable,
			"message": "retention deleted messages this stream had not sent yet; reconnect with Last-Event-ID set to first_available to go on"})
	} else {
		c.h.logger().Warn("event stream ended", "error", err)
		b = appendEvent(b, "error", map[string]string{"code": "internal_error", "message": "the feed could not be read; reconnect with Last-Event-ID"})
	}
	sc.buf = b
	if werr := c.out.write(c.conn, b, false); werr != nil {
		c.h.logger().Debug("event stream error not told to the client", "error", werr)
	}
	return false
}

// finish ends the stream: the token's end told when it ended it, the
// last chunk, the connection closed.
func (c *client) finish(sc *scratch) {
	defer c.h.wg.Done()
	defer c.end()
	b := c.out.begin(sc.buf)
	if c.life != nil && c.life.Err() != nil {
		b = appendTokenEnded(b, context.Cause(c.life))
	}
	if err := c.out.write(c.conn, b, true); err != nil {
		c.h.logger().Debug("event stream end not told to the client", "error", err)
	}
	if err := c.conn.Close(); err != nil {
		c.h.logger().Debug("event stream close", "error", err)
	}
}

// appendTokenEnded appends the error event of tokenEndedEvent.
func appendTokenEnded(b []byte, cause error) []byte {
	return appendEvent(b, "error", tokenEndedEvent(cause))
}

// tokenEndedEvent tells the client that the browser token its stream was
// opened with expired or was revoked, with the code of the 401 a new
// request with the token gets.
func tokenEndedEvent(cause error) map[string]string {
	if errors.Is(cause, apikey.ErrTokenRevoked) {
		return map[string]string{"code": "token_revoked", "message": "the token this stream was opened with has been revoked"}
	}
	return map[string]string{"code": "token_expired", "message": "the token this stream was opened with has expired: mint a new one and reconnect with Last-Event-ID"}
}

const heartbeat = ": heartbeat\n\n"

// appendEntry appends a feed entry as a default event: the pull's entry
// (EntryView, byte for byte as encoding/json writes it) around the
// message's JSON. The cursor (base64url) and the type need no escaping.
func appendEntry(b []byte, cursor, typ string, msg []byte) []byte {
	b = append(b, "id: "...)
	b = append(b, cursor...)
	b = append(b, "\ndata: {\"cursor\":\""...)
	b = append(b, cursor...)
	b = append(b, "\",\"type\":\""...)
	b = append(b, typ...)
	b = append(b, "\",\"message\":"...)
	b = append(b, msg...)
	return append(b, "}\n\n"...)
}

// appendEvent appends a named event of string fields.
func appendEvent(b []byte, name string, fields map[string]string) []byte {
	data, err := json.Marshal(fields)
	if err != nil {
		data = []byte(`{"code":"internal_error"}`)
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// sseWriter frames an event stream's writes: as chunks of a chunked
// HTTP/1.1 body, or as they are for HTTP/1.0 (the body ends with the
// connection).
type sseWriter struct {
	chunked  bool
	vectored bool // the connection writes net.Buffers in one writev
	timeout  time.Duration
}

// chunkRoom is the room a buffer keeps before its data for the chunk's
// size line.
const chunkRoom = 18

// begin is buf emptied, with room for the chunk's size line.
func (w sseWriter) begin(buf []byte) []byte {
	if cap(buf) < chunkRoom {
		buf = make([]byte, 0, 4<<10)
	}
	return buf[:chunkRoom]
}

// write writes b (from begin, and appended to) in one write within the
// timeout: its data as one chunk, and the body's end when final.
func (w sseWriter) write(conn net.Conn, b []byte, final bool) error {
	start := chunkRoom
	if w.chunked {
		if n := len(b) - chunkRoom; n > 0 {
			var line [chunkRoom]byte
			l := append(strconv.AppendInt(line[:0], int64(n), 16), "\r\n"...)
			start = chunkRoom - len(l)
			copy(b[start:], l)
			b = append(b, "\r\n"...)
		}
		if final {
			b = append(b, "0\r\n\r\n"...)
		}
	}
	if len(b) == start {
		return nil
	}
	if err := conn.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return err
	}
	_, err := conn.Write(b[start:])
	return err
}
