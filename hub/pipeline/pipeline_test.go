package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
)

// TestFailingSinkRedeliversBatch runs the pipeline on the in-process bus
// with a delivery queue that refuses the first three hand-offs: the bus
// redelivers, and every message ends in its stream's log and in the
// queue, the deduplicated events included.
func TestFailingSinkRedeliversBatch(t *testing.T) {
	f := newFixture(t)
	tel := f.start("org-a", "live", hub.KindTelemetry, `{"delivery_method": "webhook", "webhook_url": "https://hooks.example.com/t"}`)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	bus := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { bus.Close(context.Background()) })

	var msgs []hub.Message
	for i := range 20 {
		v := fmt.Sprintf("v%d", i%4)
		b, _ := event.Marshal(aTelemetry("org-a", "live", v, int64(i)))
		msgs = append(msgs, hub.Message{Topic: hub.TopicTelemetry, Key: []byte(v), Value: b})
	}
	for i := range 10 {
		v := fmt.Sprintf("v%d", i%4)
		b, _ := event.Marshal(anEvent("org-a", "live", fmt.Sprintf("evt_%d", i), v, int64(i)))
		msgs = append(msgs, hub.Message{Topic: hub.TopicEvents, Key: []byte(v), Value: b})
	}
	f.sink.failNext(3)
	if err := bus.Publish(t.Context(), msgs...); err != nil {
		t.Fatal(err)
	}

	p := f.pipeline(bus, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	f.sink.await(t, "20 readings and 10 events in the queue", func() bool {
		return len(counts(f.sinkSeqs(tel))) == 20 && len(counts(eventIDs(decode(t, f.sink.got[evs])))) == 10
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	if f.sink.failed != 3 {
		t.Errorf("the queue refused %d hand-offs, want 3", f.sink.failed)
	}
	for i := range 20 {
		if n := counts(telemetrySeqs(f.logged(tel)))[int64(i)]; n == 0 {
			t.Errorf("reading %d missing from the telemetry log", i)
		}
	}
	logged, queued := counts(eventIDs(f.logged(evs))), counts(eventIDs(f.sink.accepted(t, evs)))
	for i := range 10 {
		id := fmt.Sprintf("evt_%d", i)
		if logged[id] == 0 {
			t.Errorf("%s missing from the event log", id)
		}
		if queued[id] != 1 {
			t.Errorf("%s queued %d times, want 1", id, queued[id])
		}
	}
}

// sinkSeqs lists the telemetry sequences the queue took for a stream;
// the sink's lock must be held.
func (f *fixture) sinkSeqs(id string) []int64 {
	return telemetrySeqs(decode(f.t, f.sink.got[id]))
}

func telemetrySeqs(ms []map[string]any) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		n, _ := m["sequence"].(float64)
		out[i] = int64(n)
	}
	return out
}

// TestDedupedEventDeliveredAfterFailedBatch: the hand-off of a batch
// fails; its redelivery is not taken for a duplicate, a later copy is.
func TestDedupedEventDeliveredAfterFailedBatch(t *testing.T) {
	eachWindow(t, testDedupedEventDeliveredAfterFailedBatch)
}

func testDedupedEventDeliveredAfterFailedBatch(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	p := f.pipeline(nil, window())
	batch := []hub.Message{msg(t, hub.TopicEvents, 0, anEvent("org-a", "live", "evt_1", "v1", 1))}

	f.sink.failNext(1)
	if err := p.Handle(t.Context(), batch); !errors.Is(err, errQueueDown) {
		t.Fatalf("Handle with the queue down = %v", err)
	}
	if err := p.Handle(t.Context(), batch); err != nil { // the bus redelivers
		t.Fatalf("Handle of the redelivered batch: %v", err)
	}
	if got := eventIDs(f.sink.accepted(t, evs)); !slices.Equal(got, []string{"evt_1"}) {
		t.Fatalf("queued %v after the redelivery, want [evt_1]", got)
	}

	// The device sends it again: now it is a duplicate.
	retry := []hub.Message{msg(t, hub.TopicEvents, 1, anEvent("org-a", "live", "evt_1", "v1", 1))}
	if err := p.Handle(t.Context(), retry); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.sink.accepted(t, evs)); !slices.Equal(got, []string{"evt_1"}) {
		t.Errorf("queued %v after a copy, want [evt_1]", got)
	}
	if n := f.reg.ByID(evs).Counter("duplicates_suppressed"); n != 1 {
		t.Errorf("duplicates_suppressed = %d, want 1", n)
	}
}

