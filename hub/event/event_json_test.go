package event

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// AppendEventJSON writes what encoding/json writes, byte for byte, on
// 3,000 seeded random events (every optional field present and absent,
// nested free-form values, strings needing every kind of escape, floats
// on both sides of the exponent form, integers of every width); where a
// value holds a type it leaves alone it says so, and encoding/json still
// encodes the event.
func TestEventJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 3))
	left := 0
	for i := range 3000 {
		e := randomEnvelope(r, 5, i%3 == 0)
		want, err := json.Marshal(e.Event)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendEventJSON(nil, e.Event)
		if !ok {
			left++
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d:\nours %s\njson %s", i, got, want)
		}
	}
	if left == 0 || left > 900 {
		t.Errorf("stepped aside for %d of 3,000 events, want some (those with a float32) and not most", left)
	}
	// what it refuses
	ts := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, ev := range []*Event{
		{Timestamp: ts.AddDate(9000, 0, 0)},
		{Timestamp: ts, EventData: map[string]any{"x": float32(1)}},
		{Timestamp: ts, EventData: map[string]any{"x": []int{1}}},
	} {
		if _, ok := AppendEventJSON(nil, ev); ok {
			t.Errorf("%+v: written, want left to encoding/json", ev)
		}
	}
}

func BenchmarkEventJSON(b *testing.B) {
	ts := time.Date(2026, 11, 23, 10, 0, 0, 123000000, time.UTC)
	ev := &Event{EventID: "e1", EventType: "harsh_braking", Category: CategorySafety, Timestamp: ts,
		Severity: "high", Priority: "urgent", Source: Source{VehicleID: "v1", TripID: "t1"},
		Location:  &Location{Latitude: 40.1, Longitude: -83.2},
		EventData: map[string]any{"deceleration_g": 0.61, "speed_kmh": 54.0, "~seq": 12, "note": "x"}, Metadata: Metadata{CorrelationID: "t1", SequenceNumber: 7}}
	b.Run("AppendEventJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := AppendEventJSON(make([]byte, 0, 512), ev); !ok {
				b.Fatal("not written")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// AppendTelemetryJSON writes what encoding/json writes, byte for byte,
// on 2,000 seeded random telemetry messages.
func TestTelemetryJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	f := func() *float64 {
		if r.IntN(2) == 0 {
			return nil
		}
		v := r.Float64() * 100
		return &v
	}
	for i := range 2000 {
		tm := &Telemetry{Timestamp: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC(), VehicleID: "v<1>", DataType: DataTypes[r.IntN(len(DataTypes))],
			Sequence: r.Int64N(1 << 40), Data: randomMap(r, 5, false)}
		if r.IntN(2) == 0 {
			tm.QualityIndicators = &QualityIndicators{SignalStrength: f(), DataCompleteness: f()}
			if r.IntN(2) == 0 {
				tm.QualityIndicators.SensorHealth = "ok & good"
			}
		}
		want, err := json.Marshal(tm)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendTelemetryJSON(nil, tm)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("message %d (written: %v):\nours %s\njson %s", i, ok, got, want)
		}
	}
}
