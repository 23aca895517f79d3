package trips_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// fakeClock is a Config.Now that moves only when the test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newServiceAt(t *testing.T, clk *fakeClock) *trips.Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := trips.New(trips.Config{Now: clk.now}, st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestPauseIsTimedOnTheServiceClock: a pause lasts from pause to resume
// (or stop) on Config.Now; the pauses of a trip add up.
func TestPauseIsTimedOnTheServiceClock(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	svc := newServiceAt(t, clk)
	ctx := context.Background()
	start := clk.now().Add(-30 * time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}

	p, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{Reason: "fuel"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.PausedAt.Equal(clk.now()) || p.PauseCount != 1 {
		t.Fatalf("pause: %+v, want paused at %v, count 1", p, clk.now())
	}
	clk.advance(90 * time.Second)
	g, err := svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != "paused" || g.PausedAt == nil || !g.PausedAt.Equal(p.PausedAt) || g.TotalPauseDuration != 0 {
		t.Fatalf("while paused: status %s, paused_at %v, total %v", g.Status, g.PausedAt, g.TotalPauseDuration)
	}
	r, err := svc.Resume(ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{Reason: "fueled"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "active" || r.TotalPauseDuration != 90 || r.PauseCount != 1 || !r.ResumedAt.Equal(clk.now()) {
		t.Fatalf("resume: %+v, want active after a 90 s pause", r)
	}

	// a second pause, still open at stop: stop closes it
	clk.advance(10 * time.Minute)
	if _, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{}); err != nil {
		t.Fatal(err)
	}
	clk.advance(30 * time.Second)
	s, err := svc.Stop(ctx, "org-a", "test", tr.TripID, trips.StopRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.EndTime.Equal(clk.now()) {
		t.Errorf("end time %v, want %v", s.EndTime, clk.now())
	}
	g, err = svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if g.PausedAt != nil || g.PauseCount != 2 || g.TotalPauseDuration != 120 {
		t.Errorf("after stop: paused_at %v, count %d, total %v; want closed, 2, 120 s", g.PausedAt, g.PauseCount, g.TotalPauseDuration)
	}
}

// TestResumeMetadataKeepsItsNumbers: the metadata of a resume, decoded
// from a request (numbers as json.Number), reaches the streams with its
// numbers as numbers once the trip_resumed event has crossed the bus's
// codec, not as strings.
func TestResumeMetadataKeepsItsNumbers(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	pub := &recorder{}
	svc, err := trips.New(trips.Config{Now: clk.now}, st, pub, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{Reason: "fuel"}); err != nil {
		t.Fatal(err)
	}
	md := map[string]any{"n": json.Number("1.5"), "big": json.Number("12345678901"), "flag": true,
		"o": map[string]any{"k": []any{json.Number("1"), json.Number("-2"), "x"}}}
	if _, err := svc.Resume(ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{Reason: "fueled", Metadata: md}); err != nil {
		t.Fatal(err)
	}
	var ev *event.Event
	pub.mu.Lock()
	for _, e := range pub.evs {
		if e.EventType == "trip_resumed" {
			ev = e
		}
	}
	pub.mu.Unlock()
	if ev == nil {
		t.Fatal("no trip_resumed event")
	}
	b, err := event.Marshal(&event.Envelope{Org: "org-a", Env: "test", Kind: event.KindEvent, Event: ev})
	if err != nil {
		t.Fatal(err)
	}
	back, err := event.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(back.Event.EventData["metadata"])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"big":12345678901,"flag":true,"n":1.5,"o":{"k":[1,-2,"x"]}}`; string(got) != want {
		t.Errorf("metadata on the stream %s, want %s", got, want)
	}
}

// northward is a batch of n points at 1 Hz from (lat, lon) at v km/h
// heading north, the first at at.
func northward(tripID string, at time.Time, lat, lon, v float64, n int) *trips.BatchRequest {
	b := &trips.BatchRequest{TripID: tripID}
	for i := range n {
		la, lo, sp, acc, hd := lat, lon, v, 4.0, 0.0
		b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &sp, AccuracyMeters: &acc, Heading: &hd,
			Timestamp: at.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)})
		lat += v / 3.6 / 111195.0
	}
	return b
}

// TestRouteArrivalsAfterAPause: a waypoint after a 10-minute pause is
// expected 10 minutes later than the driving alone would bring it: the
// pause is no delay.
func TestRouteArrivalsAfterAPause(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 3, 2, 7, 55, 0, 0, time.UTC)}
	svc := newServiceAt(t, clk)
	ctx := context.Background()
	start := clk.now().Add(-5 * time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UploadBatch(ctx, "org-a", "test", northward(tr.TripID, start, 40, -83, 36, 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{}); err != nil {
		t.Fatal(err)
	}
	clk.advance(10 * time.Minute)
	if _, err := svc.Resume(ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UploadBatch(ctx, "org-a", "test", northward(tr.TripID, clk.now().Add(time.Second), 40.027, -83, 36, 60)); err != nil {
		t.Fatal(err)
	}
	r, err := svc.Route(ctx, "org-a", "test", tr.TripID, trips.RouteQuery{IncludeWaypoints: true, Precision: 6})
	if err != nil {
		t.Fatal(err)
	}
	end := r.Waypoints[len(r.Waypoints)-1]
	if end.DelayMinutes > 0.1 {
		t.Errorf("end waypoint: delay %v min, expected %v, arrived %v", end.DelayMinutes, end.EstimatedArrival, end.ActualArrival)
	}
}
