package ws

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/fleethub/fleethub/hub"
)

// conn is one websocket connection. Its goroutines: the reader (fasthttp's
// hijack goroutine, which owns the rest and returns last), the writer
// while the queue holds frames or the connection closes, and one pump per
// subscription; all of them end when ctx is cancelled.
type conn struct {
	s               *Server
	ws              *websocket.Conn
	org, env, keyID string
	bin             bool // encoding=msgpack
	compress        bool // permessage-deflate negotiated
	// allows says which streams a connection opened with a browser
	// token may follow (nil: any of its organization's)
	allows func(streamID string) bool
	feedOK bool // may follow the organization's feed

	q          *queue
	ctx        context.Context
	cancel     context.CancelFunc
	closing    chan struct{} // closed by close
	closeOnce  sync.Once
	reason     error         // why the connection closed; set once in close
	readerDone chan struct{} // closed when the read loop returned
	wg         sync.WaitGroup

	mu      sync.Mutex // guards subs and feedSub; wg.Add for a pump only under mu while ctx is live
	subs    map[string]*sub
	feedSub *sub // the feed subscription, if any (feedsub.go)

	invalid int // malformed frames in a row; reader only

	batch       *batcher     // the writer's
	lastWrite   atomic.Int64 // when the last write began, in ns since the Server's start (WriteLinger)
	lastGap     atomic.Int64 // the ns between that write and the one before it
	writer      func()       // c.writeLoop, made once
	wbuf        []frame      // the writer's frame slice between its runs
	carry       []frame      // frames writeDirect hands to the writer goroutine it starts
	carried     bool         // the batcher holds the rest of a writev of carry begun
	brokenWrite bool         // a write failed midway; the writer's
	pingSlot    int          // when the Server's pinger pings it (Server.pingLoop)

	deadlineMu sync.Mutex // orders read-deadline extensions with cut
	cutOff     bool       // set by cut; guarded by deadlineMu
}

// init prepares a connection whose handshake is done, before anything
// else can see it.
func (c *conn) init(wsc *websocket.Conn) {
	c.ws = wsc
	c.batch = newBatcher(wsc.NetConn(), &c.s.batchBufs)
	c.writer = c.writeLoop
	c.q = newQueue(c.s.cfg.QueueBytes, c.startWriter)
	if c.batch.rc != nil {
		c.q.direct = c.pushed
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.closing = make(chan struct{})
	c.readerDone = make(chan struct{})
	c.subs = map[string]*sub{}
}

// run serves the connection until its end; it is the reader.
func (c *conn) run(initial []subscription, fst *feedStart) {
	followed := 0
	if fst != nil && c.subscribeFeed(fst) {
		followed++
	}
	for _, sp := range initial {
		if sp.info.State == hub.StateStopped {
			c.notice(notice{Type: "error", Code: "stream_stopped", StreamID: sp.info.ID, Message: "the stream was stopped"})
			continue
		}
		c.subscribe(sp.info, sp.start)
		followed++
	}
	if followed == 0 {
		c.close(ErrStreamStopped)
	}

	err := c.readLoop()
	c.close(err)
	close(c.readerDone)
	c.wg.Wait()

	c.mu.Lock()
	subs := c.subs
	c.subs = nil
	c.mu.Unlock()
	for id := range subs {
		c.s.counter.Connected(id, -1)
	}
	c.s.logger.Debug("websocket closed", "org", c.org, "env", c.env, "key_id", c.keyID, "reason", c.reason)
}

// close starts closing the connection for reason err; the first reason
// wins. It never blocks: the pumps stop, and the writer writes the queue
// (for the reasons that flush), the close frame, and closes the socket.
func (c *conn) close(err error) {
	c.closeOnce.Do(func() {
		c.reason = err
		c.cancel()
		close(c.closing)
		if _, _, _, flush := closeFrame(err); !flush {
			// the writer stops after the frame it is writing: give that
			// frame closeWait, not WriteTimeout, so a stuck socket ends
			// soon and a slow reader still gets the close frame. A write
			// that began in the instant between the writer's look at
			// closing and this line runs to its own deadline.
			_ = c.ws.NetConn().SetWriteDeadline(time.Now().Add(closeWait))
		}
		c.q.kick(true) // a writer ends the connection
	})
}

// cut ends the socket's pending and future reads and writes. Closing a
// hijacked fasthttp connection is left to fasthttp (its Close is a no-op
// until the hijack handler returns), so deadlines do it.
func (c *conn) cut() {
	c.deadlineMu.Lock()
	c.cutOff = true
	_ = c.ws.NetConn().SetDeadline(time.Now())
	c.deadlineMu.Unlock()
}

func (c *conn) isCut() bool {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	return c.cutOff
}

func (c *conn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// readLoop reads client frames until an error, which it returns as a
// close reason.
func (c *conn) readLoop() error {
	cfg := &c.s.cfg
	ws := c.ws
	ws.SetReadLimit(cfg.MaxMessageSize)
	extend := func() {
		c.deadlineMu.Lock()
		if !c.cutOff {
			_ = ws.SetReadDeadline(time.Now().Add(cfg.ReadTimeout))
		}
		c.deadlineMu.Unlock()
	}
	extend()
	ws.SetPongHandler(func(string) error { extend(); return nil })
	// pongs go through the queue: the writer is the only goroutine that
	// writes, so its write deadlines hold
	ws.SetPingHandler(func(data string) error {
		extend()
		b := []byte(data)
		if !c.q.pushControl(frame{ctl: websocket.PongMessage, data: b, size: len(b) + 2}) {
			c.close(ErrQueueOverflow)
		}
		return nil
	})
	var buf bytes.Buffer
	for {
		typ, r, err := ws.NextReader()
		if err != nil {
			return readError(err)
		}
		extend()
		buf.Reset()
		if _, err := buf.ReadFrom(r); err != nil {
			return readError(err)
		}
		if c.isClosing() {
			continue // waiting for the client's close frame
		}
		if typ != websocket.TextMessage {
			c.invalidFrame("binary frames are not accepted; control frames are JSON text")
			continue
		}
		c.handle(buf.Bytes())
		if buf.Cap() > 64<<10 {
			buf = bytes.Buffer{} // do not keep a large buffer for an idle connection
		}
	}
}

// subscribe follows a stream from st, replacing the current subscription
// of that stream if any. The subscribed notice (and history_lost when the
// client's position was lost) goes into the queue before the first
// message of the new pump and after every queued message of the old one.
func (c *conn) subscribe(info hub.StreamInfo, st start) bool {
	sb := &sub{c: c, id: info.ID, epoch: st.epoch, done: make(chan struct{}), sent: st.next - 1, sentEpoch: st.epoch}
	sb.ctx, sb.cancel = context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		sb.cancel()
		return false
	}
	old := c.subs[info.ID]
	c.subs[info.ID] = sb
	c.wg.Add(1)
	c.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
		c.q.purge(old)
	} else {
		c.s.counter.Connected(info.ID, 1)
	}
	sb.ring = c.s.acquireRing(info.ID)
	c.notice(notice{Type: "subscribed", StreamID: info.ID, Offset: st.next, Epoch: st.epoch})
	if st.lost {
		c.notice(historyLost(info.ID, st.epoch, st.next))
	}
	go sb.run(info, st)
	return true
}

