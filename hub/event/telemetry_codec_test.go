package event

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func f64(f float64) *float64 { return &f }

// reflected decodes as Unmarshal did before decodeTelemetry.
func reflected(b []byte) (*Envelope, error) {
	var e Envelope
	err := msgpack.Unmarshal(b, &e)
	return &e, err
}

// equal compares decoded values, NaN equal to NaN and times by instant
// and zone.
func equal(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, has := y[k]
			if !has || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *float64:
		y, ok := b.(*float64)
		return ok && (x == nil) == (y == nil) && (x == nil || equal(*x, *y))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location().String() == y.Location().String()
	}
	return reflect.DeepEqual(a, b)
}

func equalEnvelopes(a, b *Envelope) bool {
	if a.Org != b.Org || a.Env != b.Env || a.Kind != b.Kind || !equal(a.IngestedAt, b.IngestedAt) ||
		a.Event != nil || b.Event != nil || a.Point != nil || b.Point != nil || a.Points != nil || b.Points != nil ||
		(a.Telemetry == nil) != (b.Telemetry == nil) {
		return false
	}
	if a.Telemetry == nil {
		return true
	}
	x, y := a.Telemetry, b.Telemetry
	if !equal(x.Timestamp, y.Timestamp) || x.VehicleID != y.VehicleID || x.DataType != y.DataType || x.Sequence != y.Sequence ||
		!equal(x.Data, y.Data) || (x.QualityIndicators == nil) != (y.QualityIndicators == nil) {
		return false
	}
	if q, r := x.QualityIndicators, y.QualityIndicators; q != nil {
		return equal(q.SignalStrength, r.SignalStrength) && equal(q.DataCompleteness, r.DataCompleteness) && q.SensorHealth == r.SensorHealth
	}
	return true
}

var (
	tsUTC = time.Date(2026, 11, 23, 10, 0, 1, 250_000_000, time.UTC)
	tsSec = time.Date(2026, 11, 23, 10, 0, 1, 0, time.UTC)
	tsOld = time.Date(1950, 1, 1, 0, 0, 0, 5, time.UTC)    // before 1970: 12-byte form
	tsFar = time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC)    // past 2^34 s: 12-byte form
	tsMid = time.Date(2100, 6, 1, 12, 0, 0, 999, time.UTC) // 8-byte form
)

