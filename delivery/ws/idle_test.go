package ws_test

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

// An idle connection has no writer goroutine and holds no write buffers,
// yet it is pinged on time and gets what is published after a long quiet
// spell, in order; a burst borrows the buffers and gives them back.
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
			return running == 0 && holding == 0
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
}
