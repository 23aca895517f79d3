package webhook_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

func BenchmarkSign(b *testing.B) {
	body := bytes.Repeat([]byte(`{"stream_id":"estr_0123456789","offset":123456,"message":{"event_id":"e"}}`), 7)[:500]
	k1, k2 := make([]byte, 24), make([]byte, 24)
	rand.Read(k1)
	rand.Read(k2)
	for _, c := range []struct {
		name string
		keys [][]byte
	}{{"OneSecret", [][]byte{k1}}, {"RotationOverlap", [][]byte{k1, k2}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_ = webhook.Sign(c.keys, "msg_2KWPBgLlAfxdpx2AI54pPJ", 1767225600, body)
			}
		})
	}
}

// offsetOf finds the offset in a single payload without decoding it.
func offsetOf(body []byte) int64 {
	i := bytes.Index(body, []byte(`"offset":`))
	if i < 0 {
		return -1
	}
	j := i + len(`"offset":`)
	k := j
	for k < len(body) && body[k] >= '0' && body[k] <= '9' {
		k++
	}
	n, _ := strconv.ParseInt(string(body[j:k]), 10, 64)
	return n
}

// dispatchBench accepts b.N messages for one stream against a local
// receiver (net/http, in this process: its cost is in the figure) and
// reports deliveries/s and the accept-to-receipt latency (match to send:
// the pipeline calls Accept right after the match). rate 0 accepts as
// fast as possible in batches of 100 (throughput); otherwise batches of
// 10 are paced to rate messages/s (latency). With dead, a second
// stream's receiver never answers and gets as many messages; with
// "healthy", it answers at once (the cost of a neighbour as such).
func dispatchBench(b *testing.B, neighbour string, rate float64) {
	batch := 100
	if rate > 0 {
		batch = 10
	}
	st := openSQLite(b, b.TempDir())
	f := newFixture(b, st)
	var got atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	sent := make([]time.Time, b.N+batch+1)
	done := make(chan struct{})
	total := int64(b.N)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [512]byte
		n, _ := r.Body.Read(buf[:])
		off := offsetOf(buf[:n])
		now := time.Now()
		w.WriteHeader(http.StatusNoContent)
		if off > 0 && off < int64(len(sent)) {
			mu.Lock()
			lats = append(lats, now.Sub(sent[off]))
			mu.Unlock()
		}
		if got.Add(1) == total {
			close(done)
		}
	}))
	b.Cleanup(rc.Close)
	info := f.stream(rc.URL)
	var other hub.StreamInfo
	switch neighbour {
	case "dead":
		other = f.stream(hungReceiver(b).URL)
	case "healthy":
		hr := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		b.Cleanup(hr.Close)
		other = f.stream(hr.URL)
	}
	cfg := webhook.Config{AllowPrivate: true, Concurrency: 16, Timeout: 30 * time.Second}
	d := f.start(cfg)
	es := entries(1, b.N+batch)
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(batch) / rate * float64(time.Second))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	next := start
	for i := 0; i < b.N; i += batch {
		if interval > 0 {
			time.Sleep(time.Until(next)) // real time: load is offered at a fixed rate
			next = next.Add(interval)
		}
		part := es[i:min(i+batch, b.N)]
		now := time.Now()
		mu.Lock()
		for _, e := range part {
			sent[e.Offset] = now
		}
		mu.Unlock()
		// as the pipeline does: one call for the webhook streams a bus
		// batch matched
		infos, parts := []hub.StreamInfo{info}, [][]hub.Entry{part}
		if other.ID != "" {
			infos, parts = append(infos, other), append(parts, part)
		}
		if err := d.AcceptMany(context.Background(), infos, parts); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("%d of %d delivered", got.Load(), b.N)
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "deliveries/s")
	mu.Lock()
	slices.Sort(lats)
	if len(lats) > 0 {
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
	}
	mu.Unlock()
}

// BenchmarkDispatch: signed deliveries to a healthy local receiver, as
// fast as they are accepted (Neighbour: with a second stream getting as
// many messages, its receiver healthy or dead).
func BenchmarkDispatch(b *testing.B) {
	for _, c := range []struct {
		name, neighbour string
		rate            float64
	}{
		{"Alone", "", 0}, {"HealthyNeighbour", "healthy", 0}, {"DeadNeighbour", "dead", 0},
		// 5,000 messages/s in batches of 10: the match-to-send latency of
		// a receiver that keeps up
		{"Paced/Alone", "", 5000}, {"Paced/HealthyNeighbour", "healthy", 5000}, {"Paced/DeadNeighbour", "dead", 5000},
	} {
		b.Run(c.name, func(b *testing.B) { dispatchBench(b, c.neighbour, c.rate) })
	}
}

// BenchmarkQueue: the store side of one delivery on SQLite: enqueue in
// batches of 100 (leased, as Accept does) and record the outcomes in
// batches of 100, under the webhook-ids Accept gives (Ordered) and under
// ids of the same length that are a hash alone (Hash), which land at
// random places in the log's unique index. The difference grows with
// the log: run it with -benchtime 300000x or more to see it.
func BenchmarkQueue(b *testing.B) {
	for _, c := range []struct {
		name string
		id   func(offset int64, p []byte) string
	}{
		{"Ordered", webhook.DeliveryID},
		{"Hash", func(_ int64, p []byte) string {
			sum := sha256.Sum256(p)
			return "msg_" + base64.RawURLEncoding.EncodeToString(sum[:24])[:30]
		}},
	} {
		b.Run(c.name, func(b *testing.B) { queueBench(b, c.id) })
	}
}

func queueBench(b *testing.B, id func(int64, []byte) string) {
	st := openSQLite(b, b.TempDir())
	now := time.Now()
	es := entries(1, b.N+100)
	big := bytes.Repeat([]byte("x"), 560) // an event's JSON is about this long
	for i := range es {
		es[i].Data = fmt.Appendf(nil, `{"event_id":"ev-%d","pad":"%s"}`, es[i].Offset, big)
	}
	var tEnq, tRec time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 100 {
		part := es[i:min(i+100, b.N)]
		ds := make([]store.Delivery, len(part))
		for j, e := range part {
			ds[j] = store.Delivery{ID: id(e.Offset, e.Data), Org: "o", Env: "e", StreamID: "s", Offset: e.Offset, Payload: e.Data,
				NextAttemptAt: now, QueuedAt: now, CreatedAt: now, LeaseOwner: "n", LeaseUntil: now.Add(time.Minute)}
		}
		t0 := time.Now()
		ins, err := st.EnqueueDeliveries(context.Background(), ds)
		tEnq += time.Since(t0)
		if err != nil || len(ins) != len(ds) {
			b.Fatal(err)
		}
		rs := make([]store.DeliveryResult, len(ins))
		for j, x := range ins {
			rs[j] = store.DeliveryResult{ID: x.ID, Seq: x.Seq, Status: store.DeliveryDelivered, Attempted: true, StatusCode: 204, At: now}
		}
		t1 := time.Now()
		if err := st.RecordDeliveries(context.Background(), "n", rs); err != nil {
			b.Fatal(err)
		}
		tRec += time.Since(t1)
	}
	b.ReportMetric(float64(tEnq.Nanoseconds())/float64(b.N), "enqueue-ns/op")
	b.ReportMetric(float64(tRec.Nanoseconds())/float64(b.N), "record-ns/op")
}