// The encoder writes what Marshal writes: byte for byte when every map has
// one entry (Marshal walks a Go map in random order), and the same
// decoded envelope otherwise.
func TestTelemetryEncoderMatchesMarshal(t *testing.T) {
	for _, ts := range []time.Time{tsUTC, tsSec, tsOld, tsFar, tsMid, {}} {
		w := NewTelemetryEncoder(0)
		w.Begin("org-a", "live")
		w.Timestamp(ts)
		w.VehicleID([]byte("veh-1"))
		w.DataType("fuel_system")
		w.Sequence(1 << 40)
		w.BeginData()
		w.BeginGroup([]byte("fuel_level"))
		w.Number([]byte("percentage"), 65.5)
		w.EndGroup()
		w.EndData()
		w.Quality(f64(88), f64(99.5), []byte("good"))
		got := w.End(tsUTC)
		want, err := Marshal(&Envelope{Org: "org-a", Env: "live", Kind: KindTelemetry, IngestedAt: tsUTC, Telemetry: &Telemetry{
			Timestamp: ts, VehicleID: "veh-1", DataType: "fuel_system", Sequence: 1 << 40,
			Data:              map[string]any{"fuel_level": map[string]any{"percentage": 65.5}},
			QualityIndicators: &QualityIndicators{SignalStrength: f64(88), DataCompleteness: f64(99.5), SensorHealth: "good"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v:\n got %x\nwant %x", ts, got, want)
		}
	}
}

func TestTelemetryEncoderLargeAndOptional(t *testing.T) {
	w := NewTelemetryEncoder(16)
	var want []*Envelope
	var got [][]byte
	for i, n := range []int{0, 1, 15, 16, 17, 40, 300} {
		w.Begin("o", strings.Repeat("e", i*20)) // fixstr, str8
		w.DataType("environmental")
		w.VehicleID([]byte(strings.Repeat("v", n))) // up to str16
		w.BeginData()
		data := map[string]any{}
		for g := range n % 33 {
			name := fmt.Sprintf("g%d", g)
			w.BeginGroup([]byte(name))
			group := map[string]any{}
			for f := range n % 65 {
				fn := fmt.Sprintf("f%d", f)
				w.Number([]byte(fn), float64(f)/3)
				group[fn] = float64(f) / 3
			}
			w.EndGroup()
			data[name] = group
		}
		w.BeginGroup([]byte("status"))
		w.Bool([]byte("on"), n%2 == 0)
		w.Text([]byte("state"), []byte("ok"))
		w.BeginCodes([]byte("codes"))
		codes := []any{}
		for c := range n {
			w.Code([]byte(fmt.Sprint("P", c)))
			codes = append(codes, fmt.Sprint("P", c))
		}
		w.EndCodes()
		w.EndGroup()
		data["status"] = map[string]any{"on": n%2 == 0, "state": "ok", "codes": codes}
		w.EndData()
		if n == 15 {
			w.Quality(nil, f64(1), nil)
		}
		w.Timestamp(tsMid)
		got = append(got, w.End(tsSec))
		tm := &Telemetry{Timestamp: tsMid, VehicleID: strings.Repeat("v", n), DataType: "environmental", Data: data}
		if n == 15 {
			tm.QualityIndicators = &QualityIndicators{DataCompleteness: f64(1)}
		}
		want = append(want, &Envelope{Org: "o", Env: strings.Repeat("e", i*20), Kind: KindTelemetry, IngestedAt: tsSec, Telemetry: tm})
	}
	for i, b := range got {
		dec, err := reflected(b)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		wb, _ := Marshal(want[i])
		exp, _ := reflected(wb)
		if !equalEnvelopes(dec, exp) {
			t.Errorf("%d: decoded %+v\nwant %+v", i, dec.Telemetry, exp.Telemetry)
		}
		fast, err := Unmarshal(b)
		if err != nil || !equalEnvelopes(fast, exp) {
			t.Errorf("%d: Unmarshal %v %+v", i, err, fast)
		}
	}
}

// decodeTelemetry gives what the reflected decoder gives, for what
// Marshal writes of telemetry with values of every msgpack type.
func TestDecodeTelemetryMatchesReflection(t *testing.T) {
	data := map[string]any{
		"engine": map[string]any{"rpm": 2150.0, "neg": -3.5, "nan": math.NaN(), "f32": float32(1.5)},
		"ints": map[string]any{"i8": int8(-3), "fix": int8(7), "u8": uint8(200), "u16": uint16(60000), "u32": uint32(1 << 31),
			"u64": uint64(1 << 63), "i16": int16(-300), "i32": int32(-1 << 20), "i64": int64(-1 << 40), "int": 5},
		"mixed": map[string]any{"nil": nil, "b": true, "f": false, "s": "x", "long": strings.Repeat("y", 70000),
			"arr": []any{"a", 1.5, []any{}, map[string]any{"deep": []any{nil}}}},
		"empty": map[string]any{},
	}
	for _, tm := range []*Telemetry{
		{Timestamp: tsUTC, VehicleID: "v", DataType: "engine_diagnostics", Sequence: 7, Data: data,
			QualityIndicators: &QualityIndicators{SignalStrength: f64(1), SensorHealth: "good"}},
		{Timestamp: tsOld, Sequence: -5},
		{Timestamp: tsFar, Sequence: 1 << 62, QualityIndicators: &QualityIndicators{}},
		{},
	} {
		for _, at := range []time.Time{tsUTC, {}} {
			b, err := Marshal(&Envelope{Org: "o", Env: "e", Kind: KindTelemetry, Telemetry: tm, IngestedAt: at})
			if err != nil {
				t.Fatal(err)
			}
			fast, ok := decodeTelemetry(b)
			if !ok {
				t.Fatalf("decodeTelemetry refused %+v", tm)
			}
			slow, err := reflected(b)
			if err != nil {
				t.Fatal(err)
			}
			if !equalEnvelopes(fast, slow) {
				t.Errorf("decoded\n%+v\nwant\n%+v", fast.Telemetry, slow.Telemetry)
			}
		}
	}
	// what it does not read, it leaves to reflection
	ev, _ := Marshal(&Envelope{Org: "o", Kind: KindEvent, Event: &Event{EventID: "e1"}})
	pt, _ := Marshal(&Envelope{Org: "o", Kind: KindPoints, Points: []Point{{TripID: "t"}}})
	for _, b := range [][]byte{ev, pt, {0x80}, {0xc0}, nil, append(append([]byte{}, ev...), 0)} {
		if _, ok := decodeTelemetry(b); ok {
			t.Errorf("decodeTelemetry took %x", b)
		}
	}
	e, err := Unmarshal(ev)
	if err != nil || e.Event == nil || e.Event.EventID != "e1" {
		t.Fatalf("event envelope: %v %+v", err, e)
	}
}

// FuzzDecodeTelemetry: whatever decodeTelemetry takes, the reflected
// decoder decodes to the same envelope.
func FuzzDecodeTelemetry(f *testing.F) {
	w := NewTelemetryEncoder(0)
	w.Begin("o", "e")
	w.Timestamp(tsUTC)
	w.VehicleID([]byte("veh"))
	w.DataType("engine_diagnostics")
	w.BeginData()
	w.BeginGroup([]byte("status_codes"))
	w.Number([]byte("dtc_count"), 2)
	w.Bool([]byte("mil_status"), true)
	w.BeginCodes([]byte("pending_codes"))
	w.Code([]byte("P0300"))
	w.EndCodes()
	w.EndGroup()
	w.EndData()
	w.Quality(f64(50), nil, []byte("ok"))
	f.Add(w.End(tsSec))
	b, _ := Marshal(&Envelope{Kind: KindTelemetry, Telemetry: &Telemetry{Sequence: 300, Data: map[string]any{"a": []any{int8(1), uint16(9), nil, "s"}}}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeTelemetry(b)
		if !ok {
			return
		}
		slow, err := reflected(b)
		if err != nil {
			t.Fatalf("reflection fails where decodeTelemetry took it: %v", err)
		}
		if !equalEnvelopes(fast, slow) {
			t.Fatalf("decoded\n%+v\nwant\n%+v", fast.Telemetry, slow.Telemetry)
		}
	})
}

func BenchmarkTelemetryCodec(b *testing.B) {
	tm := &Telemetry{Timestamp: tsUTC, VehicleID: "veh-00042", DataType: "vehicle_dynamics", Sequence: 1842,
		Data: map[string]any{
			"motion":   map[string]any{"speed_kmh": 72.4, "speed_mph": 45.0, "acceleration_x": 0.12, "acceleration_y": -0.03, "acceleration_z": 0.98, "angular_velocity_z": -0.5},
			"braking":  map[string]any{"brake_pedal_position": 0.0, "brake_pressure": 0.0, "abs_active": false, "brake_temp_front": 120.0, "brake_temp_rear": 95.0},
			"steering": map[string]any{"steering_angle": -5.5, "steering_rate": 2.1},
		},
		QualityIndicators: &QualityIndicators{SignalStrength: f64(88), DataCompleteness: f64(99.5)}}
	env := &Envelope{Org: "org", Env: "test", Kind: KindTelemetry, Telemetry: tm, IngestedAt: tsSec}
	msg, err := Marshal(env)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Marshal(env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Encoder", func(b *testing.B) {
		// the same message, its data laid out as the intake reads it
		type field struct {
			name []byte
			v    any
		}
		type group struct {
			name   []byte
			fields []field
		}
		var groups []group
		for g, fs := range tm.Data {
			gr := group{name: []byte(g)}
			for k, v := range fs.(map[string]any) {
				gr.fields = append(gr.fields, field{[]byte(k), v})
			}
			groups = append(groups, gr)
		}
		id := []byte(tm.VehicleID)
		b.ReportAllocs()
		w := NewTelemetryEncoder(1 << 20)
		for b.Loop() {
			w.buf = w.buf[:0] // one envelope's worth of buffer, reused
			w.Begin(env.Org, env.Env)
			w.Timestamp(tm.Timestamp)
			w.VehicleID(id)
			w.DataType(tm.DataType)
			w.Sequence(tm.Sequence)
			w.BeginData()
			for _, g := range groups {
				w.BeginGroup(g.name)
				for _, f := range g.fields {
					switch v := f.v.(type) {
					case float64:
						w.Number(f.name, v)
					case bool:
						w.Bool(f.name, v)
					}
				}
				w.EndGroup()
			}
			w.EndData()
			w.Quality(tm.QualityIndicators.SignalStrength, tm.QualityIndicators.DataCompleteness, nil)
			w.End(env.IngestedAt)
		}
	})
	b.Run("Unmarshal/reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := reflected(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Unmarshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
