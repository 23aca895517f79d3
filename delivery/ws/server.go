package ws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/apikey"
)

// Server is the websocket sink: it upgrades authenticated requests and
// runs each connection (one reader, one writer, one pump per followed
// stream) until the client leaves, the streams stop or Shutdown.
type Server struct {
	cfg     Config
	streams hub.Streams
	log     hub.Log
	counter hub.Counter
	acks    Acks
	counts  Conns
	logger  *slog.Logger
	start   time.Time // since reads the clock (Config.Now) from here

	plain   websocket.FastHTTPUpgrader // no compression offered
	deflate websocket.FastHTTPUpgrader // permessage-deflate negotiated when the client offers it

	mu       sync.Mutex // guards conns, closed and the pinger's fields; wg.Add only under mu while !closed
	conns    map[*conn]struct{}
	closed   bool
	wg       sync.WaitGroup // one per running connection
	pinging  bool           // the pinger was started (pinger.go)
	pingNext int            // the ping slot of the next connection
	pingStop chan struct{}  // closed by Shutdown: the pinger ends
	pingDone chan struct{}  // closed when the pinger ended

	ringsMu sync.Mutex // guards rings and ring.refs
	rings   map[string]*ring
	noCache bool      // set before use by tests and benchmarks only
	flaters sync.Pool // *flate.Writer of the compressed frames (frames.go)
	// batchBufs are the writers' buffers (*batchBufs, writer.go), held by
	// a connection only while it has frames to write
	batchBufs sync.Pool
	// wsWrite is gorilla's write buffer pool: gorilla writes only control
	// frames here (WriteControl, which needs no buffer), so a connection
	// keeps no write buffer of its own
	wsWrite sync.Pool
	// linger holds busy connections' writes until their lingers end
	// (conn.pushed)
	linger lingerer
	// stateClock wakes the lots' waiters for their state checks
	stateClock stateClock
}

