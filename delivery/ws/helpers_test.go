package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// The scope every test connection authenticates as (the API layer's job).
const (
	testOrg = "org1"
	testEnv = "test"
	testKey = "key1"
)

// streams is an in-memory hub.Streams whose Version moves on with every
// change, as the registry's does.
type streams struct {
	mu      sync.Mutex
	m       map[string]hub.StreamInfo
	lookups atomic.Int64 // calls of Stream (BenchmarkPublish_1000Streams)
	version atomic.Uint64
}

func (s *streams) Version() uint64 { return s.version.Load() }

func (s *streams) Stream(org, env, id string) (hub.StreamInfo, bool) {
	s.lookups.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	info, ok := s.m[id]
	if !ok || info.Org != org || info.Env != env {
		return hub.StreamInfo{}, false
	}
	return info, true
}

func (s *streams) put(info hub.StreamInfo) {
	if info.Org == "" {
		info.Org = testOrg
	}
	if info.Env == "" {
		info.Env = testEnv
	}
	if info.State == "" {
		info.State = hub.StateActive
	}
	if info.Kind == "" {
		info.Kind = hub.KindEvents
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[info.ID] = info
	s.version.Add(1)
}

func (s *streams) setState(id, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.m[id]
	info.State = state
	s.m[id] = info
	s.version.Add(1)
}

// counter is an in-memory hub.Counter.
type counter struct {
	mu        sync.Mutex
	counts    map[[2]string]int64
	connected map[string]int
}

func (c *counter) Count(id, name string, n int64) {
	c.mu.Lock()
	c.counts[[2]string{id, name}] += n // a key that allocates nothing (BenchmarkDeliveryAllocs)
	c.mu.Unlock()
}

func (c *counter) Connected(id string, d int) {
	c.mu.Lock()
	c.connected[id] += d
	c.mu.Unlock()
}

func (c *counter) get(id, name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[[2]string{id, name}]
}

func (c *counter) conns(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected[id]
}

// readsLog is a hub.Log that remembers the offset each reader (a pump's
// context) asked for last: a pump reading from next has taken every entry
// before it.
type readsLog struct {
	hub.Log
	mu   sync.Mutex
	next map[context.Context]int64
}

func (l *readsLog) Read(ctx context.Context, id string, from int64, max int) ([]hub.Entry, error) {
	l.mu.Lock()
	l.next[ctx] = from
	l.mu.Unlock()
	return l.Log.Read(ctx, id, from, max)
}

// readersPast counts the readers that took every entry up to off.
func (l *readsLog) readersPast(off int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, next := range l.next {
		if next > off {
			n++
		}
	}
	return n
}

// fixture is a ws.Server behind a real fasthttp server on loopback.
type fixture struct {
	t       testing.TB
	srv     *ws.Server
	log     hub.Log
	streams *streams
	counter *counter
	url     string
}

func newFixture(t testing.TB, cfg ws.Config, infos ...hub.StreamInfo) *fixture {
	// memory bounds far above what a test appends: nothing is trimmed
	l := embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
	t.Cleanup(func() { _ = l.Close() }) // after the server's Shutdown
	return newFixtureLog(t, cfg, l, infos...)
}

func newFixtureLog(t testing.TB, cfg ws.Config, log hub.Log, infos ...hub.StreamInfo) *fixture {
	t.Helper()
	f := &fixture{
		t:       t,
		log:     log,
		streams: &streams{m: map[string]hub.StreamInfo{}},
		counter: &counter{counts: map[[2]string]int64{}, connected: map[string]int{}},
	}
	for _, info := range infos {
		f.streams.put(info)
	}
	cfg.Counter = f.counter
	f.srv = ws.New(cfg, f.streams, f.log, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// as the API's server: read buffers given back after each request,
	// hijacked connections kept when the Server is told so
	hs := &fasthttp.Server{Handler: func(rc *fasthttp.RequestCtx) {
		rc.Response.Header.Set("X-Request-Id", "req-1")
		_ = f.srv.Serve(rc, testOrg, testEnv, testKey)
	}, ReduceMemoryUsage: true, KeepHijackedConns: cfg.KeptHijackedConns}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln)
	}()
	f.url = "ws://" + ln.Addr().String() + "/api/v1/streaming/ws"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := f.srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		_ = hs.Shutdown()
		<-done
	})
	return f
}

