package event

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// equalEvents compares decoded events: times, floats and free-form
// objects as equal does, the rest field by field.
func equalEvents(a, b *Event) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	x, y := *a, *b
	if !equal(x.Timestamp, y.Timestamp) || !equal(x.Recommendations, y.Recommendations) ||
		(x.Location == nil) != (y.Location == nil) {
		return false
	}
	for i := 10; i < len(eventKeys); i++ {
		p, q := x.object(i), y.object(i)
		if (*p == nil) != (*q == nil) || !equal(*p, *q) {
			return false
		}
		*p, *q = nil, nil
	}
	if l, m := x.Location, y.Location; l != nil {
		if !equal(l.Latitude, m.Latitude) || !equal(l.Longitude, m.Longitude) || !equal(l.Accuracy, m.Accuracy) ||
			!equal(l.SpeedLimit, m.SpeedLimit) || !equal(l.EmergencyServicesDistance, m.EmergencyServicesDistance) ||
			l.Address != m.Address || l.Geofence != m.Geofence || l.RoadType != m.RoadType {
			return false
		}
	}
	x.Timestamp, y.Timestamp, x.Recommendations, y.Recommendations, x.Location, y.Location = time.Time{}, time.Time{}, nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

func equalEventEnvelopes(a, b *Envelope) bool {
	return a.Org == b.Org && a.Env == b.Env && a.Kind == b.Kind && equal(a.IngestedAt, b.IngestedAt) &&
		a.Telemetry == nil && b.Telemetry == nil && a.Point == nil && b.Point == nil && a.Points == nil && b.Points == nil &&
		equalEvents(a.Event, b.Event)
}

func fullEvent() *Event {
	return &Event{EventID: "evt-1", EventType: "harsh_braking", Category: CategorySafety, Timestamp: tsUTC,
		Severity: "high", Priority: "urgent",
		Source: Source{VehicleID: "veh-1", DriverID: "drv-1", TripID: "trip-1", FleetID: "fleet-1"},
		Location: &Location{Latitude: 52.5, Longitude: 13.4, Address: "A", Geofence: "g", RoadType: "motorway",
			Accuracy: f64(3), SpeedLimit: f64(math.NaN()), EmergencyServicesDistance: f64(-1)},
		EventData: map[string]any{"g_force": -0.62, "ints": []any{int8(1), uint16(60000), int64(-1 << 40)},
			"nested": map[string]any{"s": strings.Repeat("x", 300), "nil": nil, "b": true}},
		Metadata:       Metadata{CorrelationID: "c", SequenceNumber: 1 << 40, ProcessingTime: "1ms", SourceSystem: "s", Late: true},
		RiskAssessment: map[string]any{}, AutomaticActions: map[string]any{"a": false}, EmergencyResponse: map[string]any{"r": 1.5},
		Escalation: map[string]any{"level": "x"}, Recommendations: []any{"slow down", map[string]any{"k": float32(2)}},
		PredictiveIndicators: map[string]any{"p": uint8(200)}, PerformanceMetrics: map[string]any{"m": int32(-7)},
		Enrichment: map[string]any{"vehicle": map[string]any{"make": "V"}}}
}

// decodeEvent gives what the reflected decoder gives, for what Marshal
// writes of events with every field and with few.
func TestDecodeEventMatchesReflection(t *testing.T) {
	for _, ev := range []*Event{
		fullEvent(),
		{EventID: "e", Timestamp: tsOld, Metadata: Metadata{SequenceNumber: -5}},
		{Timestamp: tsFar, Location: &Location{}, Recommendations: "one"},
		{Timestamp: tsMid, Source: Source{VehicleID: strings.Repeat("v", 70000)}},
		{},
	} {
		for _, at := range []time.Time{tsUTC, {}} {
			b, err := Marshal(&Envelope{Org: "o", Env: "e", Kind: KindEvent, Event: ev, IngestedAt: at})
			if err != nil {
				t.Fatal(err)
			}
			fast, ok := decodeEvent(b)
			if !ok {
				t.Fatalf("decodeEvent refused %+v", ev)
			}
			slow, err := reflected(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equalEventEnvelopes(fast, slow) {
				t.Errorf("decoded\n%+v\nwant\n%+v", fast.Event, slow.Event)
			}
			if got, err := Unmarshal(b); err != nil || !equalEventEnvelopes(got, slow) {
				t.Errorf("Unmarshal: %v %+v", err, got)
			}
		}
	}
	// what it does not read, it leaves to reflection
	tm, _ := Marshal(&Envelope{Org: "o", Kind: KindTelemetry, Telemetry: &Telemetry{VehicleID: "v"}})
	pt, _ := Marshal(&Envelope{Org: "o", Kind: KindPoint, Point: &Point{TripID: "t"}})
	ev, _ := Marshal(&Envelope{Org: "o", Kind: KindEvent, Event: fullEvent()})
	both, _ := Marshal(&Envelope{Org: "o", Kind: KindEvent, Event: &Event{}, Telemetry: &Telemetry{}})
	for _, b := range [][]byte{tm, pt, both, {0x80}, {0xc0}, nil, append(append([]byte{}, ev...), 0), ev[:len(ev)-1]} {
		if _, ok := decodeEvent(b); ok {
			t.Errorf("decodeEvent took %x", b)
		}
	}
}

// A key given twice is left to reflection (which merges the objects).
func TestDecodeEventRefusesARepeatedKey(t *testing.T) {
	// {"o":"a","o":"b","ev":{}}
	b := []byte{0x83, 0xa1, 'o', 0xa1, 'a', 0xa1, 'o', 0xa1, 'b', 0xa2, 'e', 'v', 0x80}
	if _, ok := decodeEvent(b); ok {
		t.Fatal("decodeEvent took a repeated key")
	}
	if e, err := Unmarshal(b); err != nil || e.Org != "b" || e.Event == nil {
		t.Fatalf("Unmarshal: %v %+v", err, e)
	}
}

// FuzzDecodeEvent: whatever decodeEvent takes, the reflected decoder
// decodes to the same envelope.
func FuzzDecodeEvent(f *testing.F) {
	for _, ev := range []*Event{fullEvent(), {EventID: "e", Location: &Location{Accuracy: f64(1)}}} {
		b, _ := Marshal(&Envelope{Org: "o", Env: "e", Kind: KindEvent, Event: ev, IngestedAt: tsSec})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeEvent(b)
		if !ok {
			return
		}
		slow, err := reflected(b)
		if err != nil {
			t.Fatalf("reflection fails where decodeEvent took it: %v", err)
		}
		if !equalEventEnvelopes(fast, slow) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", fast.Event, slow.Event)
		}
	})
}

func BenchmarkEventDecode(b *testing.B) {
	buf, err := Marshal(&Envelope{Org: "org-a", Env: "live", Kind: KindEvent, Event: fullEvent(), IngestedAt: tsUTC})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeEvent(buf); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("reflected", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := reflected(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
