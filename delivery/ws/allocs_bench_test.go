package ws_test

import (
	"bufio"
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
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

// BenchmarkDeliveryStep is the case rather than a burst: one
// message appended at a time, the next once every subscriber has read
// it, so each append wakes the stream's pumps and each delivery is a
// write of its own.
func BenchmarkDeliveryStep_100Subs(b *testing.B) {
	benchDeliveryAllocs(b, 100, hub.StreamInfo{}, stepwise)
}

// Compressed (permessage-deflate) and batched (frames of 10) likewise.
func BenchmarkDeliveryAllocsDeflate_100Subs(b *testing.B) {
	benchDeliveryAllocs(b, 100, hub.StreamInfo{Compression: true})
}
func BenchmarkDeliveryAllocsBatch10_100Subs(b *testing.B) {
	benchDeliveryAllocs(b, 100, hub.StreamInfo{BatchEvents: true, BatchSize: 10, MaxWait: time.Minute})
}

// stepwise makes benchDeliveryAllocs append one message at a time.
const stepwise = true

func benchDeliveryAllocs(b *testing.B, subs int, info hub.StreamInfo, step ...bool) {
	info.ID = "s1"
	per := 1
	if info.BatchEvents {
		per = info.BatchSize
	}
	log := embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
	b.Cleanup(func() { _ = log.Close() })
	f := newFixtureLog(b, ws.Config{MaxLag: 1 << 40, LagNotice: 1 << 40}, log, info, hub.StreamInfo{ID: "idle"})
	var frames atomic.Int64 // data frames read by all clients
	// the readers tell when frames reach wantFrames; stepwise waits for it
	// rather than spinning, which would take a core from the server
	var wantFrames atomic.Int64
	wantFrames.Store(1 << 62)
	reached := make(chan struct{}, 1)
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
			r := bufio.NewReaderSize(c.NetConn(), 64<<10)
			for skipFrame(r, &frames) {
				if frames.Load() >= wantFrames.Load() {
					select {
					case reached <- struct{}{}:
					default:
					}
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
	cpu := cpuTime(b)
	total := mallocs(func() {
		if len(step) == 0 {
			deliver(n)
			return
		}
		for range n / per {
			appendN("s1", per)
			sent++
			want := sent * int64(subs)
			wantFrames.Store(want)
			for frames.Load() < want {
				<-reached
			}
		}
	})
	cpu = cpuTime(b) - cpu
	b.StopTimer()
	extra := float64(total) - float64(appendOnly)
	b.ReportMetric(extra/float64(n*subs), "allocs/delivery")
	b.ReportMetric(float64(cpu)/float64(n*subs), "cpu-ns/delivery")
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

// skipFrame reads one frame, counting it when it is a data frame; false
// when the connection ended.
func skipFrame(r *bufio.Reader, frames *atomic.Int64) bool {
	h0, err := r.ReadByte()
	if err != nil {
		return false
	}
	h1, err := r.ReadByte()
	if err != nil {
		return false
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
				return false
			}
			n = n<<8 | int(c)
		}
	}
	if _, err := r.Discard(n); err != nil {
		return false
	}
	if op := h0 & 0x0f; op == websocket.TextMessage || op == websocket.BinaryMessage {
		frames.Add(1)
	}
	return true
}

// BenchmarkPublish_1000Streams is the per-publish path of the fan-out:
// 1,000 streams, one subscriber each (raw-socket clients that allocate
// nothing), single-message appends by 8 publishers, each waiting for its
// message to reach the client before the next: every publish wakes its
// stream's pump on its own, as at a rate the server keeps up with (the
// issue's 5,000 publishes/s over 1,000 streams). An op is one publish
// delivered; cpu-ns/publish is the process's CPU time (log append, pump
// wake, frame, write, and the clients' reads); log-calls and lookups are
// the pumps' calls of the log and of the stream registry per publish.
func BenchmarkPublish_1000Streams(b *testing.B) {
	const streams, publishers = 1000, 8
	infos := make([]hub.StreamInfo, streams)
	ids := make([]string, streams)
	for i := range infos {
		ids[i] = "s" + strconv.Itoa(i)
		infos[i] = hub.StreamInfo{ID: ids[i]}
	}
	mem := embedlog.New(embedlog.Config{MemBytes: 1 << 30, StreamMemBytes: 1 << 30})
	b.Cleanup(func() { _ = mem.Close() })
	log := &countingLog{Log: mem}
	f := newFixtureLog(b, ws.Config{MaxLag: 1 << 40, LagNotice: 1 << 40}, log, infos...)
	var readers sync.WaitGroup
	conns := make([]*websocket.Conn, streams)
	got := make([]chan struct{}, streams) // a frame reached client i
	for i := range conns {
		d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
		c, _, err := d.Dial(f.url+"?stream_id="+ids[i], nil)
		if err != nil {
			b.Fatal(err)
		}
		conns[i] = c
		if _, _, err := c.ReadMessage(); err != nil {
			b.Fatal(err)
		}
		got[i] = make(chan struct{}, 1)
		readers.Add(1)
		go func() {
			defer readers.Done()
			var frames atomic.Int64
			r := bufio.NewReaderSize(c.NetConn(), 4<<10)
			for skipFrame(r, &frames) {
				if frames.Swap(0) > 0 {
					got[i] <- struct{}{}
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
	msg := [][]byte{message(0, 400)}
	publish := func(n int) {
		var wg sync.WaitGroup
		for p := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				timeout := time.NewTimer(time.Hour)
				defer timeout.Stop()
				for i := p; i < n; i += publishers {
					s := i % streams
					if _, err := f.log.Append(context.Background(), ids[s], msg); err != nil {
						b.Error(err)
						return
					}
					timeout.Reset(time.Minute)
					select {
					case <-got[s]:
					case <-timeout.C:
						b.Errorf("stream %s: nothing delivered", ids[s])
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	publish(2 * streams) // warm up
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	reads, lookups := log.calls.Load(), f.streams.lookups.Load()
	publish(b.N)
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/publish")
	b.ReportMetric(float64(log.calls.Load()-reads)/float64(b.N), "log-calls/publish")
	b.ReportMetric(float64(f.streams.lookups.Load()-lookups)/float64(b.N), "lookups/publish")
	// then every subscriber waits with nothing to deliver: what the
	// 1,000 waiting streams cost by themselves, per second
	b.StopTimer()
	cpu, switches := cpuTime(b), threadSwitches(b)
	time.Sleep(idleFor)
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(time.Microsecond)/idleFor.Seconds(), "idle-cpu-µs/s")
	b.ReportMetric(float64(threadSwitches(b)-switches)/idleFor.Seconds(), "idle-switches/s")
}

// idleFor is how long BenchmarkPublish_1000Streams measures its waiting
// subscribers.
const idleFor = 3 * time.Second

// threadSwitches is how many times the process's threads gave up their
// processor so far (voluntary and involuntary context switches).
func threadSwitches(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Nvcsw + ru.Nivcsw
}

// cpuTime is the CPU time the process used so far (user and system, all
// threads): the benchmarks report CPU per publish, which a loaded
// machine distorts less than elapsed time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingLog counts the pumps' calls of the log (Read, Last, Epoch,
// Wait): what a publish costs the delivery side besides the write,
// independent of the machine's load.
type countingLog struct {
	hub.Log
	calls atomic.Int64
}

func (l *countingLog) Read(ctx context.Context, id string, from int64, max int) ([]hub.Entry, error) {
	l.calls.Add(1)
	return l.Log.Read(ctx, id, from, max)
}

func (l *countingLog) Last(ctx context.Context, id string) (int64, error) {
	l.calls.Add(1)
	return l.Log.Last(ctx, id)
}

func (l *countingLog) Epoch(ctx context.Context, id string) (string, error) {
	l.calls.Add(1)
	return l.Log.Epoch(ctx, id)
}

func (l *countingLog) Wait(id string, from int64) <-chan struct{} {
	l.calls.Add(1)
	return l.Log.Wait(id, from)
}
