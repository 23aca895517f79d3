package ws

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/fasthttp/websocket"
)

// The writer frames data messages itself and writes many of them with one
// writev: the payloads are the shared wrapper, batch or deflated bytes of
// the stream, so nothing is copied or allocated per delivery. gorilla
// writes one syscall per message, which took 60% of the CPU of
// BenchmarkFanout_1000Subs (doc.go has the figures). Pings, pongs and the
// close frame still go through gorilla,
// from this goroutine only, between two coalesced writes; a frame is
// always written by one Write or writev call, which the runtime never
// interleaves with another write on the socket.
const (
	coalesceBytes = 128 << 10 // flush the gathered frames at this size
	coalesceVecs  = 1024      // or at this many buffers
	maxFrameHead  = 2 + 8 + 5 // frame header plus a msgpack array header
	keptFrames    = 64        // the frame slice an idle connection keeps
)

// batcher gathers frames for one writev; the writer goroutine owns it.
// Its buffers (batchBufs) come from the Server's pool only while the
// writer has frames to write, and go back when it has written them: an
// idle connection holds none.
type batcher struct {
	raw    net.Conn    // the socket under fasthttp's hijack wrapper
	writev bool        // raw writes net.Buffers with one writev (TCP, Unix)
	vec    net.Buffers // what WriteTo consumes: a field, so no allocation per flush
	size   int
	pool   *sync.Pool // of *batchBufs, the Server's
	m      *batchBufs // held between acquire and release
	due    time.Time  // the write deadline flush set last

	// writing without blocking (writeDirect): the raw socket (nil when
	// not done), writevOnce as a func value made once, and its results
	rc    syscall.RawConn
	wfn   func(uintptr) bool
	wrote int
	werr  error
}

// batchBufs are a batcher's buffers, pooled by the Server.
type batchBufs struct {
	flat  []byte // without writev, the frames are copied here for one Write
	bufs  [][]byte
	heads []byte // frame headers; never grown past its capacity, as bufs point into it
	iov   iovecs // writevOnce's vector
}

// newBatchBufs is the pool's constructor.
func newBatchBufs() any {
	return &batchBufs{heads: make([]byte, 0, 16<<10)}
}

func newBatcher(nc net.Conn, pool *sync.Pool) *batcher {
	if u, ok := nc.(interface{ UnsafeConn() net.Conn }); ok {
		nc = u.UnsafeConn()
	}
	b := &batcher{raw: nc, pool: pool}
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		b.writev = true
	}
	if b.rc = directOf(b); b.rc != nil {
		b.wfn = b.writevOnce
	}
	return b
}

// acquire takes buffers from the pool, unless the batcher holds some.
func (b *batcher) acquire() {
	if b.m == nil {
		b.m = b.pool.Get().(*batchBufs)
	}
}

// release forgets the gathered frames and gives the buffers back.
func (b *batcher) release() {
	if b.m == nil {
		return
	}
	b.reset()
	b.pool.Put(b.m)
	b.m = nil
}

func (b *batcher) full() bool {
	m := b.m
	return b.size >= coalesceBytes || len(m.bufs) >= coalesceVecs || cap(m.heads)-len(m.heads) < maxFrameHead
}

// add appends a frame; the caller acquired the buffers and checked full.
func (b *batcher) add(f *frame) {
	op := byte(websocket.TextMessage)
	if f.bin {
		op = websocket.BinaryMessage
	}
	if f.deflated {
		op |= 0x40 // RSV1: a compressed message (RFC 7692)
	}
	b.head(op, len(f.data))
	b.m.bufs = append(b.m.bufs, f.data)
	b.size += len(f.data)
}

// head appends the header of a final, unmasked server frame.
func (b *batcher) head(op byte, n int) {
	m := b.m
	at := len(m.heads)
	switch {
	case n < 126:
		m.heads = append(m.heads, 0x80|op, byte(n))
	case n < 1<<16:
		m.heads = append(m.heads, 0x80|op, 126, byte(n>>8), byte(n))
	default:
		m.heads = append(m.heads, 0x80|op, 127)
		m.heads = binary.BigEndian.AppendUint64(m.heads, uint64(n))
	}
	m.bufs = append(m.bufs, m.heads[at:len(m.heads):len(m.heads)])
}