// client is a gorilla websocket client whose frames a goroutine reads
// (started by the first read) into a channel, so that a test can wait
// with a timeout without breaking the connection.
type client struct {
	*websocket.Conn
	once   sync.Once
	frames chan frameOf
	quit   chan struct{}
	err    error // the read error that ended the channel
}

// dial connects with the query; compress offers permessage-deflate.
func (f *fixture) dial(query string, compress bool) (*client, *http.Response, error) {
	d := websocket.Dialer{EnableCompression: compress, HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(f.url+"?"+query, nil)
	if err != nil {
		return nil, resp, err
	}
	cl := &client{Conn: c, frames: make(chan frameOf, 1024), quit: make(chan struct{})}
	f.t.Cleanup(func() {
		close(cl.quit)
		_ = c.Close()
	})
	return cl, resp, nil
}

func (f *fixture) mustDial(query string) *client {
	f.t.Helper()
	c, _, err := f.dial(query, false)
	if err != nil {
		f.t.Fatalf("dial %s: %v", query, err)
	}
	return c
}

func (c *client) start(t testing.TB) {
	c.once.Do(func() {
		go func() {
			defer close(c.frames)
			for {
				typ, b, err := c.ReadMessage()
				if err != nil {
					c.err = err
					return
				}
				select {
				case c.frames <- parseFrame(t, typ, b):
				case <-c.quit:
					return
				}
			}
		}()
	})
}

// appendN appends n messages {"seq":from+i,...} to a stream, padded to
// at least pad bytes.
func (f *fixture) appendN(id string, n int, pad int) int64 {
	f.t.Helper()
	data := make([][]byte, n)
	for i := range data {
		data[i] = message(i, pad)
	}
	last, err := f.log.Append(context.Background(), id, data)
	if err != nil {
		f.t.Fatal(err)
	}
	return last
}

func message(i, pad int) []byte {
	m := fmt.Sprintf(`{"event_type":"harsh_braking","seq":%d,"severity":"high","location":{"latitude":52.52,"longitude":13.405},"event_data":{"deceleration_g":0.61,"doors_locked":true,"codes":[1,2,3],"note":null}`, i)
	if len(m) < pad {
		m += `,"pad":"` + strings.Repeat("x", pad-len(m)) + `"`
	}
	return []byte(m + "}")
}

// wrapper is a delivered message.
type wrapper struct {
	StreamID string          `json:"stream_id"`
	Offset   int64           `json:"offset"`
	Message  json.RawMessage `json:"message"`
}

// control is a server control frame.
type control struct {
	Type           string `json:"type"`
	Code           string `json:"code"`
	StreamID       string `json:"stream_id"`
	Offset         int64  `json:"offset"`
	Epoch          string `json:"epoch"`
	Behind         int64  `json:"behind"`
	FirstAvailable int64  `json:"first_available"`
	Message        string `json:"message"`
}

// frameOf is one frame read by a test client.
type frameOf struct {
	ctl   *control
	msgs  []wrapper // one, or a batch
	batch bool
	raw   []byte
	typ   int
}

func parseFrame(t testing.TB, typ int, b []byte) frameOf {
	fr := frameOf{raw: b, typ: typ}
	if typ != websocket.TextMessage {
		return fr
	}
	switch {
	case len(b) > 0 && b[0] == '[':
		fr.batch = true
		if err := json.Unmarshal(b, &fr.msgs); err != nil {
			t.Errorf("batch %s: %v", b, err)
		}
	case strings.HasPrefix(string(b), `{"type"`):
		fr.ctl = &control{}
		if err := json.Unmarshal(b, fr.ctl); err != nil {
			t.Errorf("control %s: %v", b, err)
		}
	default:
		var w wrapper
		if err := json.Unmarshal(b, &w); err != nil {
			t.Errorf("message %s: %v", b, err)
		}
		fr.msgs = []wrapper{w}
	}
	return fr
}

var errTimeout = errors.New("test: read timed out")

// read returns the next frame within d; the error is errTimeout or the
// error that ended the connection.
func read(t testing.TB, c *client, d time.Duration) (frameOf, error) {
	t.Helper()
	c.start(t)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case fr, ok := <-c.frames:
		if !ok {
			return frameOf{}, c.err
		}
		return fr, nil
	case <-timer.C:
		return frameOf{}, errTimeout
	}
}

