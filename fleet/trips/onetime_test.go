package trips_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// tickingClock is a Config.Now that moves a millisecond on every read, so
// two reads of it for one change never agree.
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// TestAChangeHasOneTime: every time a change shows is the same instant,
// however the clock moves while it is made: a metadata update's
// updated_at, its metadata.updated_at and its history entry's timestamp;
// a pause's paused_at, a resume's resumed_at and a stop's end_time and
// the trip's updated_at after each.
func TestAChangeHasOneTime(t *testing.T) {
	clk := &tickingClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := trips.New(trips.Config{Now: clk.now}, st, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	updated := func() time.Time {
		t.Helper()
		g, err := svc.Get(ctx, "org-a", "test", tr.TripID)
		if err != nil {
			t.Fatal(err)
		}
		return g.UpdatedAt
	}

	m, err := svc.UpdateMetadata(ctx, "org-a", "test", tr.TripID, "tester", trips.MetadataRequest{Metadata: map[string]any{"route": "north"}})
	if err != nil {
		t.Fatal(err)
	}
	mdAt, err := time.Parse(time.RFC3339Nano, m.Metadata["updated_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	last := m.MetadataHistory[len(m.MetadataHistory)-1].Timestamp
	if !m.UpdatedAt.Equal(mdAt) || !m.UpdatedAt.Equal(last) || !m.UpdatedAt.Equal(updated()) {
		t.Errorf("metadata: updated_at %v, metadata.updated_at %v, history timestamp %v, trip updated_at %v", m.UpdatedAt, mdAt, last, updated())
	}

	p, err := svc.Pause(ctx, "org-a", "test", tr.TripID, trips.PauseRequest{Reason: "fuel"})
	if err != nil {
		t.Fatal(err)
	}
	if u := updated(); !p.PausedAt.Equal(u) {
		t.Errorf("pause: paused_at %v, trip updated_at %v", p.PausedAt, u)
	}
	r, err := svc.Resume(ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{Reason: "fueled"})
	if err != nil {
		t.Fatal(err)
	}
	if u := updated(); !r.ResumedAt.Equal(u) {
		t.Errorf("resume: resumed_at %v, trip updated_at %v", r.ResumedAt, u)
	}
	s, err := svc.Stop(ctx, "org-a", "test", tr.TripID, trips.StopRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.EndTime.Equal(s.UpdatedAt) || !s.UpdatedAt.Equal(updated()) {
		t.Errorf("stop: end_time %v, updated_at %v, trip updated_at %v", s.EndTime, s.UpdatedAt, updated())
	}
}
