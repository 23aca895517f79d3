package ws_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

// An idle connection has no writer goroutine, holds no write buffers and
// its pump is parked (no goroutine either), yet it is pinged on time and
// gets what is published after a long quiet spell, in order; a burst
// borrows the buffers and gives them back; a parked subscription still
// learns that its stream stopped.
// Both ways of running a connection: in fasthttp's hijack handler, and on
// its own with the hijacked connection kept (the API's server).
func TestIdleConnectionPingedAndDelivered(t *testing.T) {
	for _, kept := range []bool{false, true} {
		t.Run(fmt.Sprintf("kept=%v", kept), func(t *testing.T) {
			testIdleConnection(t, ws.Config{PingInterval: 40 * time.Millisecond, ReadTimeout: time.Second, KeptHijackedConns: kept})
		})
	}
}

func testIdleConnection(t *testing.T, cfg ws.Config) {
	f := newFixture(t, cfg, hub.StreamInfo{ID: "s1"})
	const n = 3
	var pings [n]atomic.Int64
	cs := make([]*client, n)
	for i := range cs {
		c := f.mustDial("stream_id=s1")
		c.SetPingHandler(func(s string) error {
			pings[i].Add(1)
			if err := c.WriteControl(websocket.PongMessage, []byte(s), time.Now().Add(time.Second)); err != nil && !errors.Is(err, websocket.ErrCloseSent) {
				return err
			}
			return nil
		})
		expectControl(t, c, "subscribed", "")
		cs[i] = c
	}
	quiet := func(what string) {
		t.Helper()
		eventually(t, what, func() bool {
			running, holding := ws.Writers(f.srv)
			return running == 0 && holding == 0 && ws.Parked(f.srv) == n
		})
	}
	quiet("no writer and no buffers after the subscribed notices")

	// a quiet spell of many ping intervals (longer than ReadTimeout, which
	// only the pongs to the server's pings survive)
	for i := range cs {
		eventually(t, "thirty pings", func() bool { return pings[i].Load() >= 30 })
	}
	quiet("no writer and no buffers between pings")
	if got := f.srv.Connections(); got != n {
		t.Fatalf("%d connections after the quiet spell, want %d", got, n)
	}

	f.appendN("s1", 1, 0)
	for _, c := range cs {
		readOffsets(t, c, "s1", 1, 1)
	}
	quiet("no writer and no buffers after one message")

	f.appendN("s1", 600, 300) // a burst: more than one writev (128 KiB)
	for _, c := range cs {
		readOffsets(t, c, "s1", 2, 600)
	}
	quiet("buffers given back after a burst")
	f.appendN("s1", 1, 0)
	for _, c := range cs {
		readOffsets(t, c, "s1", 602, 1)
	}
	quiet("parked again")

	f.streams.setState("s1", hub.StateStopped)
	for _, c := range cs {
		expectControl(t, c, "error", "stream_stopped")
		if code := expectClose(t, c); code != ws.CloseStreamStopped {
			t.Fatalf("close code %d, want %d", code, ws.CloseStreamStopped)
		}
	}
	eventually(t, "no connection left", func() bool { return f.srv.Connections() == 0 && ws.Parked(f.srv) == 0 })
}

// A parked subscription can be left and resumed at once, and a parked
// connection closes on Shutdown with 1001.
func TestParkedSubscriptionCancelled(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1,s2")
	expectControl(t, c, "subscribed", "")
	expectControl(t, c, "subscribed", "")
	eventually(t, "both pumps parked", func() bool { return ws.Parked(f.srv) == 2 })
	send(t, c, `{"type":"unsubscribe","stream_id":"s2"}`)
	expectControl(t, c, "unsubscribed", "")
	eventually(t, "one pump parked", func() bool { return ws.Parked(f.srv) == 1 })
	f.appendN("s1", 3, 0)
	f.appendN("s2", 3, 0)
	readOffsets(t, c, "s1", 1, 3)
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":1}`)
	expectControl(t, c, "subscribed", "")
	readOffsets(t, c, "s1", 2, 2)
	eventually(t, "parked again", func() bool { return ws.Parked(f.srv) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code := expectClose(t, c); code != ws.CloseGoingAway {
		t.Fatalf("close code %d, want %d", code, ws.CloseGoingAway)
	}
	if n := ws.Parked(f.srv); n != 0 {
		t.Fatalf("%d pumps parked after Shutdown", n)
	}
}