// TestDedupScopedByTenant: one event_id sent by two organizations, and
// by one organization in two environments, reaches each of them; only a
// repeat within one tenant is suppressed.
func TestDedupScopedByTenant(t *testing.T) { eachWindow(t, testDedupScopedByTenant) }

func testDedupScopedByTenant(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	rules := webhookEvents(`{"deduplication": true}`)
	tenants := [][2]string{{"org-a", "live"}, {"org-b", "live"}, {"org-a", "test"}}
	ids := make([]string, len(tenants))
	var batch []hub.Message
	for i, tn := range tenants {
		ids[i] = f.start(tn[0], tn[1], hub.KindEvents, rules)
		batch = append(batch, msg(t, hub.TopicEvents, int64(i), anEvent(tn[0], tn[1], "evt_same", "v1", 1)))
	}
	batch = append(batch, msg(t, hub.TopicEvents, 3, anEvent("org-a", "live", "evt_same", "v1", 1)))
	if err := f.pipeline(nil, window()).Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	for i, tn := range tenants {
		if got := eventIDs(f.sink.accepted(t, ids[i])); !slices.Equal(got, []string{"evt_same"}) {
			t.Errorf("%s/%s got %v, want [evt_same]", tn[0], tn[1], got)
		}
	}
	if n := f.reg.ByID(ids[0]).Counter("duplicates_suppressed"); n != 1 {
		t.Errorf("org-a/live suppressed %d, want 1", n)
	}
}

// TestConcurrentPartitionsDeliverOnce: two partitions carry copies of the
// same events at the same time; each event reaches the stream once.
func TestConcurrentPartitionsDeliverOnce(t *testing.T) {
	eachWindow(t, testConcurrentPartitionsDeliverOnce)
}

func testConcurrentPartitionsDeliverOnce(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	p := f.pipeline(nil, window())
	const events = 300
	batches := make([][]hub.Message, 2)
	for part := range batches {
		for i := range events {
			m := msg(t, hub.TopicEvents, int64(i), anEvent("org-a", "live", fmt.Sprintf("evt_%d", i), "v1", int64(i)))
			m.Partition = part
			batches[part] = append(batches[part], m)
		}
	}
	var wg sync.WaitGroup
	for _, b := range batches {
		for i := 0; i < len(b); i += 10 { // batches of 10, as a bus would hand them
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.Handle(context.Background(), b[i:i+10]); err != nil {
					t.Error(err)
				}
			}()
		}
	}
	wg.Wait()
	got := counts(eventIDs(f.sink.accepted(t, evs)))
	for i := range events {
		if n := got[fmt.Sprintf("evt_%d", i)]; n != 1 {
			t.Errorf("evt_%d delivered %d times, want 1", i, n)
		}
	}
}

// TestCopyWhileFirstInFlight: a copy of an event arrives on another
// partition while the first one's hand-off is still under way; the copy
// is suppressed and the event reaches the stream once.
func TestCopyWhileFirstInFlight(t *testing.T) { eachWindow(t, testCopyWhileFirstInFlight) }

