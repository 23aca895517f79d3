package event_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	ts := time.Date(2026, 11, 23, 10, 0, 0, 123000000, time.UTC)
	in := &event.Envelope{Org: "o", Env: "test", Kind: event.KindEvent, IngestedAt: ts,
		Event: &event.Event{EventID: "e1", EventType: "harsh_braking", Category: event.CategorySafety, Timestamp: ts,
			Severity: "high", Priority: "urgent", Source: event.Source{VehicleID: "v1", TripID: "t1"},
			EventData: map[string]any{"deceleration_g": 0.61}, Metadata: event.Metadata{CorrelationID: "t1", SequenceNumber: 7}}}
	b, err := event.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := event.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Event.EventID != "e1" || !out.Event.Timestamp.Equal(ts) || out.Event.Metadata.SequenceNumber != 7 ||
		out.Event.EventData["deceleration_g"] != 0.61 || out.Org != "o" {
		t.Fatalf("round trip: %+v", out.Event)
	}
	if _, err := event.Unmarshal([]byte{0xc1, 0x00}); err == nil {
		t.Fatal("garbage decoded")
	}
}