// flush writes the gathered frames with one writev under a deadline
// between timeout/2 and timeout from now: the deadline it set last while
// that is at least timeout/2 away (setting one costs a timer change in
// the runtime's poller, a tenth of a small write's CPU), else a new one;
// always a new one with renew (the connection is closing, and close may
// have shortened it).
func (b *batcher) flush(timeout time.Duration, renew bool) error {
	m := b.m
	if m == nil || len(m.bufs) == 0 {
		return nil
	}
	var err error
	if now := time.Now(); renew || b.due.Sub(now) < timeout/2 {
		b.due = now.Add(timeout)
		err = b.raw.SetWriteDeadline(b.due)
	}
	switch {
	case err != nil:
	case b.writev:
		b.vec = m.bufs
		_, err = b.vec.WriteTo(b.raw)
		b.vec = nil
	default:
		// a TLS connection, say: net.Buffers would write buffer by
		// buffer, so one frame could be split around another writer's
		m.flat = m.flat[:0]
		for _, p := range m.bufs {
			m.flat = append(m.flat, p...)
		}
		_, err = b.raw.Write(m.flat)
		if cap(m.flat) > 2*coalesceBytes {
			m.flat = nil
		}
	}
	b.reset()
	return err
}

// tryDirect writes the gathered frames with one writev that does not
// wait for the socket, and reports whether all of them went. What did
// not stays gathered (past what was written, which may end inside a
// frame) for flush; so does everything after an error, which flush then
// meets again. The deadline is kept as flush keeps it: a write that
// could not finish here finishes in flush.
func (b *batcher) tryDirect(timeout time.Duration) bool {
	if now := time.Now(); b.due.Sub(now) < timeout/2 {
		b.due = now.Add(timeout)
		if b.raw.SetWriteDeadline(b.due) != nil {
			return false
		}
	}
	if err := b.rc.Write(b.wfn); err != nil || b.werr != nil {
		b.werr = nil
		return false
	}
	b.consume(b.wrote)
	return len(b.m.bufs) == 0
}

// consume drops the first n written bytes of the gathered buffers.
func (b *batcher) consume(n int) {
	m := b.m
	b.size -= n
	i := 0
	for i < len(m.bufs) && n >= len(m.bufs[i]) {
		n -= len(m.bufs[i])
		i++
	}
	if i < len(m.bufs) && n > 0 {
		m.bufs[i] = m.bufs[i][n:]
	}
	k := copy(m.bufs, m.bufs[i:])
	clear(m.bufs[k:])
	m.bufs = m.bufs[:k]
}

// reset forgets the gathered frames.
func (b *batcher) reset() {
	b.size = 0
	if m := b.m; m != nil {
		clear(m.bufs)
		m.bufs, m.heads = m.bufs[:0], m.heads[:0]
	}
}

// startWriter starts a writer goroutine; the queue calls it (kick) when
// frames wait, or the connection closes, and no writer runs.
func (c *conn) startWriter() {
	c.wg.Add(1)
	go c.writer() // a func value: go allocates no closure for it
}

// writeLoop is the connection's one writer while it runs: it drains the
// queue and ends when the queue is empty, or, once the connection closes,
// writes the close frame and ends the socket (finish). Pings come
// through the queue (the Server's pinger).
func (c *conn) writeLoop() {
	defer c.wg.Done()
	buf := c.wbuf
	if carry := c.carry; carry != nil {
		c.carry = nil
		c.writeCarried(carry)
		clear(carry)
		buf = carry[:0] // writeDirect took the writer's slice with them
	}
	for {
		if c.isClosing() {
			c.finish(buf)
			return
		}
		if buf = c.q.take(buf); len(buf) > 0 {
			c.wrote()
			err := c.writeFrames(buf)
			clear(buf)
			if err != nil {
				c.close(err)
			}
			continue
		}
		if cap(buf) > keptFrames {
			buf = nil // a burst's array is not kept for an idle connection
		}
		c.wbuf = buf // before stop: the next writer may start right after it
		if c.q.stop(c.isClosing) {
			return
		}
	}
}

