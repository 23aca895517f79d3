package trips_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/publish"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestHealthFollowsTheUploadPath: the upload path is healthy while
// uploads are stored and published, and degraded once the bus refuses
// the stored points.
func TestHealthFollowsTheUploadPath(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	open := embedbus.New(embedbus.Config{Partitions: 1})
	closed := embedbus.New(embedbus.Config{Partitions: 1})
	if err := closed.Close(ctx); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	good, err := trips.New(trips.Config{}, st, publish.New(open), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := trips.New(trips.Config{}, st, publish.New(closed), nil, log)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute).UTC()
	upload := func(svc *trips.Service, tripID string, at time.Time) {
		t.Helper()
		lat, lon := 40.0, -83.0
		r := &trips.BatchRequest{TripID: tripID, Locations: []trips.LocationIn{{Latitude: &lat, Longitude: &lon, Timestamp: at.Format(time.RFC3339Nano)}}}
		if _, err := svc.UploadBatch(ctx, "org-a", "test", r); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := good.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	if h := good.Health(ctx); h != "healthy" {
		t.Fatalf("before any upload: %s", h)
	}
	upload(good, tr.TripID, start.Add(time.Second))
	if h := good.Health(ctx); h != "healthy" {
		t.Fatalf("after a stored and published upload: %s", h)
	}
	upload(bad, tr.TripID, start.Add(2*time.Second))
	if h := bad.Health(ctx); h != "degraded" {
		t.Fatalf("after an upload the bus refused: %s, want degraded", h)
	}
}
