package event

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// randomValue is a free-form value of the kinds the encoder writes
// itself, its maps of at most keys keys; with odd set, sometimes one it
// leaves to the library.
func randomValue(r *rand.Rand, depth, keys int, odd bool) any {
	n := 10
	if depth > 2 {
		n = 7 // no deeper containers
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		specials := []string{"", "plain", `"quoted" \ back`, "<tag> & amp", "line\nbreak\ttab\u0001\u001f", "\u2028\u2029", "caf\u00e9 \U0001F69A", "bad \xff\xfe utf8", string(make([]byte, r.IntN(40)))}
		return fmt.Sprint("s", r.IntN(1000), specials[r.IntN(len(specials))])
	case 3:
		floats := []float64{r.NormFloat64() * 1e3, 0, math.Copysign(0, -1), 1e-7, 1.5e-6, 1e-6, 123456789012345678901.0, 1e21, 1e22, -3.25e-9, 100, 0.1, 1.0 / 3}
		return floats[r.IntN(len(floats))]
	case 4:
		// every width of the compact encoding, both signs
		ints := []int{0, 5, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1}
		return ints[r.IntN(len(ints))]
	case 5:
		return int64(r.Int64N(1<<40) - 1<<39)
	case 6:
		if odd && r.IntN(4) == 0 {
			return float32(1.5) // left to the library
		}
		return time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC()
	case 7:
		m := map[string]any{}
		for i := range r.IntN(min(keys, 3) + 1) {
			m[fmt.Sprint("k", i)] = randomValue(r, depth+1, keys, odd)
		}
		return m
	case 8:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomValue(r, depth+1, keys, odd)
		}
		return a
	default:
		return []string{"a", fmt.Sprint(r.IntN(9))}
	}
}

func randomMap(r *rand.Rand, keys int, odd bool) map[string]any {
	if r.IntN(3) == 0 {
		return nil
	}
	m := map[string]any{}
	for i := range r.IntN(keys + 1) {
		m[fmt.Sprint("f", i)] = randomValue(r, 0, keys, odd)
	}
	return m
}

func randomEnvelope(r *rand.Rand, keys int, odd bool) *Envelope {
	pick := func(s ...string) string { return s[r.IntN(len(s))] }
	f := func() *float64 {
		if r.IntN(2) == 0 {
			return nil
		}
		v := r.Float64() * 100
		return &v
	}
	ev := &Event{EventID: pick("e1", "", "a-much-longer-event-identifier-past-thirty-one-bytes"), EventType: "harsh_braking",
		Category: pick(Categories...), Timestamp: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC(),
		Severity: pick(Severities...), Priority: pick(Priorities...),
		Source:    Source{VehicleID: pick("", "v1"), DriverID: pick("", "d1"), TripID: pick("", "t1"), FleetID: pick("", "f1")},
		Metadata:  Metadata{CorrelationID: pick("", "c"), SequenceNumber: r.Int64N(1 << 40), ProcessingTime: pick("", "3ms"), SourceSystem: pick("", "obd"), Late: r.IntN(2) == 0},
		EventData: randomMap(r, keys, odd), RiskAssessment: randomMap(r, keys, odd), AutomaticActions: randomMap(r, keys, odd),
		EmergencyResponse: randomMap(r, keys, odd), Escalation: randomMap(r, keys, odd), PredictiveIndicators: randomMap(r, keys, odd),
		PerformanceMetrics: randomMap(r, keys, odd), Enrichment: randomMap(r, keys, odd)}
	if r.IntN(2) == 0 {
		ev.Location = &Location{Latitude: r.Float64()*180 - 90, Longitude: r.Float64()*360 - 180, Address: pick("", "1 Main St"),
			Geofence: pick("", "yard"), Accuracy: f(), SpeedLimit: f(), RoadType: pick("", "primary"), EmergencyServicesDistance: f()}
	}
	if r.IntN(2) == 0 {
		ev.Recommendations = randomValue(r, 0, keys, odd)
	}
	return &Envelope{Org: "o", Env: pick("test", "live"), Kind: KindEvent, Event: ev, IngestedAt: time.Unix(r.Int64N(1<<35), r.Int64N(1e9)).UTC()}
}

// The encoder writes what the msgpack library writes: on 2,000 seeded
// random event envelopes (every optional field present and absent,
// nested free-form values, integers of every width), the library and
// the package's own decoder read both encodings the same, byte for byte
// when no map has two keys (the library writes a map's keys in Go's
// random order); a value of a type the encoder leaves alone makes it
// step aside.
func TestEventEncoderMatchesTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 29))
	left := 0
	for i := range 2000 {
		keys := 1
		if i%2 == 1 {
			keys = 5
		}
		e := randomEnvelope(r, keys, i%3 == 0)
		lib, err := msgpack.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		ours, ok := appendEventEnvelope(nil, e)
		if !ok {
			left++
			continue
		}
		if keys == 1 && !bytes.Equal(ours, lib) {
			t.Fatalf("envelope %d: bytes differ from the library's\nours %x\nlib  %x", i, ours, lib)
		}
		var a, b Envelope
		if err := msgpack.Unmarshal(ours, &a); err != nil {
			t.Fatalf("envelope %d: the library cannot read ours: %v", i, err)
		}
		if err := msgpack.Unmarshal(lib, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("envelope %d: the library reads\n%+v\nfrom ours, and from its own\n%+v", i, a.Event, b.Event)
		}
		x, err := Unmarshal(ours)
		if err != nil {
			t.Fatal(err)
		}
		y, err := Unmarshal(lib)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("envelope %d: Unmarshal reads\n%+v\nfrom ours, and from the library's\n%+v", i, x.Event, y.Event)
		}
	}
	if left == 0 || left > 600 {
		t.Errorf("the encoder stepped aside for %d of 2,000 envelopes, want some (those with a float32) and not most", left)
	}
	// and Marshal still encodes those, through the library
	e := randomEnvelope(r, 1, false)
	e.Event.EventData = map[string]any{"g": float32(0.5)}
	b, err := Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Unmarshal(b)
	if err != nil || out.Event.EventData["g"] != float32(0.5) {
		t.Fatalf("a float32 through Marshal: %v, %v", out, err)
	}
}

func BenchmarkMarshalEvent(b *testing.B) {
	ts := time.Date(2026, 11, 23, 10, 0, 0, 123000000, time.UTC)
	e := &Envelope{Org: "o", Env: "test", Kind: KindEvent, IngestedAt: ts,
		Event: &Event{EventID: "e1", EventType: "harsh_braking", Category: CategorySafety, Timestamp: ts,
			Severity: "high", Priority: "urgent", Source: Source{VehicleID: "v1", TripID: "t1"},
			Location:  &Location{Latitude: 40.1, Longitude: -83.2},
			EventData: map[string]any{"deceleration_g": 0.61, "speed_kmh": 54.0, "~seq": 12, "note": "x"}, Metadata: Metadata{CorrelationID: "t1", SequenceNumber: 7}}}
	b.Run("encoder", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := msgpack.Marshal(e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