// pushed runs on the goroutine that pushed a frame to a queue with no
// writer: the frame is written at once (writeDirect), unless the frame
// comes less than WriteLinger after the connection's last write and that
// write less than twice WriteLinger after the one before (a held write
// comes WriteLinger after the last, so a connection that keeps getting
// frames faster than one a WriteLinger stays held). Then the queue holds
// it, and what else comes meanwhile, until WriteLinger after the last
// write, when the Server's lingerer writes them together. A connection that gets a
// frame now and then, two close together by chance included, is written
// at once. The queue's writer role is taken either way (no other writer
// starts), so frames keep their order. The held write counts in the
// connection's goroutines (wg) until it has run, so that the connection
// ends only after it; the pusher is one of them (a pump), so the count
// cannot be at zero here.
func (c *conn) pushed() {
	if l := c.s.cfg.WriteLinger; l > 0 {
		if due := time.Duration(c.lastWrite.Load()) + l; due > c.s.since() && time.Duration(c.lastGap.Load()) < 2*l {
			c.wg.Add(1)
			c.s.linger.hold(c, due)
			return
		}
	}
	c.writeDirect()
}

// wrote notes a write beginning now, for pushed.
func (c *conn) wrote() {
	now := int64(c.s.since())
	c.lastGap.Store(now - c.lastWrite.Swap(now))
}

// lingered writes what a held push kept, when its linger ends.
func (c *conn) lingered() {
	defer c.wg.Done()
	c.writeDirect()
}

// writeDirect runs on the goroutine that pushed a frame to a queue with
// no writer (a pump, most often on its stream's waiter): it writes the
// queued data frames with one writev that does not wait for the socket,
// so a delivery to a socket with room in its send buffer starts no
// writer goroutine. What it cannot write so (the send buffer full, a
// control frame, more than one writev holds, a closing connection, a
// failed or refused write) goes to a writer goroutine, as carry, with
// what was left of a writev begun here first in the batcher.
func (c *conn) writeDirect() {
	b := c.batch
	if b.rc == nil || c.isClosing() {
		c.startWriter()
		return
	}
	buf := c.q.take(c.wbuf)
	c.wbuf = nil
	c.wrote()
	b.acquire()
	for i := range buf {
		if buf[i].gorilla() || b.full() {
			b.release()
			c.carry = buf
			c.startWriter()
			return
		}
		buf[i].sending()
		b.add(&buf[i])
	}
	if !b.tryDirect(c.s.cfg.WriteTimeout) {
		c.carry, c.carried = buf, true // the batcher holds the rest
		c.startWriter()
		return
	}
	b.release()
	c.account(buf, true)
	clear(buf)
	// a burst's array is kept for the next one (dropping it here made
	// every burst grow the queue's array again); an idle connection's
	// writer goroutines, which its pings start, drop the queue's two
	// arrays when they end (writeLoop), so it gives them back within two
	// pings
	c.wbuf = buf[:0]
	if !c.q.stop(c.isClosing) {
		c.startWriter() // more came meanwhile, or the connection closes
	}
}

// writeCarried writes what writeDirect handed over: the rest of a writev
// it began (completed whatever closes meanwhile: a frame may be half
// written), or frames it did not try.
func (c *conn) writeCarried(frames []frame) {
	var err error
	if c.carried {
		c.carried = false
		b := c.batch
		err = b.flush(c.s.cfg.WriteTimeout, c.isClosing())
		b.release()
		if err != nil {
			c.brokenWrite = true
			err = writeFailure(err)
		}
		c.account(frames, err == nil)
	} else {
		err = c.writeFrames(frames)
	}
	if err != nil {
		c.close(err)
	}
}