func testCopyWhileFirstInFlight(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	p := f.pipeline(nil, window())
	first := msg(t, hub.TopicEvents, 7, anEvent("org-a", "live", "evt_1", "v1", 1))
	copied := first
	copied.Partition = 1

	gate, entered := make(chan struct{}), make(chan struct{})
	f.sink.mu.Lock()
	f.sink.gate, f.sink.entered = gate, entered
	f.sink.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- p.Handle(context.Background(), []hub.Message{first}) }()
	<-entered // the first copy is in the queue's hands, not yet accepted
	if err := p.Handle(t.Context(), []hub.Message{copied}); err != nil {
		t.Fatalf("Handle of the copy: %v", err)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.sink.accepted(t, evs)); !slices.Equal(got, []string{"evt_1"}) {
		t.Errorf("queued %v, want [evt_1]", got)
	}
}

// TestRedeliveredHeldDedupEventReachesEveryStream: an event is held
// behind a gap in one stream and handed to a second one, whose hand-off
// fails. The redelivered event is not taken for a copy of the held one:
// the second stream gets it.
func TestRedeliveredHeldDedupEventReachesEveryStream(t *testing.T) {
	eachWindow(t, testRedeliveredHeldDedupEventReachesEveryStream)
}

func testRedeliveredHeldDedupEventReachesEveryStream(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ordered := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"deduplication": true, "event_ordering": true}}`)
	plain := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicEvents, 0, anEvent("org-a", "live", "evt_1", "v1", 1))}); err != nil {
		t.Fatal(err)
	}
	batch := []hub.Message{msg(t, hub.TopicEvents, 1, anEvent("org-a", "live", "evt_3", "v1", 3))} // 2 is late
	f.sink.failNext(1)
	if err := p.Handle(t.Context(), batch); !errors.Is(err, errQueueDown) {
		t.Fatalf("Handle with the queue down = %v", err)
	}
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.sink.accepted(t, plain)); !slices.Equal(got, []string{"evt_1", "evt_3"}) {
		t.Errorf("queued %v, want [evt_1 evt_3]", got)
	}
	if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicEvents, 2, anEvent("org-a", "live", "evt_2", "v1", 2))}); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.logged(ordered)); !slices.Equal(got, []string{"evt_1", "evt_2", "evt_3"}) {
		t.Errorf("ordered stream holds %v, want [evt_1 evt_2 evt_3]", got)
	}
}

// TestCopyClaimedByAnotherNode: while another node has the same event in
// flight, the batch is refused (the bus retries it); once that node gave
// its claim up, the event is delivered here; once it delivered it, the
// copy here is suppressed.
func TestCopyClaimedByAnotherNode(t *testing.T) {
	f := newFixture(t)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	shared := dedup.NewLocal(100, time.Hour) // stands for the Redis window of both nodes
	p := f.pipeline(nil, shared)
	ctx := t.Context()
	key := func(id string) string { return "org-a\x00live\x00" + id }

	for _, id := range []string{"evt_failed", "evt_done"} {
		if st, err := shared.Claim(ctx, key(id)); err != nil || st != dedup.Unseen {
			t.Fatalf("other node's Claim(%s) = %v, %v", id, st, err)
		}
	}
	failed := []hub.Message{msg(t, hub.TopicEvents, 0, anEvent("org-a", "live", "evt_failed", "v1", 1))}
	if err := p.Handle(ctx, failed); !errors.Is(err, ErrInFlight) {
		t.Fatalf("Handle while the other node has the event in flight = %v, want ErrInFlight", err)
	}
	if err := shared.Forget(ctx, key("evt_failed")); err != nil { // its batch failed
		t.Fatal(err)
	}
	if err := p.Handle(ctx, failed); err != nil {
		t.Fatalf("Handle after the other node gave up: %v", err)
	}

	if err := shared.Done(ctx, key("evt_done")); err != nil { // it delivered
		t.Fatal(err)
	}
	if err := p.Handle(ctx, []hub.Message{msg(t, hub.TopicEvents, 1, anEvent("org-a", "live", "evt_done", "v1", 2))}); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.sink.accepted(t, evs)); !slices.Equal(got, []string{"evt_failed"}) {
		t.Errorf("queued %v, want [evt_failed]", got)
	}
}

// TestThrottledTelemetryRedelivered: the redelivery of a failed batch is
// not throttled by its own first attempt.
func TestThrottledTelemetryRedelivered(t *testing.T) {
	eachWindow(t, testThrottledTelemetryRedelivered)
}

func testThrottledTelemetryRedelivered(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	tel := f.start("org-a", "live", hub.KindTelemetry, `{"delivery_method": "webhook", "webhook_url": "https://hooks.example.com/t", "stream_config": {"frequency": "low"}}`)
	p := f.pipeline(nil, window())
	batch := []hub.Message{msg(t, hub.TopicTelemetry, 0, aTelemetry("org-a", "live", "v1", 1))}
	f.sink.failNext(1)
	if err := p.Handle(t.Context(), batch); !errors.Is(err, errQueueDown) {
		t.Fatalf("Handle with the queue down = %v", err)
	}
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	// A reading 10 s later is still within the minute: throttled.
	if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicTelemetry, 1, aTelemetry("org-a", "live", "v1", 11))}); err != nil {
		t.Fatal(err)
	}
	if got := telemetrySeqs(f.sink.accepted(t, tel)); !slices.Equal(got, []int64{1}) {
		t.Errorf("queued readings %v, want [1]", got)
	}
}

// TestCorrelationPositionAfterFailedBatch: the redelivery of a failed
// batch gets the correlation position its first attempt had.
func TestCorrelationPositionAfterFailedBatch(t *testing.T) {
	eachWindow(t, testCorrelationPositionAfterFailedBatch)
}

func testCorrelationPositionAfterFailedBatch(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	evs := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"correlation_enabled": true}`))
	p := f.pipeline(nil, window())
	ev := anEvent("org-a", "live", "evt_1", "v1", 1)
	ev.Event.Metadata.CorrelationID = "trip-1"
	batch := []hub.Message{msg(t, hub.TopicEvents, 0, ev)}
	f.sink.failNext(1)
	if err := p.Handle(t.Context(), batch); !errors.Is(err, errQueueDown) {
		t.Fatalf("Handle with the queue down = %v", err)
	}
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	got := f.sink.accepted(t, evs)
	if len(got) != 1 {
		t.Fatalf("queued %d events, want 1", len(got))
	}
	enr, _ := got[0]["enrichment"].(map[string]any)
	corr, _ := enr["correlation"].(map[string]any)
	if pos, _ := corr["position"].(float64); pos != 1 {
		t.Errorf("correlation position %v after a redelivery, want 1", corr["position"])
	}
}

