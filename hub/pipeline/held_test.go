package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
)

// orderedEvents is a batch of events of vehicle v1 with the given
// sequence numbers, at offsets from first on partition 0.
func orderedEvents(t *testing.T, first int64, seqs ...int64) []hub.Message {
	var out []hub.Message
	for i, s := range seqs {
		out = append(out, msg(t, hub.TopicEvents, first+int64(i), anEvent("org-a", "live", eventID(s), "v1", s)))
	}
	return out
}

func eventID(seq int64) string { return fmt.Sprintf("evt_%d", seq) }

func checkHeld(t *testing.T, p *Pipeline, want int64, wantOK bool) {
	t.Helper()
	got, ok := p.held(hub.TopicEvents)(0)
	if ok != wantOK || (ok && got != want) {
		t.Fatalf("Held(0) = %d, %v; want %d, %v", got, ok, want, wantOK)
	}
}

// TestHeldEventSurvivesRestart: an event kept behind a sequence gap
// holds the commit of its partition back to its own offset; a pipeline
// that restarts from there (the node crashed) delivers it.
func TestHeldEventSurvivesRestart(t *testing.T) { eachWindow(t, testHeldEventSurvivesRestart) }

func testHeldEventSurvivesRestart(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	p := f.pipeline(nil, window())
	batch := orderedEvents(t, 0, 1, 3, 4) // 2 is late
	if err := p.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("log holds %v before the gap closes, want [1]", got)
	}
	checkHeld(t, p, 1, true) // 3, at offset 1, is the oldest held
	if _, ok := p.held(hub.TopicEvents)(1); ok {
		t.Error("partition 1 reports a held offset")
	}
	if _, ok := p.held(hub.TopicTelemetry)(0); ok {
		t.Error("the telemetry topic reports a held offset")
	}

	// The node crashes. The bus committed min(3, Held) = 1 and hands the
	// next pipeline the batch from there.
	restarted := f.pipeline(nil, window())
	if err := restarted.Handle(t.Context(), batch[1:]); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 3, 4}) {
		t.Fatalf("log holds %v after the restart, want [1 3 4]", got)
	}
}

// TestHeldEventReleasedInOrder: the late event releases the held ones in
// order, and the partition holds nothing back any more.
func TestHeldEventReleasedInOrder(t *testing.T) { eachWindow(t, testHeldEventReleasedInOrder) }

func testHeldEventReleasedInOrder(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if err := p.Handle(t.Context(), orderedEvents(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("log holds %v, want [1 2 3 4]", got)
	}
	checkHeld(t, p, 0, false)
}

// TestReleasedEventsRetriedAfterFailedBatch: a batch releases an event
// an earlier batch held, then its hand-off fails. The bus redelivers the
// failed batch only; the released event stays held back (Held) until the
// expiry loop hands it off.
func TestReleasedEventsRetriedAfterFailedBatch(t *testing.T) {
	eachWindow(t, testReleasedEventsRetriedAfterFailedBatch)
}

func testReleasedEventsRetriedAfterFailedBatch(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"event_ordering": true}`))
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	late := orderedEvents(t, 2, 2)
	f.sink.failNext(1)
	if err := p.Handle(t.Context(), late); !errors.Is(err, errQueueDown) {
		t.Fatalf("Handle with the queue down = %v", err)
	}
	checkHeld(t, p, 1, true)
	if err := p.Handle(t.Context(), late); err != nil { // the bus redelivers
		t.Fatal(err)
	}
	checkHeld(t, p, 1, true) // 3 came from the first batch: not redelivered
	p.flushHeld(t.Context())
	checkHeld(t, p, 0, false)
	got := counts(sequences(f.sink.accepted(t, ord)))
	for _, s := range []int64{1, 2, 3} {
		if got[s] != 1 {
			t.Errorf("event %d queued %d times, want 1", s, got[s])
		}
	}
}

// TestHeldDedupEventSeenOnlyAfterHandOff: an event waiting behind a gap
// is claimed but not yet seen; after its wait it is handed off (here on
// the second try) and only then counts as seen.
func TestHeldDedupEventSeenOnlyAfterHandOff(t *testing.T) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, webhookEvents(`{"event_ordering": true, "deduplication": true}`))
	w := dedup.NewLocal(100, time.Hour)
	p := f.pipeline(nil, w)
	now := t0
	p.now = func() time.Time { return now }
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	key := "org-a\x00live\x00" + eventID(3)
	if st, _ := w.Claim(t.Context(), key); st != dedup.InFlight {
		t.Fatalf("a held event's id is %v, want InFlight", st)
	}

	now = now.Add(p.cfg.OrderWait) // the gap's wait is over
	f.sink.failNext(1)
	p.flushHeld(t.Context())
	checkHeld(t, p, 1, true)
	if st, _ := w.Claim(t.Context(), key); st != dedup.InFlight {
		t.Fatalf("after a failed hand-off the id is %v, want InFlight", st)
	}
	p.flushHeld(t.Context())
	checkHeld(t, p, 0, false)
	if got := sequences(f.sink.accepted(t, ord)); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("queued %v, want [1 3]", got)
	}
	if st, _ := w.Claim(t.Context(), key); st != dedup.Duplicate {
		t.Errorf("a handed-off event's id is %v, want Duplicate", st)
	}
}
