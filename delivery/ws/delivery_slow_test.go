package ws_test

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/internal/waitfor"
)

func TestSlowClientDoesNotDelayOthers(t *testing.T) {
	const total = 20_000
	f := newFixture(t, ws.Config{
		// the fast client may lag by the whole burst meanwhile: MaxLag is
		// above it, and the slow one ends by the write deadline, long
		// enough for the fast one's reader under the race detector on a
		// loaded machine (a second was not, once; two seconds were not
		// either, with four race-detected packages on two cores)
		QueueBytes: 64 << 10, MaxLag: 2 * total, LagNotice: 500, WriteTimeout: 5 * time.Second,
	}, hub.StreamInfo{ID: "s1"})
	slow := f.mustDial("stream_id=s1") // never reads until the end
	fast := f.mustDial("stream_id=s1")
	expectControl(t, fast, "subscribed", "")

	go func() {
		for range total / 100 {
			f.appendN("s1", 100, 1000)
		}
	}()
	// the fast client gets every message in order, with no pause longer
	// than readOffsets' deadline, while the slow one reads nothing
	readOffsets(t, fast, "s1", 1, total)

	// the slow client's server side gave up: it reads what its socket
	// holds, in order and without gaps, then the connection ends
	if !waitfor.Poll(3*5*time.Second, func() bool { return f.srv.Connections() == 1 }) {
		t.Fatal("timed out waiting for the slow client's close (three write deadlines)")
	}
	expectControl(t, slow, "subscribed", "")
	next := int64(1)
	var end error
	for end == nil {
		var fr frameOf
		fr, end = read(t, slow, 5*time.Second)
		if fr.ctl != nil && fr.ctl.Type != "lag" {
			t.Fatalf("slow client got %s", fr.raw)
		}
		for _, w := range fr.msgs {
			if w.Offset != next {
				t.Fatalf("slow client: offset %d, want %d", w.Offset, next)
			}
			next++
		}
	}
	var ce *websocket.CloseError
	switch {
	case errors.As(end, &ce) && (ce.Code == ws.CloseSlowConsumer || ce.Code == websocket.CloseAbnormalClosure):
	case errors.Is(end, io.ErrUnexpectedEOF), errors.Is(end, net.ErrClosed), errors.Is(end, syscall.ECONNRESET):
		// the server closed the socket; a reset when it closed with bytes
		// of the client's still unread
	default:
		t.Fatalf("slow client ended with %v after offset %d", end, next-1)
	}
	// it lagged: dropped before the last message, which the fast one got
	if next-1 >= total {
		t.Fatalf("slow client read all %d messages; want it dropped behind the fast one", total)
	}
	t.Logf("slow client read %d messages in order, then %v", next-1, end)
}

func TestMaxLagCloses(t *testing.T) {
	// the write deadline is far past eventually's 5 s: only the lag can
	// close the connection in time
	f := newFixture(t, ws.Config{QueueBytes: 16 << 10, MaxLag: 1000, LagGrace: 300 * time.Millisecond, WriteTimeout: time.Minute}, hub.StreamInfo{ID: "s1"})
	slow := f.mustDial("stream_id=s1")
	subscribedUnread(t, slow)
	for range 200 { // 20 MB: far more than loopback socket buffers hold
		f.appendN("s1", 100, 1000)
	}
	eventually(t, "slow consumer closed", func() bool { return f.srv.Connections() == 0 })
	if n := f.counter.conns("s1"); n != 0 {
		t.Fatalf("connected %d", n)
	}
	next := int64(1)
	for {
		fr, err := read(t, slow, 5*time.Second)
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) && ce.Code != ws.CloseSlowConsumer && ce.Code != websocket.CloseAbnormalClosure {
				t.Fatalf("closed with %d", ce.Code)
			}
			t.Logf("read %d messages in order, then %v", next-1, err)
			return
		}
		for _, w := range fr.msgs {
			if w.Offset != next {
				t.Fatalf("offset %d, want %d", w.Offset, next)
			}
			next++
		}
	}
}

func TestDisconnectMidBatch(t *testing.T) {
	ml := embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
	t.Cleanup(func() { _ = ml.Close() })
	l := &readsLog{Log: ml, next: map[context.Context]int64{}}
	f := newFixtureLog(t, ws.Config{}, l, hub.StreamInfo{ID: "s1", BatchEvents: true, BatchSize: 50, MaxWait: 2 * time.Second})
	a := f.mustDial("stream_id=s1")
	b := f.mustDial("stream_id=s1")
	expectControl(t, a, "subscribed", "")
	expectControl(t, b, "subscribed", "")
	f.appendN("s1", 30, 0)
	// a pump that asks for 31 batched 1..30 and holds them until MaxWait
	eventually(t, "both pumps hold a partial batch", func() bool { return l.readersPast(30) == 2 })
	_ = a.NetConn().Close() // gone without a close frame
	eventually(t, "a gone", func() bool { return f.srv.Connections() == 1 })
	f.appendN("s1", 20, 0)
	fr, err := read(t, b, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.msgs) != 50 || fr.msgs[0].Offset != 1 || fr.msgs[49].Offset != 50 {
		t.Fatalf("got a batch of %d", len(fr.msgs))
	}
	if n := f.counter.conns("s1"); n != 1 {
		t.Fatalf("connected %d, want 1", n)
	}
}

