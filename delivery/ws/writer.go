package ws

import (
	"errors"
	"net"
	"time"

	"github.com/fasthttp/websocket"
)

var (
	comma        = []byte{','}
	openBracket  = []byte{'['}
	closeBracket = []byte{']'}
)

// writeLoop is the connection's one writer: it drains the queue, pings,
// and at the end writes the close frame and closes the socket.
func (c *conn) writeLoop() {
	defer c.wg.Done()
	ping := time.NewTicker(c.s.cfg.PingInterval)
	defer ping.Stop()
	var buf []frame
	for {
		select {
		case <-c.q.ready:
			buf = c.q.take(buf)
			err := c.writeFrames(buf)
			clear(buf)
			if err != nil {
				c.close(err)
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.s.cfg.WriteTimeout)); err != nil {
				c.close(writeFailure(err))
			}
		case <-c.closing:
			c.finish(buf)
			return
		}
	}
}

// finish ends the connection: for the reasons that flush, it writes what
// is queued (the pumps have stopped); then the close frame; then it waits
// for the client's close reply (the reader returning) and closes the
// socket.
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
	if send && err == nil {
		err = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(closeWait))
	}
	if send && err == nil {
		select {
		case <-c.readerDone:
		case <-time.After(closeWait):
		}
	}
	c.cut() // ends a read loop that still waits; fasthttp closes the socket
}

// writeFrames writes frames in order, each under the write deadline, and
// counts what was delivered. Past close, only the reasons that flush keep
// writing.
func (c *conn) writeFrames(frames []frame) error {
	var (
		stream string
		n      int64
		err    error
		i      int
	)
	for i = 0; i < len(frames) && err == nil; i++ {
		f := &frames[i]
		if c.isClosing() {
			if _, _, _, flush := closeFrame(c.reason); !flush || c.isCut() {
				break
			}
		}
		err = c.writeFrame(f)
		c.q.done(f.size)
		if err != nil || f.sub == nil {
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
	rest := 0 // frames not written release their bytes too
	for _, f := range frames[i:] {
		rest += f.size
	}
	if rest > 0 {
		c.q.done(rest)
	}
	if err != nil {
		return writeFailure(err)
	}
	return nil
}

func (c *conn) writeFrame(f *frame) error {
	ws := c.ws
	if err := ws.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout)); err != nil {
		return err
	}
	if c.compress {
		ws.EnableWriteCompression(f.compress)
	}
	typ := websocket.TextMessage
	if f.bin {
		typ = websocket.BinaryMessage
	}
	switch {
	case f.pm != nil:
		return ws.WritePreparedMessage(f.pm)
	case f.parts == nil:
		return ws.WriteMessage(typ, f.data)
	}
	// a batch: the wrappers are written as an array straight from the
	// shared bytes, without building the array in memory
	w, err := ws.NextWriter(typ)
	if err != nil {
		return err
	}
	if f.bin {
		var hdr [5]byte
		_, err = w.Write(appendArrayHeader(hdr[:0], len(f.parts)))
	} else {
		_, err = w.Write(openBracket)
	}
	for i, p := range f.parts {
		if !f.bin && i > 0 && err == nil {
			_, err = w.Write(comma)
		}
		if err == nil {
			_, err = w.Write(p)
		}
	}
	if !f.bin && err == nil {
		_, err = w.Write(closeBracket)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeFailure turns a failed write into a close reason.
func writeFailure(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errors.Join(ErrSlowWrite, err)
	}
	return errors.Join(ErrConnectionBroken, err)
}