// finish ends the connection: for the reasons that flush, it writes what
// is queued (the pumps have stopped); then the close frame; then it waits
// for the client's close reply (the reader returning) and cuts the socket.
func (c *conn) finish(buf []frame) {
	code, text, send, flush := closeFrame(c.reason)
	var err error
	for flush && err == nil {
		if buf = c.q.take(buf); len(buf) == 0 {
			break
		}
		err = c.writeFrames(buf)
		clear(buf)
	}
	if send && err == nil && !c.brokenWrite {
		err = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(closeWait))
	}
	if send && err == nil && !c.brokenWrite {
		select {
		case <-c.readerDone:
		case <-time.After(closeWait):
		}
	}
	c.cut() // ends a read loop that still waits; fasthttp closes the socket
}

// writeFrames writes frames in order: coalesced, or one by one through
// gorilla. Bytes are released and deliveries counted as frames go out.
// Past close, only the reasons that flush keep writing.
func (c *conn) writeFrames(frames []frame) (err error) {
	b := c.batch
	b.acquire()
	done := 0 // frames[:done] are accounted for
	defer func() {
		b.release() // an idle connection holds no write buffers
		if err != nil {
			c.brokenWrite = true // a frame may be half written: no close frame
			err = writeFailure(err)
		}
		c.account(frames[done:], false) // not written: release the bytes only
	}()
	for i := range frames {
		if c.isClosing() {
			if _, _, _, flush := closeFrame(c.reason); !flush || c.isCut() {
				b.reset() // gathered, never written
				return nil
			}
		}
		f := &frames[i]
		if f.gorilla() {
			if err = b.flush(c.s.cfg.WriteTimeout, c.isClosing()); err != nil {
				return err
			}
			c.account(frames[done:i], true)
			done = i
			if err = c.writeOne(f); err != nil {
				return err
			}
			c.account(frames[i:i+1], true)
			done = i + 1
			continue
		}
		if b.full() {
			if err = b.flush(c.s.cfg.WriteTimeout, c.isClosing()); err != nil {
				return err
			}
			c.account(frames[done:i], true)
			done = i
		}
		f.sending()
		b.add(f)
	}
	if err = b.flush(c.s.cfg.WriteTimeout, c.isClosing()); err != nil {
		return err
	}
	c.account(frames[done:], true)
	done = len(frames)
	return nil
}

// sending records, before a data frame of a stream goes to the socket,
// the offsets it carries as sent on the connection (an ack may not pass
// them); the client cannot have read the frame before.
func (f *frame) sending() {
	if f.sub != nil && !f.sub.feed {
		f.sub.wrote(f.last, f.epoch)
	}
}

// gorilla tells the frames that go through gorilla: websocket control
// frames. Data frames, compressed or not, are framed by the batcher.
func (f *frame) gorilla() bool {
	return f.ctl != 0
}

// account releases the queue bytes of frames and, when they were
// written, counts the delivered messages per stream.
func (c *conn) account(frames []frame, written bool) {
	var (
		size   int
		stream string
		n      int64
	)
	for i := range frames {
		f := &frames[i]
		size += f.size
		if !written || f.sub == nil || f.sub.feed {
			continue
		}
		if f.sub.id != stream && n > 0 {
			c.s.counter.Count(stream, "delivered", n)
			n = 0
		}
		stream = f.sub.id
		n += int64(f.msgs)
	}
	if n > 0 {
		c.s.counter.Count(stream, "delivered", n)
	}
	if size > 0 {
		c.q.done(size)
	}
}

// writeOne writes a control frame through gorilla.
func (c *conn) writeOne(f *frame) error {
	return c.ws.WriteControl(f.ctl, f.data, time.Now().Add(c.s.cfg.WriteTimeout))
}

// writeFailure turns a failed write into a close reason.
func writeFailure(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.Join(ErrSlowWrite, err)
	}
	return errors.Join(ErrConnectionBroken, err)
}
