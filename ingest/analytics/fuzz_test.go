package analytics_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
)

// FuzzRunningAdd feeds 8-byte records: Δt in 100 ms (i16), Δlat and Δlon
// in 1e-5° (i16 each), speed in km/h (u8, 255 = none) and flags (u8):
// the low 5 bits are the accuracy in 2 m steps (0 = unknown, 31 = +Inf),
// 32 NaN latitude, 64 a pause of Δt before the point, 128 an event of type
// Δlat mod 5 and duration Δlon seconds.
func FuzzRunningAdd(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{10, 0, 100, 0, 0, 0, 50, 3, 10, 0, 100, 0, 0, 0, 50, 3 | 64, 10, 0, 1, 0, 2, 0, 255, 128 | 31})
	f.Fuzz(func(t *testing.T, data []byte) {
		var r analytics.Running
		tm := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		lat, lon := 48.85, 2.35
		types := []string{detect.TypeHarshAcceleration, detect.TypeHarshBraking, detect.TypeHarshCornering, detect.TypeSpeeding, detect.TypeIdle}
		for ; len(data) >= 8; data = data[8:] {
			dt := time.Duration(int16(binary.LittleEndian.Uint16(data))) * 100 * time.Millisecond
			dlat, dlon := int16(binary.LittleEndian.Uint16(data[2:])), int16(binary.LittleEndian.Uint16(data[4:]))
			flags := data[7]
			if flags&64 != 0 {
				r.Pause(tm, tm.Add(dt))
			}
			tm = tm.Add(dt)
			lat += float64(dlat) * 1e-5
			lon += float64(dlon) * 1e-5
			p := detect.Point{Time: tm, Lat: lat, Lon: lon, Speed: float64(data[6]), HasSpeed: data[6] != 255, Accuracy: 2 * float64(flags&31)}
			if flags&31 == 31 {
				p.Accuracy = math.Inf(1)
			}
			if flags&32 != 0 {
				p.Lat = math.NaN()
			}
			r.Add(p)
			if flags&128 != 0 {
				r.AddEvent(detect.Event{Type: types[int(uint16(dlat))%len(types)], Severity: detect.SeverityHigh,
					Metrics: detect.Metrics{DurationSeconds: float64(dlon)}})
			}
		}
		s := r.Summary(analytics.Vehicle{})
		for _, v := range []float64{s.DistanceKm, s.DurationMinutes, s.MaxSpeedKmh, s.AvgSpeedKmh, s.IdleTimeMinutes,
			s.SafetyScore, s.EcoScore, s.FuelConsumedLiters, s.FuelEfficiencyKmpl} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("bad summary %+v", s)
			}
		}
		if s.SafetyScore > 100 || s.EcoScore > 100 {
			t.Fatalf("score over 100: %+v", s)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back analytics.Running
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got := back.Summary(analytics.Vehicle{})
		// The last point is kept as given; JSON cannot carry its NaN fields.
		got.Last, s.Last = detect.Point{}, detect.Point{}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("round trip changed the summary:\n%+v\n%+v", got, s)
		}
	})
}
