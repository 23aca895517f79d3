package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// badKinds are the receivers a healthy one is measured beside: one that
// refuses connections, one that answers after a second, one that fails
// every other request with a 500, one that accepts and never answers,
// and one that answers 410 Gone.
var badKinds = []string{"dead", "slow", "flaky", "blackhole", "gone"}

// badReceiver starts a receiver of kind and returns its URL.
func badReceiver(tb testing.TB, kind string) string {
	switch kind {
	case "dead":
		rc := newReceiver(tb, nil)
		rc.Close()
		return rc.URL
	case "slow":
		return newReceiver(tb, func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(time.Second): // real time: a slow receiver
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
		}).URL
	case "flaky":
		return newReceiver(tb, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n%2 == 0 {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}).URL
	case "blackhole":
		return hungReceiver(tb).URL
	case "gone":
		return newReceiver(tb, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }).URL
	}
	tb.Fatalf("unknown receiver kind %q", kind)
	return ""
}

// countingReceiver answers 204 at once and counts requests.
func countingReceiver(tb testing.TB, got *atomic.Int64, done chan struct{}, total int64) string {
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [512]byte
		for {
			if _, err := r.Body.Read(buf[:]); err != nil {
				break
			}
		}
		w.WriteHeader(http.StatusNoContent)
		if got.Add(1) == total {
			close(done)
		}
	}))
	tb.Cleanup(rc.Close)
	return rc.URL
}

// manyBench accepts b.N messages for each of four healthy streams (and,
// with bad, for each kind of bad receiver) in batches of 100, every
// stream of a batch in one AcceptMany as the pipeline hands them, and
// reports the healthy receivers' deliveries/s.
func manyBench(b *testing.B, st backend, bad []string) {
	const healthy, batch = 4, 100
	f := newFixture(b, st)
	var got atomic.Int64
	done := make(chan struct{})
	total := int64(healthy * b.N)
	var infos []hub.StreamInfo
	for range healthy {
		infos = append(infos, f.stream(countingReceiver(b, &got, done, total)))
	}
	if len(bad) > 0 {
		for _, k := range bad {
			infos = append(infos, f.stream(badReceiver(b, k)))
		}
	}
	cfg := webhook.Config{AllowPrivate: true, Timeout: 5 * time.Second, BreakerCooldown: 5 * time.Second}
	d := f.start(cfg)
	es := entries(1, b.N+batch)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < b.N; i += batch {
		part := es[i:min(i+batch, b.N)]
		parts := make([][]hub.Entry, len(infos))
		for k := range parts {
			parts[k] = part
		}
		if err := d.AcceptMany(context.Background(), infos, parts); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		b.Fatalf("%d of %d delivered", got.Load(), total)
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(total)/el.Seconds(), "deliveries/s")
	// the process's CPU per healthy delivery: what the bad receivers cost,
	// less disturbed than the rate by the machine's other load
	b.ReportMetric(float64(cpu.Microseconds())/float64(total), "cpu-µs/delivery")
}

