package ws_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
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
		{"stream_id=s1&last_offset=%2B5", 400, "invalid_request"},
		{"stream_id=s1&last_offset=05", 400, "invalid_request"},
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
		`{"type":"ping","bogus":1}`, `{"type":"unsubscribe","stream_id":"s2","bogus":true}`,
	} {
		send(t, c, bad)
		got := expectControl(t, c, "error", "invalid_frame")
		if got.Message == "" {
			t.Fatalf("%s: no message", bad)
		}
		if strings.Contains(bad, "bogus") && !strings.Contains(got.Message, "bogus") {
			t.Fatalf("%s: message %q does not name the key", bad, got.Message)
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

// A key its frame type does not take is refused naming it, never
// ignored: a subscribe with an offset does not quietly start elsewhere,
// an ack's last_offset stores nothing. A field of the wrong type is
// named with the type it must be. A key given twice is refused naming
// it, as in every request body.
func TestFrameKeysOfTheirType(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	for _, tc := range []struct{ frame, names string }{
		{`{"type":"ping","stream_id":"s1"}`, `"stream_id"`},
		{`{"type":"ping","offset":3}`, `"offset"`},
		{`{"type":"ack","stream_id":"s1","offset":0,"last_offset":7}`, `"last_offset"`},
		{`{"type":"resume","stream_id":"s1","last_offset":0,"offset":9}`, `"offset"`},
		{`{"type":"subscribe","stream_id":"s2","offset":4}`, `"offset"`},
		{`{"type":"unsubscribe","stream_id":"s1","epoch":"e1"}`, `"epoch"`},
		{`{"type":"unsubscribe_feed","after":"now"}`, `"after"`},
		{`{"type":"ack","stream_id":"s1","offset":"1"}`, "offset must be an integer"},
		{`{"type":"resume","stream_id":5,"last_offset":0}`, "stream_id must be a string"},
		{`{"type":"ack","stream_id":"s1","offset":1.5}`, "offset must be an integer"},
		// a repeated key is refused, not read as its last value: this
		// resume would otherwise move s1, this subscribe follow s2
		{`{"type":"resume","stream_id":"s1","last_offset":0,"last_offset":5}`, "last_offset is repeated"},
		{`{"type":"subscribe","stream_id":"s1","stream_id":"s2"}`, "stream_id is repeated"},
		{`{"type":"ping","type":"subscribe_feed"}`, "type is repeated"},
		{`{"type":"subscribe_feed","vehicle_id":"v1","vehicle_id":"v2"}`, "vehicle_id is repeated"},
	} {
		send(t, c, tc.frame)
		got := expectControl(t, c, "error", "invalid_frame")
		if !strings.Contains(got.Message, tc.names) || strings.Contains(got.Message, "Go struct") {
			t.Errorf("%s: message %q, want it to name %s", tc.frame, got.Message, tc.names)
		}
		send(t, c, `{"type":"ping"}`) // more than ten refusals in a row would close
		expectControl(t, c, "pong", "")
	}
	// nothing was acted on: s1 is still followed from its start, s2 not
	f.appendN("s1", 1, 0)
	f.appendN("s2", 1, 0)
	readOffsets(t, c, "s1", 1, 1)
	send(t, c, `{"type":"ping"}`)
	expectControl(t, c, "pong", "")
}
