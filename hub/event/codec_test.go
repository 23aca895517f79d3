package event_test

import (
	"bytes"
	"encoding/json"
	"strings"
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
	if out.Event.Metadata.Late {
		t.Fatal("late set on an event sent without it")
	}
}

// metadata.late (set by the pipeline) survives the bus codec, and is left
// out of both encodings when false.
func TestMetadataLate(t *testing.T) {
	ts := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	ev := &event.Event{EventID: "e1", EventType: "a", Category: event.CategorySafety, Timestamp: ts, Severity: "low",
		Source: event.Source{VehicleID: "v1"}, Metadata: event.Metadata{SequenceNumber: 3, Late: true}}
	b, err := event.Marshal(&event.Envelope{Org: "o", Env: "test", Kind: event.KindEvent, IngestedAt: ts, Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	out, err := event.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Event.Metadata.Late || out.Event.Metadata.SequenceNumber != 3 {
		t.Fatalf("metadata %+v", out.Event.Metadata)
	}
	j, err := json.Marshal(out.Event.Metadata)
	if err != nil || !strings.Contains(string(j), `"late":true`) {
		t.Fatalf("JSON %s %v", j, err)
	}
	ev.Metadata.Late = false
	if b, err = event.Marshal(&event.Envelope{Org: "o", Env: "test", Kind: event.KindEvent, IngestedAt: ts, Event: ev}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("late")) {
		t.Fatal("msgpack carries late when false")
	}
	if j, _ = json.Marshal(ev.Metadata); strings.Contains(string(j), "late") {
		t.Fatalf("JSON carries late when false: %s", j)
	}
}

func TestPointsRoundTrip(t *testing.T) {
	sp := 42.5
	ts := time.UnixMilli(1_700_000_000_123).UTC()
	in := &event.Envelope{Org: "o", Env: "live", Kind: event.KindPoints, Points: []event.Point{
		{TripID: "t", VehicleID: "v", Org: "o", Env: "live", Timestamp: ts, Latitude: 1.5, Longitude: -2.25, SpeedKmh: &sp},
		{TripID: "t", VehicleID: "v", Timestamp: ts.Add(time.Second), Latitude: 1.6, Longitude: -2.3},
	}}
	b, err := event.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := event.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Points) != 2 || *out.Points[0].SpeedKmh != 42.5 || out.Points[1].SpeedKmh != nil ||
		!out.Points[1].Timestamp.Equal(ts.Add(time.Second)) || out.Points[0].Longitude != -2.25 || out.Points[0].Env != "live" {
		t.Fatalf("round trip: %+v", out.Points)
	}
}

func BenchmarkPointsCodec(b *testing.B) {
	sp := 40.0
	pts := make([]event.Point, 1000)
	for i := range pts {
		pts[i] = event.Point{TripID: "trip_0123456789", VehicleID: "veh-1", Org: "org", Env: "test", Timestamp: time.UnixMilli(int64(i) * 1000),
			Latitude: 40 + float64(i)*1e-4, Longitude: -83, SpeedKmh: &sp}
	}
	env := &event.Envelope{Org: "org", Env: "test", Kind: event.KindPoints, Points: pts}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := event.Marshal(env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(pts))/b.Elapsed().Seconds(), "points/s")
}

// TestUnmarshalMalformedIsAnError: bytes the msgpack library panics on
// (a nil where the envelope has a time) are an error for the reader.
func TestUnmarshalMalformedIsAnError(t *testing.T) {
	b := []byte("\x85\xa1o\xa10\xa1e\xa40000\xa1k\xa6000000\xa1i\xc0")
	if e, err := event.Unmarshal(b); err == nil {
		t.Fatalf("Unmarshal of a nil time = %+v, want an error", e)
	}
}
