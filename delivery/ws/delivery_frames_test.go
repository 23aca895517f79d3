package ws_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

func TestBatchEvents(t *testing.T) {
	const maxWait = 300 * time.Millisecond
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", BatchEvents: true, BatchSize: 10, MaxWait: maxWait})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
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
	// the partial batch of 5 came on its own: nothing was appended after
	// the 25th message, so MaxWait, not a later message, sent it
	if !reflect.DeepEqual(sizes, []int{10, 10, 5}) {
		t.Fatalf("batch sizes %v, want [10 10 5]", sizes)
	}
	// messages appended one at a time within MaxWait are held and sent
	// together, in one frame, although the batch never fills
	for range 3 {
		f.appendN("s1", 1, 0)
	}
	fr, err := read(t, c, 5*time.Second)
	if err != nil || !fr.batch || len(fr.msgs) != 3 || fr.msgs[0].Offset != 26 || fr.msgs[2].Offset != 28 {
		t.Fatalf("got %s, %v; want offsets 26..28 in one batch", fr.raw, err)
	}
	eventually(t, "delivered counter", func() bool { return f.counter.get("s1", "delivered") == 28 })
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
