package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/memlog"
)

func TestLiveDelivery(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	f.appendN("s1", 5, 0) // before the connection: not delivered
	c := f.mustDial("stream_id=s1")
	if got := expectControl(t, c, "subscribed", ""); got.StreamID != "s1" || got.Offset != 6 {
		t.Fatalf("subscribed %+v, want s1 at offset 6", got)
	}
	f.appendN("s1", 100, 0)
	readOffsets(t, c, "s1", 6, 100)
	eventually(t, "delivered counter", func() bool { return f.counter.get("s1", "delivered") == 100 })
	if n := f.counter.conns("s1"); n != 1 {
		t.Fatalf("connected %d, want 1", n)
	}
	_ = c.Close()
	eventually(t, "disconnect counted", func() bool { return f.counter.conns("s1") == 0 && f.srv.Connections() == 0 })
}

func TestMessageContent(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 1, 0)
	fr, err := read(t, c, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stream_id":"s1","offset":1,"message":` + string(message(0, 0)) + `}`
	if string(fr.raw) != want {
		t.Fatalf("got  %s\nwant %s", fr.raw, want)
	}
}

func TestResumeQueryNoGap(t *testing.T) {
	f := newFixture(t, ws.Config{ReadBatch: 64}, hub.StreamInfo{ID: "s1"})
	const total = 3000
	f.appendN("s1", 1000, 0)
	c := f.mustDial("stream_id=s1&last_offset=250")
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 251 {
		t.Fatalf("subscribed at %d, want 251", got.Offset)
	}
	// appends keep coming while the client replays: ten more after every
	// tenth message read, until the log holds total
	last := int64(1000)
	readOffsetsEach(t, c, "s1", 251, total-250, func(off int64) {
		if off%10 == 0 && last < total {
			last = f.appendN("s1", 10, 0)
		}
	})
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", total+1, 10)
	expectSilence(t, c, 100*time.Millisecond)
}

func TestResumeFrame(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", 1, 10)
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":3}`)
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 4 {
		t.Fatalf("resumed at %d, want 4", got.Offset)
	}
	readOffsets(t, c, "s1", 4, 7)
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 11, 5)
	// a position past the head starts at the head
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":999}`)
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 16 {
		t.Fatalf("resumed at %d, want 16", got.Offset)
	}
	if n := f.counter.conns("s1"); n != 1 {
		t.Fatalf("connected %d after resumes, want 1", n)
	}
}

func TestSubscribeUnsubscribe(t *testing.T) {
	f := newFixture(t, ws.Config{},
		hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"},
		hub.StreamInfo{ID: "other", Org: "org2"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	send(t, c, `{"type":"subscribe","stream_id":"s2"}`)
	if got := expectControl(t, c, "subscribed", ""); got.StreamID != "s2" {
		t.Fatalf("subscribed %+v", got)
	}
	send(t, c, `{"type":"subscribe","stream_id":"s2"}`)
	expectControl(t, c, "error", "already_subscribed")
	send(t, c, `{"type":"subscribe","stream_id":"other"}`)
	expectControl(t, c, "error", "stream_not_found")
	f.appendN("s2", 3, 0)
	readOffsets(t, c, "s2", 1, 3)
	send(t, c, `{"type":"unsubscribe","stream_id":"s1"}`)
	expectControl(t, c, "unsubscribed", "")
	send(t, c, `{"type":"unsubscribe","stream_id":"s1"}`)
	expectControl(t, c, "error", "not_subscribed")
	f.appendN("s1", 3, 0)
	f.appendN("s2", 1, 0)
	readOffsets(t, c, "s2", 4, 1)
	if a, b := f.counter.conns("s1"), f.counter.conns("s2"); a != 0 || b != 1 {
		t.Fatalf("connected s1=%d s2=%d, want 0 and 1", a, b)
	}
	// with nothing followed the connection stays up
	send(t, c, `{"type":"unsubscribe","stream_id":"s2"}`)
	expectControl(t, c, "unsubscribed", "")
	send(t, c, `{"type":"ping"}`)
	expectControl(t, c, "pong", "")
}

func TestMsgpack(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "batch"}[batch], func(t *testing.T) {
			f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", BatchEvents: batch, BatchSize: 3, MaxWait: 50 * time.Millisecond})
			c := f.mustDial("stream_id=s1&encoding=msgpack")
			expectControl(t, c, "subscribed", "") // control frames stay JSON text
			f.appendN("s1", 6, 0)
			var got []map[string]any
			for len(got) < 6 {
				fr, err := read(t, c, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if fr.typ != websocket.BinaryMessage {
					t.Fatalf("got a text frame %s", fr.raw)
				}
				if batch {
					var arr []map[string]any
					if err := msgpack.Unmarshal(fr.raw, &arr); err != nil {
						t.Fatal(err)
					}
					if len(arr) != 3 {
						t.Fatalf("batch of %d, want 3", len(arr))
					}
					got = append(got, arr...)
					continue
				}
				var m map[string]any
				if err := msgpack.Unmarshal(fr.raw, &m); err != nil {
					t.Fatal(err)
				}
				got = append(got, m)
			}
			for i, m := range got {
				if m["stream_id"] != "s1" || toInt(m["offset"]) != int64(i+1) {
					t.Fatalf("wrapper %d: %v", i, m)
				}
				var want any
				_ = json.Unmarshal(message(i, 0), &want)
				if msg := normalize(t, m["message"]); !reflect.DeepEqual(msg, want) {
					t.Fatalf("message %d:\n got  %v\n want %v", i, msg, want)
				}
			}
		})
	}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int8:
		return int64(n)
	case int16:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case uint8:
		return int64(n)
	case uint16:
		return int64(n)
	case uint32:
		return int64(n)
	case uint64:
		return int64(n)
	}
	return -1
}

