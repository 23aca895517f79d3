package ws_test

import (
	"bufio"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
)

// BenchmarkDeliveryAllocs counts the server's heap allocations per
// delivery at steady state: N subscribers of one stream, one message per
// append and per frame. The clients read the raw socket and skip frames
// by their headers, so they allocate nothing; the appends' own
// allocations are measured on a stream nobody follows and taken off.
// allocs/delivery is what one more subscriber costs per message;
// allocs/publish is everything the delivery side allocates per appended
// message (the stream's shared frame included), for all N together.
func BenchmarkDeliveryAllocs_1Subs(b *testing.B)    { benchDeliveryAllocs(b, 1, hub.StreamInfo{}) }
func BenchmarkDeliveryAllocs_100Subs(b *testing.B)  { benchDeliveryAllocs(b, 100, hub.StreamInfo{}) }
func BenchmarkDeliveryAllocs_1000Subs(b *testing.B) { benchDeliveryAllocs(b, 1000, hub.StreamInfo{}) }

// Compressed (permessage-deflate) and batched (frames of 10) likewise.
func BenchmarkDeliveryAllocsDeflate_100Subs(b *testing.B) {
	benchDeliveryAllocs(b, 100, hub.StreamInfo{Compression: true})
}
func BenchmarkDeliveryAllocsBatch10_100Subs(b *testing.B) {
	benchDeliveryAllocs(b, 100, hub.StreamInfo{BatchEvents: true, BatchSize: 10, MaxWait: time.Minute})
}

func benchDeliveryAllocs(b *testing.B, subs int, info hub.StreamInfo) {
	info.ID = "s1"
	per := 1
	if info.BatchEvents {
		per = info.BatchSize
	}
	log := embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
	b.Cleanup(func() { _ = log.Close() })
	f := newFixtureLog(b, ws.Config{MaxLag: 1 << 40, LagNotice: 1 << 40}, log, info, hub.StreamInfo{ID: "idle"})
	var frames atomic.Int64 // data frames read by all clients
	var readers sync.WaitGroup
	conns := make([]*websocket.Conn, subs)
	for i := range conns {
		d := websocket.Dialer{EnableCompression: info.Compression, HandshakeTimeout: 10 * time.Second}
		c, _, err := d.Dial(f.url+"?stream_id=s1", nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		if _, _, err := c.ReadMessage(); err != nil { // subscribed; nothing follows until an append
			b.Fatal(err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			skipFrames(bufio.NewReaderSize(c.NetConn(), 64<<10), &frames)
		}()
	}
	b.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
		readers.Wait()
	})
	msg := [][]byte{message(0, 400)}
	appendN := func(id string, n int) {
		for range n {
			if _, err := f.log.Append(context.Background(), id, msg); err != nil {
				b.Fatal(err)
			}
		}
	}
	var sent int64 // frames every client gets
	deliver := func(n int) {
		appendN("s1", n)
		sent += int64(n / per)
		want := sent * int64(subs)
		deadline := time.Now().Add(5 * time.Minute)
		for frames.Load() < want {
			if time.Now().After(deadline) {
				b.Fatalf("read %d frames of %d", frames.Load(), want)
			}
			runtime.Gosched()
		}
	}
	n := max(b.N-b.N%per, per)
	deliver(2000) // warm up: queues, buffers and pools at their steady size
	appendOnly := mallocs(func() { appendN("idle", n) })

	b.ReportAllocs()
	b.ResetTimer()
	total := mallocs(func() { deliver(n) })
	b.StopTimer()
	extra := float64(total) - float64(appendOnly)
	b.ReportMetric(extra/float64(n*subs), "allocs/delivery")
	b.ReportMetric(extra/float64(n), "allocs/publish")
}

// mallocs counts the heap allocations of the process while fn runs.
func mallocs(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// skipFrames reads server frames (unmasked) off the socket, counting the
// data frames, without allocating, until the connection ends.
func skipFrames(r *bufio.Reader, frames *atomic.Int64) {
	for {
		h0, err := r.ReadByte()
		if err != nil {
			return
		}
		h1, err := r.ReadByte()
		if err != nil {
			return
		}
		n := int(h1 & 0x7f)
		if n >= 126 {
			k := 2
			if n == 127 {
				k = 8
			}
			n = 0
			for range k {
				c, err := r.ReadByte()
				if err != nil {
					return
				}
				n = n<<8 | int(c)
			}
		}
		if _, err := r.Discard(n); err != nil {
			return
		}
		if op := h0 & 0x0f; op == websocket.TextMessage || op == websocket.BinaryMessage {
			frames.Add(1)
		}
	}
}
