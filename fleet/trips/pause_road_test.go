package trips_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestNoRoadSpeedingAcrossAPause: the road matcher's speeding episodes
// stop at a pause too. 6 s at 60 km/h up the street posted 40, a 20 s
// pause, and 6 s more are two stretches under the 10 s a speeding event
// needs, not one episode of 31 s.
func TestNoRoadSpeedingAcrossAPause(t *testing.T) {
	clk := &fakeClock{t: time.Now()}
	s := newStreetTrip(t, trips.Config{Now: clk.now})
	go s.svc.RunRoads(s.ctx)
	clk.t = s.start.Add(6500 * time.Millisecond)
	s.drive(1, 6, 60)
	if _, err := s.svc.Pause(s.ctx, "org-a", "test", s.id, trips.PauseRequest{}); err != nil {
		t.Fatal(err)
	}
	clk.advance(20 * time.Second)
	if _, err := s.svc.Resume(s.ctx, "org-a", "test", s.id, trips.ResumeRequest{}); err != nil {
		t.Fatal(err)
	}
	clk.advance(7 * time.Second)
	s.drive(27, 6, 60)
	waitfor.Until(t, 10*time.Second, "the matcher idle", s.svc.RoadsIdle)
	res, err := s.svc.Stop(s.ctx, "org-a", "test", s.id, trips.StopRequest{})
	if err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the matcher idle after the stop", s.svc.RoadsIdle)
	if n := len(s.speeding()); n != 0 {
		t.Errorf("%d speeding events published across a pause, want none: %+v", n, s.speeding()[0])
	}
	if tr, err := s.svc.Get(s.ctx, "org-a", "test", s.id); err != nil || tr.Analytics.HarshEvents.Speeding != 0 {
		t.Errorf("speeding counted %+v (%v); stop answered %+v", tr.Analytics.HarshEvents, err, res.Analytics.HarshEvents)
	}
}
