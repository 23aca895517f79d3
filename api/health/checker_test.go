package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
)

// flakyTrips stands in for the trip store, which fails while err is set.
type flakyTrips struct {
	err   error
	total int
}

func (f *flakyTrips) ActiveTripStats(context.Context, Scope) (int, int, float64, error) {
	return f.total, 1, 12.5, f.err
}

// Trips that cannot be counted read null, or the last count: never a zero
// nobody counted.
func TestActiveTripsNeverMadeUp(t *testing.T) {
	trips := &flakyTrips{err: errors.New("store down")}
	c := New(Config{TripsRefresh: time.Minute}, Deps{Trips: trips})
	now := time.Now()
	sc := Scope{Org: "org-a", Env: "test"}
	if v := c.activeTrips(context.Background(), sc, now); v.TotalCount != nil || v.OrganizationCount != nil || v.AvgDurationMinutes != nil {
		t.Fatalf("uncounted: %+v, want nulls", v)
	}
	trips.err, trips.total = nil, 3
	v := c.activeTrips(context.Background(), sc, now)
	if v.TotalCount == nil || *v.TotalCount != 3 || *v.AvgDurationMinutes != 12.5 {
		t.Fatalf("counted: %+v", v)
	}
	trips.err = errors.New("store down again")
	v = c.activeTrips(context.Background(), sc, now.Add(2*time.Minute))
	if v.TotalCount == nil || *v.TotalCount != 3 {
		t.Fatalf("after a failed refresh: %+v, want the last count 3", v)
	}
	if v := New(Config{}, Deps{}).activeTrips(context.Background(), sc, now); v.TotalCount != nil {
		t.Fatalf("without a trip service: %+v, want nulls", v)
	}
}

// pingStore is a store that answers its probe.
type pingStore struct{}

func (pingStore) Ping(context.Context) error { return nil }

// An average of nothing is no figure: with no open trip the average
// duration is null, not 0, and with no request in the last minute the
// average latency and the error rate are null, not 0, and judge nothing.
func TestNoAverageOfNothing(t *testing.T) {
	clock := time.Now()
	stats := api.NewStats(func() time.Time { return clock })
	trips := &flakyTrips{}
	c := New(Config{StoreName: "sqlite"}, Deps{Store: pingStore{}, Requests: stats, Trips: trips})
	sc := Scope{Org: "org-a", Env: "test"}
	r := c.Compute(context.Background(), sc)
	if r.ActiveTrips.TotalCount == nil || *r.ActiveTrips.TotalCount != 0 || r.ActiveTrips.AvgDurationMinutes != nil {
		t.Errorf("no open trip: %+v, want total_count 0 and avg_duration_minutes null", r.ActiveTrips)
	}
	p := r.Performance
	if p.RequestsPerMinute != 0 || p.AvgResponseTimeMS != nil || p.ErrorRatePercent != nil || r.Status != Healthy {
		t.Errorf("no request: %+v (%s), want 0 requests, null latency and error rate, healthy", p, r.Status)
	}
	stats.Observe(300*time.Millisecond, false)
	stats.Observe(100*time.Millisecond, true)
	trips.total = 2
	r = c.Compute(context.Background(), Scope{Org: "org-b", Env: "test"})
	if a := r.ActiveTrips.AvgDurationMinutes; a == nil || *a != 12.5 {
		t.Errorf("two open trips: avg_duration_minutes %v, want 12.5", a)
	}
	p = r.Performance
	if p.RequestsPerMinute != 2 || p.AvgResponseTimeMS == nil || *p.AvgResponseTimeMS != 200 || p.ErrorRatePercent == nil || *p.ErrorRatePercent != 50 || r.Status != Degraded && r.Status != Unhealthy {
		t.Errorf("two requests, one failed: %+v (%s), want 200 ms, 50 %%, not healthy", p, r.Status)
	}
}