// BenchmarkDispatchFour: signed deliveries to four healthy local
// receivers, alone and beside a dead, a slow, a flaky, a never-answering
// and a 410 receiver getting the same messages, on SQLite and (with
// FLEETHUB_TEST_DATABASE_URL) PostgreSQL.
func BenchmarkDispatchFour(b *testing.B) {
	cases := []struct {
		name string
		bad  []string
	}{{"Alone", nil}, {"BadNeighbours", badKinds}}
	for _, k := range badKinds {
		cases = append(cases, struct {
			name string
			bad  []string
		}{"Beside/" + k, []string{k}})
	}
	for _, c := range cases {
		b.Run("SQLite/"+c.name, func(b *testing.B) { manyBench(b, openSQLite(b, b.TempDir()), c.bad) })
		b.Run("PostgreSQL/"+c.name, func(b *testing.B) { manyBench(b, openPostgres(b, freshSchema(b)), c.bad) })
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// uploadBench measures trip uploads (AppendPoints of one 2 KiB block and
// an event, every 20 ms) on the store a dispatcher delivers from, while
// 2,000 messages/s (batches of 20 every 10 ms) go to a healthy webhook
// stream and, with dead, also to a stream whose receiver refuses
// connections, as a soak's receiver that is down. Defaults as served.
func uploadBench(b *testing.B, st backend, dead bool) {
	trips, ok := any(st).(store.Trips)
	if !ok {
		b.Fatal("the backend stores no trips")
	}
	cs := newCountingStore(st)
	f := newFixture(b, cs)
	var got atomic.Int64
	infos := []hub.StreamInfo{f.stream(countingReceiver(b, &got, make(chan struct{}), -1))}
	if dead {
		infos = append(infos, f.stream(badReceiver(b, "dead")))
	}
	d := f.start(webhook.Config{AllowPrivate: true})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for off := int64(1); ctx.Err() == nil; off += 20 {
			es := entries(off, 20)
			parts := make([][]hub.Entry, len(infos))
			for k := range parts {
				parts[k] = es
			}
			if err := d.AcceptMany(ctx, infos, parts); err != nil && ctx.Err() == nil {
				b.Error(err)
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
	})
	defer func() { cancel(); wg.Wait() }()
	// measured once the healthy stream delivers and the dead one's
	// circuit is open (the state a soak's dead receiver is in)
	waitfor.Until(b, time.Minute, "the healthy stream delivering", func() bool { return got.Load() > 0 })
	if dead {
		waitfor.Until(b, time.Minute, "the dead receiver's circuit open", func() bool {
			c := d.EndpointState(infos[len(infos)-1].ID)
			return c == webhook.CircuitOpen
		})
	}
	start := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	sc := store.Scope{Org: "org-a", Env: "test"}
	tr := store.Trip{ID: "trip_upload", Org: sc.Org, Env: sc.Env, VehicleID: "veh_1", Status: store.TripActive,
		StartTime: start, Version: 1, CreatedAt: start, UpdatedAt: start}
	if err := trips.CreateTrip(ctx, tr); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 2048)
	lats := make([]time.Duration, 0, b.N)
	before := cs.get(infos[len(infos)-1].ID)
	pace := time.NewTicker(20 * time.Millisecond)
	defer pace.Stop()
	b.ResetTimer()
	for i := range b.N {
		seq := int64(i + 1)
		ts := start.UnixMilli() + seq*100_000
		bs := []store.PointBlock{{Seq: seq, FirstTS: ts, LastTS: ts + 99_000, Count: 100, Data: data}}
		ev := store.TripEvent{ID: fmt.Sprintf("evt_%d", seq), Type: "harsh_braking", Time: start, Data: []byte(`{"g":0.61}`)}
		prev := tr.Version
		tr.Version++
		tr.Totals.LocationsCount += 100
		t0 := time.Now()
		if err := trips.AppendPoints(ctx, tr, prev, bs, []store.TripEvent{ev}, false); err != nil {
			b.Fatal(err)
		}
		lats = append(lats, time.Since(t0))
		<-pace.C
	}
	b.StopTimer()
	slices.Sort(lats)
	b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "upload-p50-ms")
	b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "upload-p99-ms")
	b.ReportMetric(float64(got.Load())/b.Elapsed().Seconds(), "healthy-deliveries/s")
	if dead {
		// what the dead stream wrote to the delivery log meanwhile (its
		// parked deliveries aside)
		w := cs.get(infos[1].ID)
		b.ReportMetric(float64(w.queued-before.queued+w.outcomes-before.outcomes+w.released-before.released)/b.Elapsed().Seconds(), "dead-log-writes/s")
	}
}

// BenchmarkTripUpload: trip upload latency on the store the webhook queue
// shares, with a healthy webhook stream alone and beside one whose
// receiver is down (docs/performance.md compares the p99s).
func BenchmarkTripUpload(b *testing.B) {
	for _, dead := range []bool{false, true} {
		name := "HealthyWebhookAlone"
		if dead {
			name = "BesideDeadReceiver"
		}
		b.Run("SQLite/"+name, func(b *testing.B) { uploadBench(b, openSQLite(b, b.TempDir()), dead) })
		b.Run("PostgreSQL/"+name, func(b *testing.B) { uploadBench(b, openPostgres(b, freshSchema(b)), dead) })
	}
}
