package ws_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
)

// The fan-out benchmarks: one stream, N real websocket clients on
// loopback (in this process, so the figures include the clients' work),
// b.N messages of about 400 bytes appended in chunks of 100. An op is one
// appended message delivered to every client; msgs/s counts deliveries.
func BenchmarkFanout_1Subs(b *testing.B)    { benchFanout(b, 1, fanoutOpts{}) }
func BenchmarkFanout_100Subs(b *testing.B)  { benchFanout(b, 100, fanoutOpts{}) }
func BenchmarkFanout_1000Subs(b *testing.B) { benchFanout(b, 1000, fanoutOpts{}) }

// Without the shared frame cache: every subscription wraps every entry.
func BenchmarkFanoutUncached_100Subs(b *testing.B) {
	benchFanout(b, 100, fanoutOpts{noCache: true})
}
func BenchmarkFanoutUncached_1000Subs(b *testing.B) {
	benchFanout(b, 1000, fanoutOpts{noCache: true})
}

// With permessage-deflate: each entry is compressed once (PreparedMessage).
func BenchmarkFanoutDeflate_100Subs(b *testing.B) {
	benchFanout(b, 100, fanoutOpts{deflate: true})
}
func BenchmarkFanoutDeflateUncached_100Subs(b *testing.B) {
	benchFanout(b, 100, fanoutOpts{deflate: true, noCache: true})
}

// msgpack and batches of 50.
func BenchmarkFanoutMsgpack_100Subs(b *testing.B) {
	benchFanout(b, 100, fanoutOpts{msgpack: true})
}
func BenchmarkFanoutBatch50_100Subs(b *testing.B) {
	benchFanout(b, 100, fanoutOpts{batch: 50})
}

type fanoutOpts struct {
	noCache, deflate, msgpack bool
	batch                     int
}

func benchFanout(b *testing.B, subs int, o fanoutOpts) {
	info := hub.StreamInfo{ID: "s1", Compression: o.deflate}
	if o.batch > 0 {
		info.BatchEvents, info.BatchSize, info.MaxWait = true, o.batch, 5*time.Millisecond
	}
	f := newFixtureLog(b, ws.Config{MaxLag: 1 << 40, LagNotice: 1 << 40}, embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30}), info)
	if o.noCache {
		ws.DisableFrameCache(f.srv)
	}
	query := "stream_id=s1"
	if o.msgpack {
		query += "&encoding=msgpack"
	}
	var (
		delivered atomic.Int64
		want      atomic.Int64
		done      = make(chan struct{})
		doneOnce  sync.Once
		readers   sync.WaitGroup
	)
	want.Store(1 << 62)
	conns := make([]*websocket.Conn, subs)
	for i := range conns {
		d := websocket.Dialer{EnableCompression: o.deflate, HandshakeTimeout: 10 * time.Second}
		c, _, err := d.Dial(f.url+"?"+query, nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		if _, _, err := c.ReadMessage(); err != nil { // subscribed
			b.Fatal(err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				_, r, err := c.NextReader()
				if err != nil {
					return
				}
				// no control frames come after subscribed: the log keeps
				// everything and no lag is reported
				n := int64(1)
				if o.batch > 0 {
					n = countBatch(r)
				} else {
					_, _ = io.Copy(io.Discard, r)
				}
				if delivered.Add(n) >= want.Load() {
					doneOnce.Do(func() { close(done) })
				}
			}
		}()
	}
	b.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
		readers.Wait()
	})
	msg := message(0, 400)
	chunk := make([][]byte, 100)
	for i := range chunk {
		chunk[i] = msg
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	want.Store(int64(subs) * int64(b.N))
	if delivered.Load() >= want.Load() {
		doneOnce.Do(func() { close(done) })
	}
	for left := b.N; left > 0; left -= len(chunk) {
		if _, err := f.log.Append(context.Background(), "s1", chunk[:min(left, len(chunk))]); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		b.Fatalf("delivered %d of %d", delivered.Load(), want.Load())
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(want.Load())/el.Seconds(), "msgs/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(want.Load()), "ns/delivery")
}

// countBatch counts the wrappers of a JSON batch frame by its top-level
// objects, without decoding.
func countBatch(r io.Reader) int64 {
	var buf [4096]byte
	var n int64
	depth, inStr, esc := 0, false, false
	for {
		k, err := r.Read(buf[:])
		for _, c := range buf[:k] {
			switch {
			case esc:
				esc = false
			case inStr:
				if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
			case c == '"':
				inStr = true
			case c == '{':
				if depth == 1 {
					n++
				}
				depth++
			case c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
			}
		}
		if err != nil {
			return n
		}
	}
}
