package feed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub/feed"
)

// eventStream is one Server-Sent Events response being written.
type eventStream struct {
	w       *bufio.Writer
	conn    net.Conn
	timeout time.Duration
}

// flush writes what is buffered within the write timeout.
func (s *eventStream) flush() error {
	if s.conn != nil {
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	}
	return s.w.Flush()
}

// event writes one event: its id, name ("" for the default message) and
// JSON data.
func (s *eventStream) event(id, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("feed: encode event: %w", err)
	}
	if id != "" {
		s.w.WriteString("id: " + id + "\n")
	}
	if name != "" {
		s.w.WriteString("event: " + name + "\n")
	}
	s.w.WriteString("data: ")
	s.w.Write(b)
	_, err = s.w.WriteString("\n\n")
	return err
}

// eventStreamHead sets the status and headers of an event stream.
func eventStreamHead(c *api.Ctx) {
	c.SetStatusCode(200)
	c.SetContentType("text/event-stream; charset=utf-8")
	c.Response.Header.Set("Cache-Control", "no-cache")
	c.Response.Header.Set("X-Accel-Buffering", "no")
}

// start answers 200 with an event stream written by run after the
// handler returns; run's ctx ends on Shutdown or the server's end.
func (h *Handlers) start(c *api.Ctx, run func(ctx context.Context, s *eventStream) error) error {
	if !h.begin() {
		return api.Errf("service_unavailable", "the server is shutting down")
	}
	base := c.Context()
	conn := c.Conn()
	var life context.Context // the browser token's, when one opened the stream
	if p := c.Principal; p != nil && p.Token != nil {
		life = p.Token.Life
	}
	eventStreamHead(c)
	c.SetBodyStreamWriter(func(w *bufio.Writer) {
		defer h.wg.Done()
		ctx, cancel := context.WithCancel(base)
		defer cancel()
		var ended <-chan struct{} // nil: never
		if life != nil {
			ended = life.Done()
		}
		go func() {
			select {
			case <-h.done:
				cancel()
			case <-ended:
				cancel()
			case <-ctx.Done():
			}
		}()
		s := &eventStream{w: w, conn: conn, timeout: h.cfg.WriteTimeout}
		fmt.Fprintf(w, "retry: %d\n\n", h.cfg.Retry.Milliseconds())
		if s.flush() != nil {
			return
		}
		// ends when the client left, the feed failed, the token ended or the server stops
		if err := run(ctx, s); err != nil && ctx.Err() == nil {
			h.logger().Warn("event stream ended", "error", err)
		}
		if life != nil && life.Err() != nil {
			if err := tokenEnded(s, context.Cause(life)); err != nil {
				h.logger().Debug("token end not told to the client", "error", err)
			}
		}
	})
	return nil
}

// tokenEnded tells the client that the browser token its stream was
// opened with expired or was revoked, before the stream closes: an error
// event with the code of the 401 a new request with the token gets.
func tokenEnded(s *eventStream, cause error) error {
	if err := s.event("", "error", tokenEndedEvent(cause)); err != nil {
		return err
	}
	return s.flush()
}

// lastEventID is the Last-Event-ID header, "" when absent.
func lastEventID(c *api.Ctx) string {
	return string(c.Request.Header.Peek("Last-Event-ID"))
}

// newClient is an event stream of the feed from cursor; it ends with
// base, with life when not nil, and on Shutdown. The caller has called
// begin, and runs it once it has its connection.
func (h *Handlers) newClient(base, life context.Context, q feed.Query, key, cursor string, chunked bool) *client {
	cl := &client{h: h, q: feed.Query{Org: q.Org, Env: q.Env, Topics: q.Topics, Match: q.Match}, key: key, cursor: cursor,
		life: life, out: sseWriter{chunked: chunked, timeout: h.cfg.WriteTimeout}}
	ctx, cancel := context.WithCancel(h.ctx)
	stopBase := context.AfterFunc(base, cancel)
	stopLife := func() bool { return false }
	if life != nil {
		stopLife = context.AfterFunc(life, cancel)
	}
	cl.runFn = cl.run
	stopWake := context.AfterFunc(ctx, cl.wake)
	cl.ctx = ctx
	cl.end = func() { stopWake(); stopLife(); stopBase(); cancel() }
	return cl
}

// streamFeed serves the feed as an event stream: each entry is a default
// event whose id is its cursor and whose data is the pull's entry; an
// idle stream sends a heartbeat comment every Heartbeat. The response is
// written on the hijacked connection: the stream keeps no request context
// and no buffer of fasthttp's, and a client following the head shares its
// tail with the other clients of its filter (tail.go).
func (h *Handlers) streamFeed(c *api.Ctx, q feed.Query) error {
	param := "after"
	if id := lastEventID(c); id != "" {
		q.After, param = id, "Last-Event-ID"
	}
	pos, err := h.feed.Start(c.Context(), &q)
	if err != nil {
		return feedErr(err, param)
	}
	if c.IsHead() {
		// the stream's headers, as GET's, and no stream: a HEAD ends here
		eventStreamHead(c)
		return nil
	}
	if !h.begin() {
		return api.Errf("service_unavailable", "the server is shutting down")
	}
	var life context.Context // the browser token's, when one opened the stream
	if p := c.Principal; p != nil && p.Token != nil {
		life = p.Token.Life
	}
	cl := h.newClient(c.Context(), life, q, tailKey(q, queryArgs(c)), pos.Cursor(q.Topics), c.Request.Header.IsHTTP11())
	eventStreamHead(c)
	if cl.out.chunked {
		c.Response.Header.SetContentLength(-1) // Transfer-Encoding: chunked
	} else {
		c.Response.Header.SetConnectionClose()
		c.Response.Header.SetContentLength(-2) // the body ends with the connection
	}
	head := append([]byte(nil), c.Response.Header.Header()...)
	retry := "retry: " + strconv.FormatInt(h.cfg.Retry.Milliseconds(), 10) + "\n\n"
	c.HijackSetNoResponse(true)
	c.Hijack(func(conn net.Conn) {
		// runs in fasthttp's goroutine for the connection, which frees
		// the request's context when this returns (KeepHijackedConns)
		if u, ok := conn.(interface{ UnsafeConn() net.Conn }); ok {
			conn = u.UnsafeConn() // fasthttp's wrapper hides the socket's writev
		}
		_, cl.out.vectored = conn.(*net.TCPConn)
		cl.conn = conn
		err := conn.SetWriteDeadline(time.Now().Add(h.cfg.WriteTimeout))
		if err == nil {
			_, err = conn.Write(head)
		}
		if err == nil {
			sc := scratchPool.Get().(*scratch)
			sc.buf = append(cl.out.begin(sc.buf), retry...)
			err = cl.out.write(conn, sc.buf, false)
			sc.buf = sc.buf[:0]
			scratchPool.Put(sc)
		}
		if err != nil {
			cl.finish(&scratch{})
			return
		}
		go cl.runFn()
	})
	return nil
}
