package trips_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// FuzzUploadBatch feeds arbitrary batch bodies through decoding and
// validation: the service must answer either a result or a field-keyed
// validation error, never panic, and never store a malformed point.
func FuzzUploadBatch(f *testing.F) {
	f.Add([]byte(`{"trip_id":"T","locations":[{"latitude":40,"longitude":-83,"timestamp":"2026-01-01T00:00:01Z","speed_kmh":30}]}`))
	f.Add([]byte(`{"trip_id":"T","locations":[{"latitude":91,"longitude":-83,"timestamp":"x"}]}`))
	f.Add([]byte(`{"trip_id":"T","locations":[{"latitude":1e308,"longitude":-1e308,"timestamp":"2026-01-01T00:00:01+14:00","accuracy_meters":0}]}`))
	f.Add([]byte(`{"trip_id":"","locations":null}`))
	svc := newService(f)
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, err := svc.Start(ctx, "o", "test", "fuzz", trips.StartRequest{VehicleID: "v", StartTime: &start})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r trips.BatchRequest
		if json.Unmarshal(body, &r) != nil {
			return
		}
		if r.TripID == "T" {
			r.TripID = tr.TripID
		}
		if len(r.Locations) > trips.MaxBatch {
			return
		}
		res, err := svc.UploadBatch(ctx, "o", "test", &r)
		var ve *trips.ValidationError
		switch {
		case err == nil:
			if res.ProcessedCount+res.RejectedCount != len(r.Locations) {
				t.Fatalf("counts %d+%d for %d points", res.ProcessedCount, res.RejectedCount, len(r.Locations))
			}
		case errors.As(err, &ve):
			if len(ve.Fields) == 0 {
				t.Fatal("validation error without fields")
			}
		case errors.Is(err, trips.ErrNotFound):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