// normalize passes a msgpack-decoded value through JSON.
func normalize(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func TestBatchEvents(t *testing.T) {
	const maxWait = 300 * time.Millisecond
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", BatchEvents: true, BatchSize: 10, MaxWait: maxWait})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	start := time.Now()
	f.appendN("s1", 25, 0)
	var sizes []int
	next := int64(1)
	for next <= 25 {
		fr, err := read(t, c, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if !fr.batch {
			t.Fatalf("not a batch: %s", fr.raw)
		}
		for _, w := range fr.msgs {
			if w.Offset != next {
				t.Fatalf("offset %d, want %d", w.Offset, next)
			}
			next++
		}
		sizes = append(sizes, len(fr.msgs))
	}
	el := time.Since(start)
	if !reflect.DeepEqual(sizes, []int{10, 10, 5}) {
		t.Fatalf("batch sizes %v, want [10 10 5]", sizes)
	}
	if el < maxWait-50*time.Millisecond || el > maxWait+2*time.Second {
		t.Fatalf("partial batch after %v, want about %v", el, maxWait)
	}
	// a single message waits MaxWait at most
	start = time.Now()
	f.appendN("s1", 1, 0)
	fr, err := read(t, c, 5*time.Second)
	if err != nil || len(fr.msgs) != 1 || fr.msgs[0].Offset != 26 {
		t.Fatalf("got %s, %v", fr.raw, err)
	}
	if el := time.Since(start); el < maxWait-50*time.Millisecond {
		t.Fatalf("sent after %v, before MaxWait", el)
	}
	eventually(t, "delivered counter", func() bool { return f.counter.get("s1", "delivered") == 26 })
}

func TestCompression(t *testing.T) {
	f := newFixture(t, ws.Config{},
		hub.StreamInfo{ID: "zip", Compression: true},
		hub.StreamInfo{ID: "plain"},
		hub.StreamInfo{ID: "zipbatch", Compression: true, BatchEvents: true, BatchSize: 4, MaxWait: 20 * time.Millisecond})
	c, resp, err := f.dial("stream_id=zip,zipbatch", true)
	if err != nil {
		t.Fatal(err)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q, want permessage-deflate", ext)
	}
	expectControl(t, c, "subscribed", "")
	expectControl(t, c, "subscribed", "")
	f.appendN("zip", 20, 2000)
	readOffsets(t, c, "zip", 1, 20)
	f.appendN("zipbatch", 8, 2000)
	readOffsets(t, c, "zipbatch", 1, 8)
	// a second connection shares the compressed frames
	c2, _, err := f.dial("stream_id=zip&last_offset=0", true)
	if err != nil {
		t.Fatal(err)
	}
	expectControl(t, c2, "subscribed", "")
	readOffsets(t, c2, "zip", 1, 20)

	_, resp, err = f.dial("stream_id=plain", true)
	if err != nil {
		t.Fatal(err)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		t.Fatalf("extensions %q for a stream without compression", ext)
	}
}

func TestRefusedBeforeUpgrade(t *testing.T) {
	f := newFixture(t, ws.Config{},
		hub.StreamInfo{ID: "s1"},
		hub.StreamInfo{ID: "foreign", Org: "org2"},
		hub.StreamInfo{ID: "live", Env: "live"},
		hub.StreamInfo{ID: "hook", Delivery: "webhook"})
	for _, tc := range []struct {
		query  string
		status int
		code   string
	}{
		{"stream_id=nope", 404, "stream_not_found"},
		{"stream_id=foreign", 404, "stream_not_found"},
		{"stream_id=live", 404, "stream_not_found"},
		{"stream_id=s1&stream_id=nope", 404, "stream_not_found"},
		{"stream_id=s1,nope", 404, "stream_not_found"},
		{"", 400, "invalid_request"},
		{"stream_id=,", 400, "invalid_request"},
		{"stream_id=s1&encoding=xml", 400, "invalid_request"},
		{"stream_id=s1&last_offset=-1", 400, "invalid_request"},
		{"stream_id=s1&last_offset=x", 400, "invalid_request"},
		{"stream_id=hook", 400, "invalid_request"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, resp, err := f.dial(tc.query, false)
			if err == nil {
				t.Fatal("upgraded")
			}
			if resp == nil {
				t.Fatalf("no response: %v", err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
				RequestID string `json:"request_id"`
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &body); err != nil {
				t.Fatalf("body %q: %v", b, err)
			}
			if resp.StatusCode != tc.status || body.Error.Code != tc.code || body.RequestID != "req-1" || body.Error.Message == "" {
				t.Fatalf("got %d %s, want %d with code %s and request_id req-1", resp.StatusCode, b, tc.status, tc.code)
			}
		})
	}
	if n := f.srv.Connections(); n != 0 {
		t.Fatalf("%d connections", n)
	}
}

func TestMalformedFrames(t *testing.T) {
	f := newFixture(t, ws.Config{MaxMessageSize: 1024}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	for _, bad := range []string{
		`not json`, `[1,2]`, `"ping"`, `{"type":"nope"}`, `{}`, `{"type":"ack","stream_id":"s1"}`,
		`{"type":"ack","offset":3}`, `{"type":"resume","stream_id":"s1"}`, `{"type":"subscribe"}`,
		`{"type":"resume","stream_id":"s1","last_offset":-2}`, `{"type":"ack","stream_id":"s1","offset":1.5}`,
	} {
		send(t, c, bad)
		if got := expectControl(t, c, "error", "invalid_frame"); got.Message == "" {
			t.Fatalf("%s: no message", bad)
		}
		send(t, c, `{"type":"ping"}`) // a good frame resets the count
		expectControl(t, c, "pong", "")
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	expectControl(t, c, "error", "invalid_frame")
	send(t, c, `{"type":"ping"}`)
	expectControl(t, c, "pong", "")
	f.appendN("s1", 2, 0)
	readOffsets(t, c, "s1", 1, 2)

	// more than ten in a row: 1008
	for range 11 {
		send(t, c, `nope`)
	}
	for range 11 {
		expectControl(t, c, "error", "invalid_frame")
	}
	if code := expectClose(t, c); code != websocket.ClosePolicyViolation {
		t.Fatalf("close %d, want 1008", code)
	}

	// a frame over MaxMessageSize: 1009
	c2 := f.mustDial("stream_id=s1")
	expectControl(t, c2, "subscribed", "")
	send(t, c2, `{"type":"ping","pad":"`+strings.Repeat("x", 2000)+`"}`)
	if code := expectClose(t, c2); code != websocket.CloseMessageTooBig {
		t.Fatalf("close %d, want 1009", code)
	}
}

func TestSlowClientDoesNotDelayOthers(t *testing.T) {
	const total = 20_000
	f := newFixture(t, ws.Config{
		// the fast client may lag by the whole burst meanwhile: MaxLag is
		// above it, and the slow one ends by the write deadline
		QueueBytes: 64 << 10, MaxLag: 2 * total, LagNotice: 500, WriteTimeout: time.Second,
	}, hub.StreamInfo{ID: "s1"})
	slow := f.mustDial("stream_id=s1") // never reads until the end
	fast := f.mustDial("stream_id=s1")
	expectControl(t, fast, "subscribed", "")

	start := time.Now()
	go func() {
		for range total / 100 {
			f.appendN("s1", 100, 1000)
		}
	}()
	readOffsets(t, fast, "s1", 1, total)
	el := time.Since(start)
	t.Logf("fast client got %d messages of 1 KB in %v", total, el)
	if el > 20*time.Second {
		t.Fatalf("fast client took %v", el)
	}

	// the slow client's server side gave up: it reads what its socket
	// holds, in order and without gaps, then the connection ends
	eventually(t, "slow client closed", func() bool { return f.srv.Connections() == 1 })
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
	case errors.Is(end, io.ErrUnexpectedEOF), errors.Is(end, net.ErrClosed):
	default:
		t.Fatalf("slow client ended with %v after offset %d", end, next-1)
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
	ml := memlog.New(memlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
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

func TestStopStream(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1,s2")
	expectControl(t, c, "subscribed", "")
	expectControl(t, c, "subscribed", "")
	f.streams.setState("s1", hub.StateStopped)
	f.appendN("s1", 1, 0) // wakes the pump; it is not delivered
	if got := expectControl(t, c, "error", "stream_stopped"); got.StreamID != "s1" {
		t.Fatalf("stopped %+v", got)
	}
	f.appendN("s2", 1, 0)
	readOffsets(t, c, "s2", 1, 1)
	f.streams.setState("s2", hub.StateStopped) // noticed within a second, without appends
	expectControl(t, c, "error", "stream_stopped")
	if code := expectClose(t, c); code != ws.CloseStreamStopped {
		t.Fatalf("close %d, want 4001", code)
	}
	eventually(t, "counters", func() bool { return f.counter.conns("s1") == 0 && f.counter.conns("s2") == 0 })

	// connecting to a stopped stream: upgraded, told, closed
	c2 := f.mustDial("stream_id=s1")
	expectControl(t, c2, "error", "stream_stopped")
	if code := expectClose(t, c2); code != ws.CloseStreamStopped {
		t.Fatalf("close %d, want 4001", code)
	}
}

func TestPause(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 1, 5)
	f.streams.setState("s1", hub.StatePaused)
	f.appendN("s1", 5, 0)
	expectSilence(t, c, 1500*time.Millisecond)
	f.streams.setState("s1", hub.StateActive)
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 6, 10)
}

func TestAckThenReconnect(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", AtLeastOnce: true}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1")
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 1 {
		t.Fatalf("subscribed at %d", got.Offset)
	}
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", 1, 10)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":6}`)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":4}`) // lower: kept at 6
	send(t, c, `{"type":"ack","stream_id":"nope","offset":4}`)
	expectControl(t, c, "error", "stream_not_found")
	_ = c.Close()
	eventually(t, "closed", func() bool { return f.srv.Connections() == 0 })

	c2 := f.mustDial("stream_id=s1")
	if got := expectControl(t, c2, "subscribed", ""); got.Offset != 7 {
		t.Fatalf("reconnected at %d, want 7", got.Offset)
	}
	readOffsets(t, c2, "s1", 7, 4)
	// last_offset wins over the ack
	c3 := f.mustDial("stream_id=s1&last_offset=8")
	if got := expectControl(t, c3, "subscribed", ""); got.Offset != 9 {
		t.Fatalf("subscribed at %d, want 9", got.Offset)
	}
}

func TestOffsetsExpired(t *testing.T) {
	f := newFixtureLog(t, ws.Config{}, newHistLog(100), hub.StreamInfo{ID: "s1"})
	f.appendN("s1", 300, 0)
	c := f.mustDial("stream_id=s1&last_offset=10")
	expectControl(t, c, "subscribed", "")
	if got := expectControl(t, c, "error", "offsets_expired"); got.FirstAvailable != 201 {
		t.Fatalf("first_available %d, want 201", got.FirstAvailable)
	}
	readOffsets(t, c, "s1", 201, 100)
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

func TestMemoryAcks(t *testing.T) {
	testAcks(t, ws.NewMemoryAcks(), "k")
}

// testAcks runs the Acks contract on a store, with keys of prefix k.
func testAcks(t *testing.T, a ws.Acks, k string) {
	t.Helper()
	ctx := context.Background()
	if _, ok, _ := a.Acked(ctx, k, "s"); ok {
		t.Fatal("acked before any ack")
	}
	for _, off := range []int64{5, 3, 9, 7} {
		if err := a.Ack(ctx, k, "s", ws.Position{Offset: off, Epoch: "e1"}); err != nil {
			t.Fatal(err)
		}
	}
	if p, ok, err := a.Acked(ctx, k, "s"); err != nil || !ok || p != (ws.Position{Offset: 9, Epoch: "e1"}) {
		t.Fatalf("acked %+v %v %v, want 9 of e1", p, ok, err)
	}
	if _, ok, _ := a.Acked(ctx, k+"2", "s"); ok {
		t.Fatal("another key shares the ack")
	}
	// an ack of another epoch replaces the stored one, even lower
	_ = a.Ack(ctx, k, "s", ws.Position{Offset: 2, Epoch: "e2"})
	if p, _, _ := a.Acked(ctx, k, "s"); p != (ws.Position{Offset: 2, Epoch: "e2"}) {
		t.Fatalf("acked %+v, want 2 of e2", p)
	}
	_ = a.Ack(ctx, k, "s", ws.Position{Offset: 1, Epoch: "e2"})
	if p, _, _ := a.Acked(ctx, k, "s"); p != (ws.Position{Offset: 2, Epoch: "e2"}) {
		t.Fatalf("acked %+v, want 2 of e2", p)
	}
}

// Frames of every header size, single and batched, JSON and msgpack,
// are framed correctly by the coalescing writer.
func TestFrameSizes(t *testing.T) {
	sizes := []int{0, 10, 200, 70_000, 300}
	for _, tc := range []struct {
		name  string
		info  hub.StreamInfo
		query string
	}{
		{"json", hub.StreamInfo{ID: "s1"}, ""},
		{"msgpack", hub.StreamInfo{ID: "s1"}, "&encoding=msgpack"},
		{"batch", hub.StreamInfo{ID: "s1", BatchEvents: true, BatchSize: 2, MaxWait: 10 * time.Millisecond}, ""},
		{"msgpack-batch", hub.StreamInfo{ID: "s1", BatchEvents: true, BatchSize: 20, MaxWait: 10 * time.Millisecond}, "&encoding=msgpack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, ws.Config{}, tc.info)
			c := f.mustDial("stream_id=s1" + tc.query)
			expectControl(t, c, "subscribed", "")
			for _, n := range sizes {
				if _, err := f.log.Append(context.Background(), "s1", [][]byte{message(n, n)}); err != nil {
					t.Fatal(err)
				}
			}
			var got [][]byte
			for len(got) < len(sizes) {
				fr, err := read(t, c, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case fr.typ == websocket.BinaryMessage && tc.info.BatchEvents:
					var arr []map[string]any
					if err := msgpack.Unmarshal(fr.raw, &arr); err != nil {
						t.Fatal(err)
					}
					for _, m := range arr {
						got = append(got, mustJSON(t, m["message"]))
					}
				case fr.typ == websocket.BinaryMessage:
					var m map[string]any
					if err := msgpack.Unmarshal(fr.raw, &m); err != nil {
						t.Fatal(err)
					}
					got = append(got, mustJSON(t, m["message"]))
				default:
					for _, w := range fr.msgs {
						got = append(got, w.Message)
					}
				}
			}
			for i, n := range sizes {
				var a, b any
				_ = json.Unmarshal(got[i], &a)
				_ = json.Unmarshal(message(n, n), &b)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("message %d (%d bytes) differs", i, n)
				}
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPingKeepsAlive(t *testing.T) {
	f := newFixture(t, ws.Config{PingInterval: 50 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}, hub.StreamInfo{ID: "s1"})
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

func TestPlainHTTPAndLimits(t *testing.T) {
	f := newFixture(t, ws.Config{MaxSubscriptions: 2},
		hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"}, hub.StreamInfo{ID: "s3"})
	resp, err := http.Get("http" + strings.TrimPrefix(f.url, "ws") + "?stream_id=s1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"invalid_request"`) || !strings.Contains(string(b), `"req-1"`) {
		t.Fatalf("plain GET: %d %s", resp.StatusCode, b)
	}
	if _, resp, err := f.dial("stream_id=s1,s2,s3", false); err == nil || resp.StatusCode != 400 {
		t.Fatalf("three streams over the limit: %v", err)
	}
	c := f.mustDial("stream_id=s1,s2")
	expectControl(t, c, "subscribed", "")
	expectControl(t, c, "subscribed", "")
	send(t, c, `{"type":"subscribe","stream_id":"s3"}`)
	expectControl(t, c, "error", "too_many_subscriptions")
	send(t, c, `{"type":"resume","stream_id":"s2","last_offset":0}`) // a move is not a new subscription
	expectControl(t, c, "subscribed", "")
}
