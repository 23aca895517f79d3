package analytics

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
)

// TestStateBytes: a running state is written as encoding/json writes
// it, byte for byte (totals, filters, pauses and the last point with
// fractions, a stand and a hard stop among them), and reads back to the
// same bytes.
func TestStateBytes(t *testing.T) {
	var r Running
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 123_000_000, time.UTC)
	lat := 40.0
	for k := range 400 {
		kmh := 40 + 30*math.Sin(float64(k)/17)
		if k >= 150 && k < 190 {
			kmh = 0
		}
		lat += kmh / 3.6 / 111_195
		r.Add(detect.Point{Time: t0.Add(time.Duration(k) * time.Second), Lat: lat, Lon: -83 + 1e-7*float64(k*k),
			Speed: kmh, HasSpeed: k%5 != 0, Heading: math.Mod(float64(k)*7.3, 360), HasHeading: k%3 != 0, Accuracy: 3 + float64(k%7)/3})
	}
	r.Pause(t0.Add(150*time.Second), t0.Add(170*time.Second))
	got, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(r.state())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("MarshalJSON\n%s\nencoding/json\n%s", got, want)
	}
	var back Running
	if err := back.UnmarshalJSON(got); err != nil {
		t.Fatal(err)
	}
	if again, err := back.MarshalJSON(); err != nil || !bytes.Equal(again, got) {
		t.Fatalf("read back and written again: %v\n%s\n%s", err, again, got)
	}
}
