package analytics_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
)

// benchTrack is 34 minutes of 1 Hz points with jitter: parked, then at 60
// and at 100 km/h, so that a Detector with an 80 km/h limit finds idle and
// speeding events.
func benchTrack(j jitter) []detect.Point {
	var pts []detect.Point
	start, lat := t0, 52.0
	for _, d := range []drive{
		{kmh: 0, dur: 4 * time.Minute},
		{kmh: 60, dur: 10 * time.Minute},
		{kmh: 100, dur: 20 * time.Minute},
	} {
		d.start, d.lat, d.lon = start, lat, 4
		seg := d.points(j)
		pts = append(pts, seg...)
		start = start.Add(d.dur + time.Second)
		lat += d.kmh / 3.6 * (d.dur + time.Second).Seconds() / earthR * 180 / 3.141592653589793
	}
	return pts
}

var benchJitter = []struct {
	name string
	j    jitter
}{
	{"reported", jitter{seed: 1, posM: 5, accuracy: 5, speedKmh: 2, badShare: 0.02}},
	{"positions", jitter{seed: 1, posM: 5, accuracy: 5, speedKmh: -1, badShare: 0.02}},
}

// BenchmarkRunningAdd measures one point through Running.Add.
func BenchmarkRunningAdd(b *testing.B) {
	for _, c := range benchJitter {
		b.Run(c.name, func(b *testing.B) {
			pts := benchTrack(c.j)
			var r analytics.Running
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Add(pts[i])
				if i++; i == len(pts) {
					r, i = analytics.Running{}, 0
				}
			}
		})
	}
}

// BenchmarkTripPoint measures what the ingest path does per point: the
// Detector, then Running.Add, then Running.AddEvent for each event found.
func BenchmarkTripPoint(b *testing.B) {
	for _, c := range benchJitter {
		b.Run(c.name, func(b *testing.B) {
			pts := benchTrack(c.j)
			d := detect.New(detect.Thresholds{SpeedLimitKmh: 80})
			var r analytics.Running
			out := make([]detect.Event, 0, 16)
			events := 0
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				out = d.Feed(pts[i], out[:0])
				r.Add(pts[i])
				for _, e := range out {
					r.AddEvent(e)
				}
				events += len(out)
				if i++; i == len(pts) {
					for _, e := range d.Flush(out[:0]) {
						r.AddEvent(e)
					}
					r, i = analytics.Running{}, 0
				}
			}
			if b.N > 2*len(pts) && events == 0 {
				b.Fatal("no events: the benchmark does not exercise the event path")
			}
		})
	}
}
