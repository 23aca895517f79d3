package detect_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
)

// BenchmarkDetectorFeed measures one point through a Detector in the
// steady state; at the end of the track the Detector is flushed (no
// allocation) and the track replayed.
func BenchmarkDetectorFeed(b *testing.B) {
	for _, c := range []struct {
		name string
		n    noise
	}{
		{"reported", jitter(99)},
		{"positions", func() noise { n := jitter(99); n.noSpeed, n.noHeading = true, true; return n }()},
	} {
		b.Run(c.name, func(b *testing.B) {
			var legs []leg
			for range 3 {
				legs = append(legs, smoothDrive()...)
			}
			pts := track(time.Second, c.n, legs...)
			d := detect.New(detect.Thresholds{SpeedLimitKmh: 60})
			out := make([]detect.Event, 0, 16)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				out = d.Feed(pts[i], out[:0])
				if i++; i == len(pts) {
					out = d.Flush(out[:0])
					i = 0
				}
			}
		})
	}
}
