package detect_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
)

// The fuzz input is a 4-byte header of thresholds followed by 10-byte point
// records, each relative to the previous point so that the fuzzer reaches
// realistic tracks as easily as absurd ones:
//
//	header: speed limit km/h (u8, 0 = none), tolerance km/h (i8),
//	        braking threshold g/100 (i8, either sign), min harsh duration
//	        in 100 ms (u8)
//	point:  Δt in 50 ms (i16), Δlat and Δlon in 1e-5° (i16 each),
//	        speed ×1.5 km/h (u8), heading ×360/256° (u8), accuracy m (u8),
//	        flags (u8): 1 has speed, 2 has heading, 4 NaN latitude,
//	        8 +Inf accuracy, 16 NaN speed, 32 jump 45° north,
//	        64 negative speed, 128 one day later
const (
	fuzzHeader = 4
	fuzzRecord = 10
)

func decodeFuzz(data []byte) (detect.Thresholds, []detect.Point) {
	var th detect.Thresholds
	if len(data) < fuzzHeader {
		return th, nil
	}
	th.SpeedLimitKmh = float64(data[0])
	th.OverLimitKmh = float64(int8(data[1]))
	th.BrakingG = float64(int8(data[2])) / 100
	th.MinHarshDuration = time.Duration(data[3]) * 100 * time.Millisecond
	data = data[fuzzHeader:]

	tm := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	lat, lon := 48.85, 2.35
	var pts []detect.Point
	for ; len(data) >= fuzzRecord; data = data[fuzzRecord:] {
		r := data[:fuzzRecord]
		tm = tm.Add(time.Duration(int16(binary.LittleEndian.Uint16(r[0:]))) * 50 * time.Millisecond)
		lat += float64(int16(binary.LittleEndian.Uint16(r[2:]))) * 1e-5
		lon += float64(int16(binary.LittleEndian.Uint16(r[4:]))) * 1e-5
		flags := r[9]
		p := detect.Point{
			Time: tm, Lat: lat, Lon: lon,
			Speed: float64(r[6]) * 1.5, HasSpeed: flags&1 != 0,
			Heading: float64(r[7]) * 360 / 256, HasHeading: flags&2 != 0,
			Accuracy: float64(r[8]),
		}
		if flags&4 != 0 {
			p.Lat = math.NaN()
		}
		if flags&8 != 0 {
			p.Accuracy = math.Inf(1)
		}
		if flags&16 != 0 {
			p.Speed = math.NaN()
		}
		if flags&32 != 0 {
			p.Lat += 45
		}
		if flags&64 != 0 {
			p.Speed = -p.Speed
		}
		if flags&128 != 0 {
			tm = tm.Add(24 * time.Hour)
			p.Time = tm
		}
		pts = append(pts, p)
	}
	return th, pts
}

// encodeFuzz is the inverse of decodeFuzz for a track made by track(),
// re-based on the fuzz origin, to seed the corpus.
func encodeFuzz(limit, over int, pts []detect.Point) []byte {
	b := []byte{byte(limit), byte(int8(over)), 0, 0}
	prev := t0
	lat, lon := 48.85, 2.35 // position decoded so far
	for _, p := range pts {
		dt := int16(p.Time.Sub(prev) / (50 * time.Millisecond))
		prev = p.Time
		dlat := int16(math.Round((p.Lat - startLat + 48.85 - lat) * 1e5))
		dlon := int16(math.Round((p.Lon - startLon + 2.35 - lon) * 1e5))
		lat += float64(dlat) * 1e-5
		lon += float64(dlon) * 1e-5
		var flags byte
		if p.HasSpeed {
			flags |= 1
		}
		if p.HasHeading {
			flags |= 2
		}
		r := make([]byte, fuzzRecord)
		binary.LittleEndian.PutUint16(r[0:], uint16(dt))
		binary.LittleEndian.PutUint16(r[2:], uint16(dlat))
		binary.LittleEndian.PutUint16(r[4:], uint16(dlon))
		r[6] = byte(math.Min(255, math.Round(p.Speed/1.5)))
		r[7] = byte(int(math.Round(p.Heading*256/360)) % 256)
		r[8] = byte(math.Min(255, p.Accuracy))
		r[9] = flags
		b = append(b, r...)
	}
	return b
}

func FuzzDetectorFeed(f *testing.F) {
	f.Add([]byte{})
	f.Add(encodeFuzz(50, 0, scenario()[:600]))
	f.Fuzz(func(t *testing.T, data []byte) {
		th, pts := decodeFuzz(data)
		d := detect.New(th)
		var evs []detect.Event
		for i, p := range pts {
			evs = d.Feed(p, evs)
			if i%97 == 0 { // also exercise mid-stream flushes
				evs = d.Flush(evs)
			}
		}
		evs = d.Flush(evs)
		for _, e := range evs {
			checkEvent(t, e)
		}
	})
}

func checkEvent(t *testing.T, e detect.Event) {
	t.Helper()
	m := e.Metrics
	for _, v := range []float64{e.Lat, e.Lon, e.Confidence, m.AccelerationG, m.SpeedChangeKmh, m.SpeedLimitKmh, m.ActualSpeedKmh, m.ExcessSpeedKmh, m.DurationSeconds} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("non-finite field in %+v", e)
		}
	}
	switch e.Type {
	case detect.TypeHarshAcceleration, detect.TypeHarshBraking, detect.TypeHarshCornering, detect.TypeSpeeding, detect.TypeIdle:
	default:
		t.Fatalf("unknown type in %+v", e)
	}
	switch e.Severity {
	case detect.SeverityModerate, detect.SeverityHigh, detect.SeverityCritical:
	default:
		t.Fatalf("unknown severity in %+v", e)
	}
	if e.Confidence < 0 || e.Confidence > 1 || m.DurationSeconds < 0 || e.End.Before(e.Start) ||
		e.Lat < -90 || e.Lat > 90 || e.Lon < -180 || e.Lon > 180 {
		t.Fatalf("out of range: %+v", e)
	}
}

// The corpus encoding keeps what matters: a seed made from a track finds the
// track's events.
func TestFuzzEncoding(t *testing.T) {
	pts := scenario()
	th := detect.Thresholds{SpeedLimitKmh: 50}
	want := feed(th, pts)
	th2, pts2 := decodeFuzz(encodeFuzz(50, 0, pts))
	got := feed(th2, pts2)
	if len(got) != len(want) {
		t.Fatalf("decoded track gave %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Type != want[i].Type {
			t.Errorf("event %d: %s, want %s", i, got[i].Type, want[i].Type)
		}
	}
}
