package health

import (
	"context"
	"errors"
	"testing"
	"time"
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
