package feed

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// countConn counts the entries written to it and drops them.
type countConn struct {
	net.Conn
	entries atomic.Int64
}

var dataLine = []byte("\ndata: ")

func (c *countConn) Write(b []byte) (int, error) {
	c.entries.Add(int64(bytes.Count(b, dataLine)))
	return len(b), nil
}
func (c *countConn) SetWriteDeadline(time.Time) error { return nil }
func (c *countConn) Close() error                     { return nil }

func BenchmarkTail_1000Clients(b *testing.B) { benchmarkTail(b, 1000) }
func BenchmarkTail_100Clients(b *testing.B)  { benchmarkTail(b, 100) }

// benchmarkTail: clients event streams of one filter follow the head
// while events are published in batches of 50; the connections only count
// what they are written, so the figures are the server side's: the bus
// append, the tail's read, filter and encoding, and each client's copy and
// write. allocs/delivery and ns/delivery are per entry and client.
func benchmarkTail(b *testing.B, clients int) {
	ctx := context.Background()
	bus := embedbus.New(embedbus.Config{Partitions: 8})
	h := New(Config{Heartbeat: time.Hour}, feed.New(bus), nil, nil)
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := h.Shutdown(sctx); err != nil {
			b.Error(err)
		}
		bus.Close(ctx)
	}()
	args := map[string][]string{"severity": {"high"}}
	q, _, err := parseParams("org-a", "test", args, readEvents)
	if err != nil {
		b.Fatal(err)
	}
	q.After = "now"
	pos, err := h.feed.Start(ctx, &q)
	if err != nil {
		b.Fatal(err)
	}
	conns := make([]*countConn, clients)
	for i := range conns {
		if !h.begin() {
			b.Fatal("shut down")
		}
		conns[i] = &countConn{}
		cl := h.newClient(ctx, nil, q, tailKey(q, args), pos.Cursor(q.Topics), true)
		cl.conn = conns[i]
		go cl.run()
	}
	joined := waitfor.Poll(10*time.Second, func() bool {
		h.tmu.Lock()
		defer h.tmu.Unlock()
		for _, t := range h.tails {
			t.mu.Lock()
			defer t.mu.Unlock()
			return len(t.clients) == clients
		}
		return false
	})
	if !joined {
		b.Fatal("the clients did not join one tail")
	}
	const batch = 50
	msgs := make([]hub.Message, batch)
	for i := range msgs {
		v := fmt.Sprintf("v%d", i)
		ev := &event.Event{EventID: fmt.Sprintf("e%d", i), EventType: "harsh_braking", Category: "safety_events", Severity: "high", Priority: "high",
			Source: event.Source{VehicleID: v, TripID: "t-" + v}, EventData: map[string]any{"speed_kmh": 72.5, "decel_g": 0.48}}
		raw, err := event.Marshal(&event.Envelope{Org: "org-a", Env: "test", Kind: event.KindEvent, Event: ev})
		if err != nil {
			b.Fatal(err)
		}
		msgs[i] = hub.Message{Topic: hub.TopicEvents, Key: []byte(v), Value: raw}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime(b)
	for sent := 0; sent < b.N; {
		n := min(batch, b.N-sent)
		for _, m := range msgs[:n] {
			if err := bus.Publish(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		sent += n
		for _, c := range conns {
			for c.entries.Load() < int64(sent) {
				runtime.Gosched()
			}
		}
	}
	el, cpu := time.Since(start), cpuTime(b)-cpu
	b.StopTimer()
	runtime.ReadMemStats(&after)
	deliveries := float64(b.N) * float64(clients)
	b.ReportMetric(float64(el.Nanoseconds())/deliveries, "ns/delivery")
	b.ReportMetric(float64(cpu.Nanoseconds())/deliveries, "cpu-ns/delivery")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/deliveries, "allocs/delivery")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/event")
}

// cpuTime is the process's CPU time so far (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
