package ws_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

// The frames of a stream are built once and shared by its subscribers:
// whether a subscriber negotiated compression or not, follows the head
// or resumes from an old offset, it receives (after decompression) the
// very bytes a lone subscriber of the same stream gets.
func TestSharedFramesIdentical(t *testing.T) {
	const n = 24 // a multiple of the batch size: batches are cut by size
	for _, tc := range []struct {
		name  string
		info  hub.StreamInfo
		query string
		per   int // messages per frame
	}{
		{"json", hub.StreamInfo{ID: "s1", Compression: true}, "", 1},
		{"msgpack", hub.StreamInfo{ID: "s1", Compression: true}, "&encoding=msgpack", 1},
		{"batch", hub.StreamInfo{ID: "s1", Compression: true, BatchEvents: true, BatchSize: 4, MaxWait: time.Minute}, "", 4},
		{"msgpack-batch", hub.StreamInfo{ID: "s1", Compression: true, BatchEvents: true, BatchSize: 4, MaxWait: time.Minute}, "&encoding=msgpack", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := n / tc.per
			// what a lone subscriber of the stream gets
			lone := newFixture(t, ws.Config{}, tc.info)
			ref := dialSubscribed(t, lone, "stream_id=s1"+tc.query, false)
			lone.appendN("s1", n, 600)
			want := dataFrames(t, ref, frames)

			f := newFixture(t, ws.Config{}, tc.info)
			zipped := dialSubscribed(t, f, "stream_id=s1"+tc.query, true)
			plain := dialSubscribed(t, f, "stream_id=s1"+tc.query, false)
			f.appendN("s1", n, 600)
			for name, c := range map[string]*client{"compressed": zipped, "uncompressed": plain} {
				sameFrames(t, name, dataFrames(t, c, frames), want)
			}
			// subscribers resuming from old offsets, while the live ones
			// still follow the stream, read the same frames again
			from := tc.per // resumes after the first frame's messages
			old := dialSubscribed(t, f, fmt.Sprintf("stream_id=s1&last_offset=0%s", tc.query), true)
			mid := dialSubscribed(t, f, fmt.Sprintf("stream_id=s1&last_offset=%d%s", from, tc.query), false)
			sameFrames(t, "resumed compressed", dataFrames(t, old, frames), want)
			sameFrames(t, "resumed uncompressed", dataFrames(t, mid, frames-1), want[1:])
		})
	}
}

// dialSubscribed connects and waits for the subscribed notice; compress
// offers permessage-deflate, which the stream accepts.
func dialSubscribed(t *testing.T, f *fixture, query string, compress bool) *client {
	t.Helper()
	c, resp, err := f.dial(query, compress)
	if err != nil {
		t.Fatalf("dial %s: %v", query, err)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); compress != strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q with compression offered %v", ext, compress)
	}
	expectControl(t, c, "subscribed", "")
	return c
}

// dataFrames reads n data frames (as the client's websocket library
// hands them over, decompressed) and fails on anything else.
func dataFrames(t *testing.T, c *client, n int) [][]byte {
	t.Helper()
	out := make([][]byte, 0, n)
	for len(out) < n {
		fr, err := read(t, c, 5*time.Second)
		if err != nil {
			t.Fatalf("frame %d of %d: %v", len(out)+1, n, err)
		}
		if fr.ctl != nil {
			t.Fatalf("frame %d of %d: got %s", len(out)+1, n, fr.raw)
		}
		out = append(out, fr.raw)
	}
	return out
}

func sameFrames(t *testing.T, name string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: frame %d differs from the lone subscriber's:\n%.200q\nwant\n%.200q", name, i, got[i], want[i])
		}
	}
}