// unsubscribe stops following a stream; false when it was not followed.
func (c *conn) unsubscribe(id string) bool {
	c.mu.Lock()
	sb := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if sb == nil {
		return false
	}
	sb.cancel()
	<-sb.done
	c.q.purge(sb)
	c.s.counter.Connected(id, -1)
	return true
}

// stoppedNotice and webhookNotice tell why a subscription ended: its
// stream was stopped, or configured to deliver by webhook.
func stoppedNotice(id string) notice {
	return notice{Type: "error", Code: "stream_stopped", StreamID: id, Message: "the stream was stopped"}
}

func webhookNotice(id string) notice {
	return notice{Type: "error", Code: "webhook_delivery", StreamID: id, Message: "the stream was configured to deliver by webhook: its messages go to its webhook_url"}
}

// dropStopped ends the subscription sb of a stream that was stopped, or
// that now delivers by webhook (its pump calls it, with the notice that
// says which); the last subscription to go closes the connection.
func (c *conn) dropStopped(sb *sub, n notice) {
	c.mu.Lock()
	mine := c.subs[sb.id] == sb
	if mine {
		delete(c.subs, sb.id)
	}
	left := len(c.subs)
	if c.feedSub != nil {
		left++
	}
	c.mu.Unlock()
	if !mine {
		return
	}
	c.notice(n)
	c.s.counter.Connected(sb.id, -1)
	if left == 0 {
		c.close(ErrStreamStopped)
	}
}

func (c *conn) subscriptions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs)
}

// subEpoch is the epoch of the stream's subscribed frame on this
// connection, "" when the stream is not followed.
func (c *conn) subEpoch(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sb := c.subs[id]; sb != nil {
		return sb.epoch
	}
	return ""
}

// sentPos is the highest offset of the stream sent on this
// connection and its history; ok is false when the stream is not
// followed.
func (c *conn) sentPos(id string) (offset int64, epoch string, ok bool) {
	c.mu.Lock()
	sb := c.subs[id]
	c.mu.Unlock()
	if sb == nil {
		return 0, "", false
	}
	offset, epoch = sb.sentPos()
	return offset, epoch, true
}

func (c *conn) subscribed(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subs[id] != nil
}