func TestLagNotice(t *testing.T) {
	f := newFixture(t, ws.Config{LagNotice: 100, ReadBatch: 16}, hub.StreamInfo{ID: "s1"})
	f.appendN("s1", 1000, 0)
	c := f.mustDial("stream_id=s1&last_offset=0")
	expectControl(t, c, "subscribed", "")
	var lag *control
	for next := int64(1); next <= 1000; {
		fr, err := read(t, c, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if fr.ctl != nil {
			if fr.ctl.Type != "lag" || lag != nil {
				t.Fatalf("got %s", fr.raw)
			}
			lag = fr.ctl
			continue
		}
		next += int64(len(fr.msgs))
	}
	if lag == nil || lag.StreamID != "s1" || lag.Behind <= 100 {
		t.Fatalf("lag notice %+v", lag)
	}
}

// TestStreamLagNotice: a stream's own bound (a telemetry stream's
// buffer_size) replaces the server's, even below one read's worth.
func TestStreamLagNotice(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", LagNotice: 10}, hub.StreamInfo{ID: "s2"})
	f.appendN("s1", 30, 0)
	f.appendN("s2", 30, 0)
	for _, c := range []struct {
		id   string
		want bool
	}{{"s1", true}, {"s2", false}} {
		cl := f.mustDial("stream_id=" + c.id + "&last_offset=0")
		expectControl(t, cl, "subscribed", "")
		var lag *control
		for next := int64(1); next <= 30; {
			fr, err := read(t, cl, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if fr.ctl != nil {
				if fr.ctl.Type != "lag" || lag != nil {
					t.Fatalf("got %s", fr.raw)
				}
				lag = fr.ctl
				continue
			}
			next += int64(len(fr.msgs))
		}
		if got := lag != nil; got != c.want {
			t.Errorf("%s 30 behind: lag notice %+v, want one: %v", c.id, lag, c.want)
		}
		if lag != nil && (lag.StreamID != c.id || lag.Behind != 30) {
			t.Errorf("lag notice %+v", lag)
		}
	}
}

func TestShutdown(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	a := f.mustDial("stream_id=s1")
	b := f.mustDial("stream_id=s1&encoding=msgpack")
	expectControl(t, a, "subscribed", "")
	expectControl(t, b, "subscribed", "")
	f.appendN("s1", 3, 0)
	readOffsets(t, a, "s1", 1, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.srv.Shutdown(ctx) }()
	if code := expectClose(t, a); code != websocket.CloseGoingAway {
		t.Fatalf("close %d, want 1001", code)
	}
	if code := expectClose(t, b); code != websocket.CloseGoingAway {
		t.Fatalf("close %d, want 1001", code)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := f.srv.Connections(); n != 0 {
		t.Fatalf("%d connections after Shutdown", n)
	}
	if n := f.counter.conns("s1"); n != 0 {
		t.Fatalf("connected %d after Shutdown", n)
	}
	_, resp, err := f.dial("stream_id=s1", false)
	if err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("dial after Shutdown: %v", err)
	}
}

func TestPingKeepsAlive(t *testing.T) {
	// a read timeout long enough for a busy machine's scheduling stalls
	f := newFixture(t, ws.Config{PingInterval: 100 * time.Millisecond, ReadTimeout: 600 * time.Millisecond}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	pongs := make(chan string, 1)
	c.SetPongHandler(func(s string) error {
		select {
		case pongs <- s:
		default:
		}
		return nil
	})
	// the reading goroutine answers pings; twenty of them span more than
	// three read timeouts, which the pongs survive
	pings := make(chan struct{}, 64)
	c.SetPingHandler(func(s string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		if err := c.WriteControl(websocket.PongMessage, []byte(s), time.Now().Add(time.Second)); err != nil && !errors.Is(err, websocket.ErrCloseSent) {
			return err
		}
		return nil
	})
	expectControl(t, c, "subscribed", "")
	for i := range 20 {
		select {
		case <-pings:
		case <-time.After(5 * time.Second):
			t.Fatalf("ping %d did not come: the connection was closed", i+1)
		}
	}
	if err := c.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-pongs:
		if s != "hi" {
			t.Fatalf("pong %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no pong")
	}
	f.appendN("s1", 1, 0)
	readOffsets(t, c, "s1", 1, 1)

	// a client that answers nothing is closed after ReadTimeout
	f.mustDial("stream_id=s1")
	eventually(t, "silent client closed", func() bool { return f.srv.Connections() == 1 })
}

// A client that stops reading fills its socket: single messages, each
// written by the pump that framed it while the socket had room, then
// half written, then left to the writer goroutine. Once the client reads
// again it gets every message whole and in order.
func TestFramesWholeAfterAFullSocket(t *testing.T) {
	const total, size = 600, 16 << 10 // 9.6 MB: more than loopback's socket buffers hold
	f := newFixture(t, ws.Config{QueueBytes: 64 << 20, MaxLag: 1 << 40, LagNotice: 1 << 40, WriteTimeout: time.Minute},
		hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	paced := true
	for i := range total {
		f.appendN("s1", 1, size)
		// while the socket has room, the next append waits for this
		// message to be written, so that the pump has parked and the
		// append wakes it to write one frame; once a write waits for
		// the client, the rest follow at once
		if paced && !waitfor.Poll(time.Second, func() bool { return f.counter.get("s1", "delivered") == int64(i+1) }) {
			paced = false
		}
	}
	if !paced {
		t.Logf("the socket filled after %d messages", f.counter.get("s1", "delivered"))
	}
	expectControl(t, c, "subscribed", "")
	readOffsetsEach(t, c, "s1", 1, total, nil)
}
