package pipeline

import (
	"github.com/fleethub/fleethub/filters/dedup"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// lates lists metadata.late of decoded events.
func lates(ms []map[string]any) []bool {
	out := make([]bool, len(ms))
	for i, m := range ms {
		md, _ := m["metadata"].(map[string]any)
		out[i], _ = md["late"].(bool)
	}
	return out
}

// severities makes events of vehicle v1 with sequence numbers 1.. and the
// given severities, at offsets from first.
func severities(t *testing.T, first int64, sev ...string) []hub.Message {
	var out []hub.Message
	for i, s := range sev {
		env := anEvent("org-a", "live", eventID(int64(i+1)), "v1", int64(i+1))
		env.Event.Severity = s
		out = append(out, msg(t, hub.TopicEvents, first+int64(i), env))
	}
	return out
}

// TestOrderingKnowsNumbersOfUnmatchedEvents: numbers taken by events the
// ordering stream's filter refuses are known, so the events it takes are
// released at once; a stream of the same organization without ordering
// gets every event at once.
func TestOrderingKnowsNumbersOfUnmatchedEvents(t *testing.T) {
	eachWindow(t, testOrderingKnowsNumbersOfUnmatchedEvents)
}

func testOrderingKnowsNumbersOfUnmatchedEvents(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"event_filters": {"severity_levels": ["high", "critical"]}, "processing_rules": {"event_ordering": true, "deduplication": true}}`)
	low := f.start("org-a", "live", hub.KindEvents, `{"event_filters": {"severity_levels": ["low"]}, "processing_rules": {"deduplication": true}}`)
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), severities(t, 0, "high", "low", "low", "high")); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 4}) {
		t.Fatalf("ordering stream holds %v, want [1 4] at once", got)
	}
	if got := sequences(f.logged(low)); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("the other stream holds %v, want [2 3]", got)
	}
	checkHeld(t, p, 0, false)
	// the numbers are known in a later batch too
	if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicEvents, 4, anEvent("org-a", "live", "evt_5", "v1", 5))}); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 4, 5}) {
		t.Fatalf("ordering stream holds %v, want [1 4 5]", got)
	}
}

// TestOrderingCostsOtherStreamsNothing: while an ordering stream waits
// for a gap, a stream without ordering has every event already, once.
func TestOrderingCostsOtherStreamsNothing(t *testing.T) {
	eachWindow(t, testOrderingCostsOtherStreamsNothing)
}

func testOrderingCostsOtherStreamsNothing(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	plain := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"deduplication": true}}`)
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3, 4)); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(plain)); !slices.Equal(got, []int64{1, 3, 4}) {
		t.Fatalf("the stream without ordering holds %v, want [1 3 4]", got)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("the ordering stream holds %v, want [1]", got)
	}
	if err := p.Handle(t.Context(), orderedEvents(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("the ordering stream holds %v, want [1 2 3 4]", got)
	}
	if got := sequences(f.logged(plain)); !slices.Equal(got, []int64{1, 3, 4, 2}) {
		t.Fatalf("the stream without ordering holds %v, want [1 3 4 2]", got)
	}
}

// TestLateEventMarked: a number that arrives after its gap was skipped is
// delivered at once with metadata.late in the ordering stream, and
// unmarked in a stream without ordering.
func TestLateEventMarked(t *testing.T) { eachWindow(t, testLateEventMarked) }

func testLateEventMarked(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	plain := f.start("org-a", "live", hub.KindEvents, `{}`)
	p := f.pipeline(nil, window())
	now := t0
	p.now = func() time.Time { return now }
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	now = now.Add(p.cfg.OrderWait)
	p.flushHeld(t.Context())
	if err := p.Handle(t.Context(), orderedEvents(t, 2, 2)); err != nil {
		t.Fatal(err)
	}
	got := f.logged(ord)
	if s := sequences(got); !slices.Equal(s, []int64{1, 3, 2}) {
		t.Fatalf("ordering stream holds %v, want [1 3 2]", s)
	}
	if l := lates(got); !slices.Equal(l, []bool{false, false, true}) {
		t.Fatalf("late flags %v, want only the last", l)
	}
	if l := lates(f.logged(plain)); slices.Contains(l, true) {
		t.Fatalf("a stream without ordering marks late events: %v", l)
	}
	checkHeld(t, p, 0, false)
}

// TestCopiesOfABufferedNumber: without deduplication a copy of a waiting
// event is delivered right after it; with deduplication once.
func TestCopiesOfABufferedNumber(t *testing.T) { eachWindow(t, testCopiesOfABufferedNumber) }

func testCopiesOfABufferedNumber(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	dd := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true, "deduplication": true}}`)
	p := f.pipeline(nil, window())
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3, 3)); err != nil {
		t.Fatal(err)
	}
	if err := p.Handle(t.Context(), orderedEvents(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(ord)); !slices.Equal(got, []int64{1, 2, 3, 3}) {
		t.Fatalf("ordering stream holds %v, want [1 2 3 3]", got)
	}
	if got := sequences(f.logged(dd)); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("deduplicating ordering stream holds %v, want [1 2 3]", got)
	}
	checkHeld(t, p, 0, false)
}

// TestUnsequencedEventsPassAtOnce: an event without a sequence number is
// not ordered and does not move its source's sequence.
func TestUnsequencedEventsPassAtOnce(t *testing.T) { eachWindow(t, testUnsequencedEventsPassAtOnce) }

func testUnsequencedEventsPassAtOnce(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	p := f.pipeline(nil, window())
	msgs := orderedEvents(t, 0, 1, 3)
	msgs = append(msgs, msg(t, hub.TopicEvents, 2, anEvent("org-a", "live", "evt_none", "v1", 0)))
	if err := p.Handle(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.logged(ord)); !slices.Equal(got, []string{"evt_1", "evt_none"}) {
		t.Fatalf("ordering stream holds %v, want [evt_1 evt_none]", got)
	}
	if err := p.Handle(t.Context(), orderedEvents(t, 3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := eventIDs(f.logged(ord)); !slices.Equal(got, []string{"evt_1", "evt_none", "evt_2", "evt_3"}) {
		t.Fatalf("ordering stream holds %v", got)
	}
}

// TestOrderingScopedByTenant: the same vehicle id and numbers in another
// organization neither fill nor take another's sequence.
func TestOrderingScopedByTenant(t *testing.T) { eachWindow(t, testOrderingScopedByTenant) }

func testOrderingScopedByTenant(t *testing.T, window func() dedup.Window) {
	f := newFixture(t)
	a := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	p := f.pipeline(nil, window())
	f.start("org-b", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	other := []hub.Message{msg(t, hub.TopicEvents, 2, &event.Envelope{Org: "org-b", Env: "live", Kind: event.KindEvent, IngestedAt: t0,
		Event: &event.Event{EventID: "b2", EventType: "harsh_braking", Category: event.CategorySafety, Timestamp: t0, Severity: "high", Priority: "normal",
			Source: event.Source{VehicleID: "v1"}, Metadata: event.Metadata{SequenceNumber: 2}}})}
	if err := p.Handle(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	if got := sequences(f.logged(a)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("org-a's stream holds %v: another organization's number 2 filled its gap", got)
	}
}