// New returns a Server; zero Config fields take their defaults. A nil
// logger logs nothing.
func New(cfg Config, streams hub.Streams, log hub.Log, logger *slog.Logger) *Server {
	counter := cfg.Counter
	if c, ok := streams.(hub.Counter); ok && counter == nil {
		counter = c
	}
	if counter == nil {
		counter = nopCounter{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:     cfg,
		streams: streams,
		log:     log,
		counter: counter,
		acks:    cfg.Acks,
		counts:  cfg.Conns,
		logger:  logger,
		conns:   map[*conn]struct{}{},
		rings:   map[string]*ring{},
		start:   cfg.Now(),
	}
	s.linger.since, s.linger.slack = s.since, cfg.WriteLinger/lingerSlack
	s.batchBufs.New = newBatchBufs
	for _, u := range []*websocket.FastHTTPUpgrader{&s.plain, &s.deflate} {
		u.HandshakeTimeout = cfg.WriteTimeout
		// Keys, not cookies, authenticate (header, subprotocol or api_key
		// query), so a foreign page cannot ride on a browser's
		// credentials: any origin.
		u.CheckOrigin = func(*fasthttp.RequestCtx) bool { return true }
		// Only Protocol is ever selected: a key offered as a subprotocol
		// (KeyProtocolPrefix) is never echoed in the response.
		u.Subprotocols = []string{Protocol}
		u.Error = handshakeError
		// clients send small frames (subscribe, ack, pongs): a small
		// buffer, larger frames are read past it
		u.ReadBufferSize = readBufferSize
		u.WriteBufferPool = &s.wsWrite
	}
	s.deflate.EnableCompression = true
	return s
}

// Serve upgrades an authenticated request (the API layer checked the key
// and streams:read) and runs the connection in its own goroutines. It
// returns once the upgrade is arranged. A bad request is answered before
// the upgrade with a JSON error and Serve returns a *RequestError; the
// response is written and the caller writes nothing more.
func (s *Server) Serve(rc *fasthttp.RequestCtx, org, env, keyID string) error {
	return s.ServeLimited(rc, org, env, keyID, nil, true, nil)
}

// ServeLimited is Serve for a connection opened with a browser token:
// allows (nil: any) says which streams it may follow, in the query and
// in subscribe frames alike; feed whether it may follow the
// organization's feed (the feed:read scope); and when life ends (the
// token expired or was revoked; nil: never) the connection is closed
// with 4401.
func (s *Server) ServeLimited(rc *fasthttp.RequestCtx, org, env, keyID string, allows func(streamID string) bool, feed bool, life context.Context) error {
	if s.isClosed() {
		return reply(rc, &RequestError{Status: fasthttp.StatusServiceUnavailable, Code: "service_unavailable", Message: "server is shutting down"})
	}
	if life != nil && life.Err() != nil {
		return reply(rc, &RequestError{Status: fasthttp.StatusUnauthorized, Code: tokenCode(life), Message: "the token has ended"})
	}
	req, err := s.parseRequest(rc, org, env, keyID, feed)
	if err != nil {
		return reply(rc, err)
	}
	for _, sp := range req.subs {
		if allows != nil && !allows(sp.info.ID) {
			return reply(rc, &RequestError{Status: fasthttp.StatusForbidden, Code: "insufficient_permissions", Message: fmt.Sprintf("this token does not open stream %q", sp.info.ID)})
		}
	}
	release, err := s.acquire(org, env, keyID)
	if err != nil {
		if re, ok := err.(*RequestError); ok && re.Code == "too_many_connections" {
			rc.Response.Header.Set("Retry-After", "1")
		}
		return reply(rc, err)
	}
	// the slot is held from here: given back when the connection ends,
	// when the upgrade fails, or when fasthttp never runs the connection
	sl := newSlot(release, 2*s.cfg.WriteTimeout+closeWait)
	c := &conn{
		s:      s,
		org:    strings.Clone(org),
		env:    strings.Clone(env),
		keyID:  strings.Clone(keyID),
		bin:    req.bin,
		allows: allows,
		feedOK: feed,
	}
	up := &s.plain
	if req.compression {
		up = &s.deflate
	}
	serve := func(wsc *websocket.Conn) {
		if sl.start() {
			defer release()
		}
		// with KeepHijackedConns fasthttp leaves the socket to its
		// hijacker; without, this Close is a no-op and fasthttp closes
		// it when the hijack handler returns
		defer func() {
			if err := wsc.NetConn().Close(); err != nil {
				s.logger.Debug("websocket socket close", "error", err)
			}
		}()
		c.init(wsc)
		if life != nil {
			stop := context.AfterFunc(life, func() { c.close(tokenReason(life)) })
			defer stop()
		}
		s.run(c, req.subs, req.feed)
	}
	err = up.Upgrade(rc, func(wsc *websocket.Conn) {
		// runs in fasthttp's hijack goroutine, after Serve returned
		if s.cfg.KeptHijackedConns {
			// the hijack handler returns at once, so fasthttp frees the
			// request's context; the connection runs on its own
			go serve(wsc)
			return
		}
		serve(wsc)
	})
	if err != nil {
		if sl.start() {
			release()
		}
		return err
	}
	c.compress = len(rc.Response.Header.Peek("Sec-WebSocket-Extensions")) > 0
	return nil
}

// tokenReason is the close reason of a connection whose token's life
// ended: revoked, else expired.
func tokenReason(life context.Context) error {
	if errors.Is(context.Cause(life), apikey.ErrTokenRevoked) {
		return ErrTokenRevoked
	}
	return ErrTokenExpired
}

// tokenCode is the error code of a token whose life ended.
func tokenCode(life context.Context) string {
	if errors.Is(tokenReason(life), ErrTokenRevoked) {
		return "token_revoked"
	}
	return "token_expired"
}

// run registers a connection and runs it to its end.
func (s *Server) run(c *conn, subs []subscription, fst *feedStart) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		// fasthttp closes the socket when this returns
		if err := c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(CloseGoingAway, "server shutdown"), time.Now().Add(closeWait)); err != nil {
			s.logger.Debug("websocket close frame at shutdown not sent", "error", err)
		}
		return
	}
	s.conns[c] = struct{}{}
	c.pingSlot = s.pingNext
	s.pingNext = (s.pingNext + 1) % pingSlots
	s.startPinger()
	s.wg.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	c.run(subs, fst)
}

// Connections is the number of open connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting connections, closes every connection with
// 1001 after writing what its queue holds, and waits for their goroutines.
// When ctx ends first it cuts the remaining sockets and returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.stopPinger()
	for _, c := range conns {
		c.close(ErrShutdown)
	}
	done := make(chan struct{})
	go func() { // ends with the last connection, which the cut below bounds
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, c := range conns {
		c.cut()
	}
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	return ctx.Err()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

type nopCounter struct{}

func (nopCounter) Count(string, string, int64) {}
func (nopCounter) Connected(string, int)       {}

// since is the time since the Server started, by Config.Now (time.Now's
// readings carry the monotonic clock).
func (s *Server) since() time.Duration { return s.cfg.Now().Sub(s.start) }