// subscribedUnread reads the first frame, which must be subscribed, straight
// from the socket: the client's reading goroutine is not started, so a
// client meant to be slow reads nothing more until the test reads again.
func subscribedUnread(t testing.TB, c *client) *control {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	typ, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("waiting for subscribed: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	fr := parseFrame(t, typ, b)
	if fr.ctl == nil || fr.ctl.Type != "subscribed" {
		t.Fatalf("waiting for subscribed: got %s", fr.raw)
	}
	return fr.ctl
}

// expectControl reads frames until a control frame of type typ (and code,
// when given); data frames in between fail the test.
func expectControl(t testing.TB, c *client, typ, code string) *control {
	t.Helper()
	for {
		fr, err := read(t, c, 5*time.Second)
		if err != nil {
			t.Fatalf("waiting for %s %s: %v", typ, code, err)
		}
		if fr.ctl == nil {
			t.Fatalf("waiting for %s %s: got %s", typ, code, fr.raw)
		}
		if fr.ctl.Type == typ && (code == "" || fr.ctl.Code == code) {
			return fr.ctl
		}
		if fr.ctl.Type != "lag" {
			t.Fatalf("waiting for %s %s: got %s", typ, code, fr.raw)
		}
	}
}

// readOffsets reads n messages of stream id and checks they carry the
// offsets from..from+n-1 in order and the messages appended.
func readOffsets(t testing.TB, c *client, id string, from int64, n int) {
	t.Helper()
	readOffsetsEach(t, c, id, from, n, nil)
}

// readOffsetsEach is readOffsets calling each, when not nil, with every
// offset read.
func readOffsetsEach(t testing.TB, c *client, id string, from int64, n int, each func(off int64)) {
	t.Helper()
	want := from
	for want < from+int64(n) {
		fr, err := read(t, c, 5*time.Second)
		if err != nil {
			if os.Getenv("WSDEBUG") != "" {
				_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
			}
			t.Fatalf("reading offset %d: %v", want, err)
		}
		if fr.ctl != nil {
			if fr.ctl.Type == "lag" {
				continue
			}
			t.Fatalf("reading offset %d: got %s", want, fr.raw)
		}
		for _, w := range fr.msgs {
			if w.StreamID != id || w.Offset != want {
				t.Fatalf("got %s offset %d, want %s offset %d", w.StreamID, w.Offset, id, want)
			}
			if each != nil {
				each(want)
			}
			want++
		}
	}
	if want != from+int64(n) {
		t.Fatalf("read up to offset %d, want %d", want-1, from+int64(n)-1)
	}
}

// expectSilence checks that nothing arrives within d.
func expectSilence(t testing.TB, c *client, d time.Duration) {
	t.Helper()
	fr, err := read(t, c, d)
	if err == nil {
		t.Fatalf("expected nothing, got %s", fr.raw)
	}
	if err != errTimeout {
		t.Fatalf("expected a timeout, got %v", err)
	}
}

// expectClose reads until the connection closes and returns the close code.
func expectClose(t testing.TB, c *client) int {
	t.Helper()
	for {
		_, err := read(t, c, 5*time.Second)
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); ok {
			return ce.Code
		}
		t.Fatalf("expected a close frame, got %v", err)
	}
}

func send(t testing.TB, c *client, v string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond for up to 5 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if waitfor.Poll(5*time.Second, cond) {
		return
	}
	if os.Getenv("WSDEBUG") != "" {
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
	}
	t.Fatalf("timed out waiting for %s", what)
}
