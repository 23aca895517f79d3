package trips_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestRouteFollowsTheMatchedRoads: a trip driven 3 m beside the street
// fixture, one fix thrown 2 km off the roads: with the road network the
// route's line runs on the street (longitude -83) and through the far
// fix, match is matched, the distance along the street is given and the
// far fix is not counted matched; the road matcher's counts come with
// it once written. Without the network the line joins the fixes as
// uploaded (match none, no road distance, no counts).
func TestRouteFollowsTheMatchedRoads(t *testing.T) {
	east := 3 / (111195 * math.Cos(40*math.Pi/180))
	for _, withRoads := range []bool{true, false} {
		var s *streetTrip
		if withRoads {
			s = newStreetTrip(t, trips.Config{})
			go s.svc.RunRoads(s.ctx)
		} else {
			s = plainStreetTrip(t)
		}
		s.drive(1, 30, 36) // 10 m a second
		far := 40 + 500/111195.0
		farLon := -83 + 2000/(111195*math.Cos(40*math.Pi/180))
		at := s.start.Add(31 * time.Second).Format(time.RFC3339Nano)
		if _, err := s.svc.UploadBatch(s.ctx, "org-a", "test", &trips.BatchRequest{TripID: s.id,
			Locations: []trips.LocationIn{{Latitude: &far, Longitude: &farLon, Timestamp: at}}}); err != nil {
			t.Fatal(err)
		}
		s.drive(32, 30, 36)
		if withRoads {
			if _, err := s.svc.Stop(s.ctx, "org-a", "test", s.id, trips.StopRequest{}); err != nil {
				t.Fatal(err)
			}
			waitfor.Until(t, 10*time.Second, "the road matcher idle", s.svc.RoadsIdle)
		}
		r, err := s.svc.Route(s.ctx, "org-a", "test", s.id, trips.RouteQuery{Precision: 7})
		if err != nil {
			t.Fatal(err)
		}
		g := r.RouteGeometry
		sawFar := false
		for _, c := range g.Coordinates {
			if math.Abs(c[0]-farLon) < 1e-6 {
				sawFar = true
				continue
			}
			want := -83 + east
			if withRoads {
				want = -83
			}
			if math.Abs(c[0]-want) > 1e-6 {
				t.Errorf("roads %v: a coordinate at longitude %v, want %v", withRoads, c[0], want)
				break
			}
		}
		if !sawFar || g.TotalPoints != 61 {
			t.Errorf("roads %v: the far fix drawn %v, %d points", withRoads, sawFar, g.TotalPoints)
		}
		if !withRoads {
			if g.Match != "none" || g.MatchedDistanceKm != nil || g.MatchedPoints != 0 || r.RoadMatching != nil {
				t.Errorf("without roads: match %q, %v km, %d points, counts %+v", g.Match, g.MatchedDistanceKm, g.MatchedPoints, r.RoadMatching)
			}
			continue
		}
		// two runs of 30 fixes 10 m apart along the street: 290 m each
		if g.Match != "matched" || g.MatchedPoints != 60 || g.MatchedDistanceKm == nil || math.Abs(*g.MatchedDistanceKm-0.58) > 0.01 {
			t.Errorf("match %q, %d points, %v km; want matched, 60, 0.58", g.Match, g.MatchedPoints, g.MatchedDistanceKm)
		}
		if c := r.RoadMatching; c == nil || c.Matched != 60 || c.Unmatched != 1 || c.Unjudged != 0 {
			t.Errorf("road counts %+v, want 60 matched and 1 unmatched", c)
		}
	}
}

// plainStreetTrip is a trip without a road network.
func plainStreetTrip(t *testing.T) *streetTrip {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := trips.New(trips.Config{}, st, &recorder{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	return &streetTrip{t: t, ctx: ctx, svc: svc, id: tr.TripID, start: start, lat: 40 + 100/111195.0}
}
