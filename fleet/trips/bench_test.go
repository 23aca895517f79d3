package trips_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

func newService(tb testing.TB) *trips.Service {
	tb.Helper()
	return newServiceWith(tb, trips.Config{})
}

func newServiceWith(tb testing.TB, cfg trips.Config) *trips.Service {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	svc, err := trips.New(cfg, st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

func batch(trip string, start time.Time, from, n int) *trips.BatchRequest {
	r := &trips.BatchRequest{TripID: trip, Locations: make([]trips.LocationIn, n)}
	for i := range r.Locations {
		s := from + i
		lat, lon, sp, hd, acc := 40+float64(s)*1e-4, -83.0, 40.0, 0.0, 5.0
		r.Locations[i] = trips.LocationIn{Latitude: &lat, Longitude: &lon, Timestamp: start.Add(time.Duration(s) * time.Second).Format(time.RFC3339),
			SpeedKmh: &sp, Heading: &hd, AccuracyMeters: &acc}
	}
	return r
}

// BenchmarkUploadBatch measures validation, detection, analytics and the
// durable SQLite write of 1,000-point batches over 64 trips.
func BenchmarkUploadBatch(b *testing.B) { benchUpload(b, newService(b), 1000) }

// BenchmarkUploadOnePoint is a vehicle reporting as it goes: one point an
// upload, over 64 trips, each upload on its own (no group commit).
func BenchmarkUploadOnePoint(b *testing.B) { benchUpload(b, newService(b), 1) }

// BenchmarkUploadBatchRoads is BenchmarkUploadBatch with a road network
// (the street fixture) and the road matcher's workers running beside
// the uploads on the same cores.
func BenchmarkUploadBatchRoads(b *testing.B) { benchRoads(b, true) }

// BenchmarkUploadBatchRoadsAlone is the upload path with a road network
// and no worker running: what an upload itself costs (its points are
// queued, then judged without a road past the bound).
func BenchmarkUploadBatchRoadsAlone(b *testing.B) { benchRoads(b, false) }

func benchRoads(b *testing.B, workers bool) {
	svc := newServiceWith(b, trips.Config{Roads: mapmatch.New(street{}, routing.Auto, mapmatch.Config{})})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if workers {
		go svc.RunRoads(ctx)
	}
	benchUpload(b, svc, 1000)
}

func benchUpload(b *testing.B, svc *trips.Service, points int) {
	ctx := context.Background()
	start := time.Now().Add(-72 * time.Hour).UTC().Truncate(time.Second)
	const nTrips = 64
	ids := make([]string, nTrips)
	for i := range ids {
		t, err := svc.Start(ctx, "o", "test", "bench", trips.StartRequest{VehicleID: fmt.Sprintf("v%d", i), StartTime: &start})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = t.TripID
	}
	reqs := make([]*trips.BatchRequest, b.N)
	for i := range reqs {
		reqs[i] = batch(ids[i%nTrips], start, (i/nTrips)*points, points)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := svc.UploadBatch(ctx, "o", "test", reqs[i])
		if err != nil || res.ProcessedCount != points {
			b.Fatalf("%v %+v", err, res.RejectedCount)
		}
	}
	b.ReportMetric(float64(b.N*points)/b.Elapsed().Seconds(), "points/s")
}
