package trips_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// request decodes body as a client's request of type T.
func request[T any](t *testing.T, body string) T {
	t.Helper()
	var r T
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return r
}

// refusedFields are the fields a validation error names, sorted; it fails
// the test when err is not one.
func refusedFields(t *testing.T, err error) []string {
	t.Helper()
	var ve *trips.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a validation error", err)
	}
	return slices.Sorted(maps.Keys(ve.Fields))
}

// TestPlaceWithoutACoordinateIsRefused: a start_location, a pause's or a
// resume's location or an end_location missing its latitude or longitude
// is refused, naming the coordinate, and the trip is as it was: nothing
// is stored or published at 0.
func TestPlaceWithoutACoordinateIsRefused(t *testing.T) {
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pub := &recorder{}
	svc, err := trips.New(trips.Config{}, st, pub, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	_, err = svc.Start(ctx, "org-a", "test", "tester", request[trips.StartRequest](t, `{"vehicle_id":"v5","start_location":{"latitude":39.97}}`))
	if got := refusedFields(t, err); !slices.Equal(got, []string{"start_location.longitude"}) {
		t.Errorf("start without longitude refused naming %v", got)
	}
	tr, err := svc.Start(ctx, "org-a", "test", "tester", request[trips.StartRequest](t, `{"vehicle_id":"v5","start_location":{"latitude":39.97,"longitude":-83.0}}`))
	if err != nil {
		t.Fatal(err)
	}
	id := tr.TripID
	published := func() int {
		pub.mu.Lock()
		defer pub.mu.Unlock()
		return len(pub.evs)
	}
	before := published()

	_, err = svc.Pause(ctx, "org-a", "test", id, request[trips.PauseRequest](t, `{"location":{"longitude":-83.0}}`))
	if got := refusedFields(t, err); !slices.Equal(got, []string{"location.latitude"}) {
		t.Errorf("pause without latitude refused naming %v", got)
	}
	if g, err := svc.Get(ctx, "org-a", "test", id); err != nil || g.Status != "active" || g.PauseCount != 0 {
		t.Fatalf("after the refused pause: status %s, pause_count %d, err %v; want active, 0", g.Status, g.PauseCount, err)
	}
	if _, err := svc.Pause(ctx, "org-a", "test", id, trips.PauseRequest{}); err != nil {
		t.Fatal(err)
	}
	before++ // trip_paused

	_, err = svc.Resume(ctx, "org-a", "test", id, request[trips.ResumeRequest](t, `{"location":{"latitude":39.97}}`))
	if got := refusedFields(t, err); !slices.Equal(got, []string{"location.longitude"}) {
		t.Errorf("resume without longitude refused naming %v", got)
	}
	if g, err := svc.Get(ctx, "org-a", "test", id); err != nil || g.Status != "paused" {
		t.Fatalf("after the refused resume: status %s, err %v; want paused", g.Status, err)
	}

	for _, c := range []struct{ body, want string }{
		{`{"end_location":{"latitude":40.03}}`, "end_location.longitude"},
		{`{"end_location":{"longitude":-83.0,"address":"Main St"}}`, "end_location.latitude"},
		{`{"end_location":{"latitude":null,"longitude":-83.0}}`, "end_location.latitude"},
		{`{"end_location":{}}`, "end_location.latitude end_location.longitude"},
	} {
		_, err := svc.Stop(ctx, "org-a", "test", id, request[trips.StopRequest](t, c.body))
		if got := strings.Join(refusedFields(t, err), " "); got != c.want {
			t.Errorf("stop %s refused naming %q, want %q", c.body, got, c.want)
		}
	}
	g, err := svc.Get(ctx, "org-a", "test", id)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != "paused" || g.EndLocation != nil {
		t.Errorf("after the refused stops: status %s, end_location %+v; want paused, none", g.Status, g.EndLocation)
	}
	if n := published(); n != before {
		t.Errorf("%d events published by refused requests", n-before)
	}

	s, err := svc.Stop(ctx, "org-a", "test", id, request[trips.StopRequest](t, `{"end_location":{"latitude":40.03,"longitude":-83.01,"address":"Depot"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if e := s.EndLocation; e == nil || e.Latitude != 40.03 || e.Longitude != -83.01 || e.Address == nil || *e.Address != "Depot" {
		t.Errorf("end_location %+v, want 40.03, -83.01, Depot", e)
	}
}

// TestDistanceFromPauseNeedsBothPlaces: distance_from_pause is the
// distance between the pause location and the resume location, and null
// when the trip was paused with no location known (no location given and
// no point uploaded yet), never 0.
func TestDistanceFromPauseNeedsBothPlaces(t *testing.T) {
	svc := newServiceAt(t, &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	for _, c := range []struct {
		name, pause, resume, want string
	}{
		{"pause location unknown", `{}`, `{"location":{"latitude":39.99,"longitude":-82.95}}`, `null`},
		{"both known", `{"location":{"latitude":40.0,"longitude":-82.95}}`, `{"location":{"latitude":39.99,"longitude":-82.95}}`, `1.112`},
		{"resumed where paused", `{"location":{"latitude":40.0,"longitude":-82.95}}`, `{}`, `0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-" + c.name})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Pause(ctx, "org-a", "test", tr.TripID, request[trips.PauseRequest](t, c.pause)); err != nil {
				t.Fatal(err)
			}
			r, err := svc.Resume(ctx, "org-a", "test", tr.TripID, request[trips.ResumeRequest](t, c.resume))
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if d := string(got["distance_from_pause"]); d != c.want {
				t.Errorf("distance_from_pause %s, want %s", d, c.want)
			}
		})
	}
}

// TestStartMetadataOverTheLimit: metadata over 64 KB at the start is the
// same error as on update (payload_too_large over HTTP), not a field's
// validation failure, and no trip is started.
func TestStartMetadataOverTheLimit(t *testing.T) {
	svc := newServiceAt(t, &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	big := map[string]any{"notes": strings.Repeat("x", 66000)}
	_, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "vbig", Metadata: big})
	var ve *trips.ValidationError
	if !errors.Is(err, trips.ErrMetadataTooLarge) || errors.As(err, &ve) {
		t.Fatalf("err = %v, want ErrMetadataTooLarge", err)
	}
	// the vehicle has no trip: a new one starts
	if _, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "vbig"}); err != nil {
		t.Fatalf("start after the refusal: %v", err)
	}
}

// TestStartTimeAfterTheEpoch: a start_time at or before
// 1970-01-01T00:00:00Z is refused naming it, as points before 1970 are,
// and no trip is started; one a millisecond later is kept as given.
func TestStartTimeAfterTheEpoch(t *testing.T) {
	g := newGarage(t)
	for _, ts := range []string{"0001-01-01T00:00:00Z", "1960-01-01T00:00:00Z", "1970-01-01T00:00:00Z"} {
		start, _ := time.Parse(time.RFC3339, ts)
		_, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-old", StartTime: &start})
		if got := refusedFields(t, err); !slices.Equal(got, []string{"start_time"}) {
			t.Errorf("start_time %s refused naming %v", ts, got)
		}
	}
	start := time.UnixMilli(1).UTC()
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-old", StartTime: &start})
	if err != nil {
		t.Fatalf("start_time %v: %v", start, err)
	}
	got, err := g.svc.Get(g.ctx, "org-a", "test", tr.TripID)
	if err != nil || !got.StartTime.Equal(start) {
		t.Errorf("start_time read back %v (%v), want %v", got.StartTime, err, start)
	}
}