// TestScopesWithoutStreamsSkipped: in a batch of several tenants'
// telemetry, the messages of a tenant without a telemetry stream are
// skipped (from their first bytes) and those of a tenant with one all
// reach it; a stream started after a batch takes the next batch.
func TestScopesWithoutStreamsSkipped(t *testing.T) {
	f := newFixture(t)
	ev := f.start("org-a", "live", hub.KindEvents, `{}`)
	p := f.pipeline(nil, nil)
	var batch []hub.Message
	for i := range 6 {
		org := []string{"org-a", "org-b", "org-c"}[i%3]
		batch = append(batch, msg(t, hub.TopicTelemetry, int64(i), aTelemetry(org, "live", "v1", int64(i))))
	}
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	tel := f.start("org-b", "live", hub.KindTelemetry, `{}`)
	batch = batch[:0]
	for i := 6; i < 12; i++ {
		org := []string{"org-a", "org-b", "org-c"}[i%3]
		batch = append(batch, msg(t, hub.TopicTelemetry, int64(i), aTelemetry(org, "live", "v1", int64(i))))
	}
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	got := f.logged(tel)
	var seqs []float64
	for _, m := range got {
		seqs = append(seqs, m["sequence"].(float64))
	}
	if !slices.Equal(seqs, []float64{7, 10}) {
		t.Errorf("org-b's telemetry stream got readings %v, want [7 10] (its own, after it started)", seqs)
	}
	if n := len(f.logged(ev)); n != 0 {
		t.Errorf("org-a's events stream got %d telemetry messages", n)
	}
}
