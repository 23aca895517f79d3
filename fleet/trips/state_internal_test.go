package trips

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// drivenState is the stored state of a trip after 300 points uploaded
// in batches of 5 by a described device: a drive that speeds up and
// slows down, brakes, stands and drives on, with speeds, headings and
// accuracies.
func drivenState(tb testing.TB) state {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	svc, err := New(Config{}, st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	tr, err := svc.Start(ctx, "o", "test", "u", StartRequest{VehicleID: "v1", StartTime: &start})
	if err != nil {
		tb.Fatal(err)
	}
	lat := 40.0
	for b := 0; b < 60; b++ {
		req := &BatchRequest{TripID: tr.TripID, Locations: make([]LocationIn, 5), DeviceInfo: &BatchDeviceInfo{DeviceID: "d1", DeviceModel: "Pixel <8>", OSVersion: "14", AppVersion: "2.1&beta"}}
		for i := range req.Locations {
			k := b*5 + i
			kmh := 40 + 30*math.Sin(float64(k)/20)
			switch {
			case k >= 100 && k < 130:
				kmh = 0 // standing
			case k >= 85 && k < 97:
				kmh = 60
			case k >= 97 && k < 100:
				kmh = 60 - 18*float64(k-96) // braking at 5 m/s² for 3 s
			}
			lat += kmh / 3.6 / 111_195
			la, lo, sp, hd, acc := lat, -83+1e-6*float64(k), kmh, math.Mod(float64(k)*7.3, 360), 3+float64(k%7)
			req.Locations[i] = LocationIn{Latitude: &la, Longitude: &lo, Timestamp: start.Add(time.Duration(k) * time.Second).Format(time.RFC3339),
				SpeedKmh: &sp, Heading: &hd, AccuracyMeters: &acc}
		}
		if _, err := svc.UploadBatch(ctx, "o", "test", req); err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				tb.Fatalf("%s %v", ve.Code, ve.Fields)
			}
			tb.Fatal(err)
		}
	}
	t, s, err := svc.get(ctx, scope("o", "test"), tr.TripID)
	if err != nil {
		tb.Fatal(err)
	}
	if s.Blocks != 60 || len(t.State) == 0 || s.Last == nil || s.Device == nil {
		tb.Fatalf("state of %d blocks, %d bytes, last point %v, device %v", s.Blocks, len(t.State), s.Last, s.Device)
	}
	return s
}

// TestStateEncoding: a trip's running state is written as encoding/json
// writes it, byte for byte, and reads back to the same bytes.
func TestStateEncoding(t *testing.T) {
	s := drivenState(t)
	got, err := encodeState(&s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded\n%s\nencoding/json\n%s", got, want)
	}
	back, err := decodeState(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeState(&back)
	if err != nil || !bytes.Equal(again, got) {
		t.Fatalf("read back and encoded again: %v\n%s\n%s", err, again, got)
	}
}

// BenchmarkStateEncoding: encoding a trip's running state, which every
// upload stores with the trip.
func BenchmarkStateEncoding(b *testing.B) {
	s := drivenState(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeState(&s); err != nil {
			b.Fatal(err)
		}
	}
}
