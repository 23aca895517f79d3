package trips_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// streetTrip is a trip on the street fixture with the road matcher.
type streetTrip struct {
	t     *testing.T
	ctx   context.Context
	svc   *trips.Service
	pub   *recorder
	reg   *prometheus.Registry
	id    string
	start time.Time
	lat   float64
}

func newStreetTrip(t *testing.T, cfg trips.Config) *streetTrip {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.DefaultSpeedLimitKmh = 100
	cfg.Roads = mapmatch.New(street{}, routing.Auto, mapmatch.Config{})
	pub := &recorder{}
	svc, err := trips.New(cfg, st, pub, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(svc.Collectors()...)
	start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	return &streetTrip{t: t, ctx: ctx, svc: svc, pub: pub, reg: reg, id: tr.TripID, start: start, lat: 40 + 100/111195.0}
}

// streetWaiting is how many of a trip's points up the street wait in the
// matcher's window: far from the junction every candidate of a point
// comes from the same one of the point before, so each point's road is
// final as the next one comes (the paths' meeting, docs/routing.md) and
// only the newest waits.
const streetWaiting = 1

// drive uploads n fixes a second apart from second `from` of the trip
// on, at v km/h up the street, in uploads of 10.
func (s *streetTrip) drive(from, n int, v float64) {
	s.t.Helper()
	for i := 0; i < n; i += 10 {
		b := &trips.BatchRequest{TripID: s.id}
		for k := i; k < min(i+10, n); k++ {
			s.lat += v / 3.6 / 111195
			la, lo, acc, sp := s.lat, -83+3/(111195*math.Cos(40*math.Pi/180)), 5.0, v
			at := s.start.Add(time.Duration(from+k) * time.Second)
			b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &sp, AccuracyMeters: &acc, Timestamp: at.Format(time.RFC3339Nano)})
		}
		if _, err := s.svc.UploadBatch(s.ctx, "org-a", "test", b); err != nil {
			s.t.Fatal(err)
		}
	}
}

func (s *streetTrip) speeding() []*event.Event {
	s.pub.mu.Lock()
	defer s.pub.mu.Unlock()
	var out []*event.Event
	for _, e := range s.pub.evs {
		if e.EventType == "speeding" {
			out = append(out, e)
		}
	}
	return out
}

// metric is the value of a metric of the trips' registry: a counter's or
// gauge's value, a histogram's count.
func (s *streetTrip) metric(name string) float64 {
	s.t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		m := mf.GetMetric()[0]
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount())
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		default:
			return m.GetCounter().GetValue()
		}
	}
	s.t.Fatalf("no metric %s", name)
	return 0
}

// TestRoadQueueOverflow: with the matcher's queue bound at 5 points and
// no worker running, uploads of 10 points are answered at once, their
// points counted as overflow on /metrics; once the workers run, those
// points are judged without a road: 110 km/h on the street posted 40 is
// speeding by the configured 100 km/h (match none), and every point's
// judgement shows in the lag histogram once the trip stops.
func TestRoadQueueOverflow(t *testing.T) {
	s := newStreetTrip(t, trips.Config{MatchQueue: 5, MatchWorkers: 1})
	s.drive(1, 40, 110)
	s.drive(41, 20, 30)
	if got := s.metric("fleethub_trips_road_match_overflow_points_total"); got != 60 {
		t.Errorf("overflow %v points, want 60", got)
	}
	if got := s.metric("fleethub_trips_road_match_queued_points"); got != 0 {
		t.Errorf("queued %v points, want 0 (judged without a road, they do not wait for matching)", got)
	}
	go s.svc.RunRoads(s.ctx)
	waitfor.Until(t, 10*time.Second, "a speeding event", func() bool { return len(s.speeding()) > 0 })
	e := s.speeding()[0]
	if e.EventData["match"] != "none" || e.EventData["speed_limit_kmh"] != 100.0 || e.Location.SpeedLimit != nil {
		t.Errorf("speeding %v at %+v, want judged by the configured 100 km/h without a road", e.EventData, e.Location)
	}
	if _, err := s.svc.Stop(s.ctx, "org-a", "test", s.id, trips.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "every point judged", func() bool {
		return s.metric("fleethub_trips_road_match_lag_seconds") == 60
	})
}

// TestRoadMatchingLag: every point of a trip reaches a final road, the
// last ones (the matcher's window) when the trip stops; the lag histogram counts each once and
// nothing stays queued.
func TestRoadMatchingLag(t *testing.T) {
	s := newStreetTrip(t, trips.Config{})
	go s.svc.RunRoads(s.ctx)
	s.drive(1, 53, 30)
	waitfor.Until(t, 10*time.Second, "the points decided before the window", func() bool {
		return s.metric("fleethub_trips_road_match_lag_seconds") == 53-streetWaiting
	})
	if _, err := s.svc.Stop(s.ctx, "org-a", "test", s.id, trips.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "every point decided", func() bool {
		return s.metric("fleethub_trips_road_match_lag_seconds") == 53 && s.metric("fleethub_trips_road_match_queued_points") == 0
	})
	if n := s.metric("fleethub_trips_road_match_overflow_points_total"); n != 0 {
		t.Errorf("overflow %v", n)
	}
}

// TestLatePointKeepsRoadSpeeding: a point arriving behind the newest
// makes the upload analyse the trip again; the speeding event the road
// matcher stored stays stored and counted once, and is not published
// again.
func TestLatePointKeepsRoadSpeeding(t *testing.T) {
	s := newStreetTrip(t, trips.Config{})
	go s.svc.RunRoads(s.ctx)
	s.drive(1, 60, 60)
	s.drive(61, 20, 30)
	waitfor.Until(t, 10*time.Second, "the speeding event", func() bool { return len(s.speeding()) == 1 })
	count := func() int {
		tr, err := s.svc.Get(s.ctx, "org-a", "test", s.id)
		if err != nil {
			t.Fatal(err)
		}
		return tr.Analytics.HarshEvents.Speeding
	}
	if n := count(); n != 1 {
		t.Fatalf("speeding counted %d times", n)
	}
	la, lo, at := 40+150/111195.0, -83.0, s.start.Add(1500*time.Millisecond).Format(time.RFC3339Nano)
	if _, err := s.svc.UploadBatch(s.ctx, "org-a", "test", &trips.BatchRequest{TripID: s.id,
		Locations: []trips.LocationIn{{Latitude: &la, Longitude: &lo, Timestamp: at}}}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the matcher idle", s.svc.RoadsIdle)
	if _, err := s.svc.Stop(s.ctx, "org-a", "test", s.id, trips.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the matcher idle after the stop", s.svc.RoadsIdle)
	if n := count(); n != 1 {
		t.Errorf("after the replay speeding is counted %d times, want 1", n)
	}
	if n := len(s.speeding()); n != 1 {
		t.Errorf("%d speeding events published, want 1", n)
	}
}

// TestForgottenTripIsClosed: past MatchTrips the road matcher forgets
// the trip it judged least recently; the points in that trip's window
// are decided then and its open speeding episode closed and published,
// as a stop would, instead of being dropped with the trace.
func TestForgottenTripIsClosed(t *testing.T) {
	s := newStreetTrip(t, trips.Config{MatchWorkers: 1, MatchTrips: 16})
	go s.svc.RunRoads(s.ctx)
	s.drive(1, 30, 60) // 60 km/h up the street posted 40: an episode still open
	waitfor.Until(t, 10*time.Second, "the points decided before the window", func() bool {
		return s.metric("fleethub_trips_road_match_lag_seconds") == 30-streetWaiting
	})
	if n := len(s.speeding()); n != 0 {
		t.Fatalf("%d speeding events while the episode is open", n)
	}
	// 16 more trips, each a point on the street: the first trip is the
	// one judged least recently
	for i := range 16 {
		tr, err := s.svc.Start(s.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: fmt.Sprintf("veh-other-%d", i), StartTime: &s.start})
		if err != nil {
			t.Fatal(err)
		}
		la, lo, at := 40+float64(200+i)/111195.0, -83.0, s.start.Add(time.Second).Format(time.RFC3339Nano)
		if _, err := s.svc.UploadBatch(s.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID,
			Locations: []trips.LocationIn{{Latitude: &la, Longitude: &lo, Timestamp: at}}}); err != nil {
			t.Fatal(err)
		}
	}
	waitfor.Until(t, 10*time.Second, "the forgotten trip's speeding published", func() bool { return len(s.speeding()) == 1 })
	e := s.speeding()[0]
	if e.EventData["match"] != "road" || e.EventData["speed_limit_kmh"] != 40.0 {
		t.Errorf("speeding %v, want judged by the street's 40 km/h", e.EventData)
	}
	waitfor.Until(t, 10*time.Second, "the forgotten trip's window decided", func() bool {
		return s.metric("fleethub_trips_road_match_lag_seconds") == 30
	})
	tr, err := s.svc.Get(s.ctx, "org-a", "test", s.id)
	if err != nil {
		t.Fatal(err)
	}
	if n := tr.Analytics.HarshEvents.Speeding; n != 1 {
		t.Errorf("the trip counts %d speeding events, want 1", n)
	}
}

// TestRoadCountsRideTheNextUpload: what the road matcher made of a trip's
// points is stored with the trip's next upload, without a write of its
// own and without waiting for the stop: after three uploads of 10 fixes
// (all but the matcher's window judged), a fourth upload stores the
// counts of the points decided before it.
func TestRoadCountsRideTheNextUpload(t *testing.T) {
	s := newStreetTrip(t, trips.Config{MatchWorkers: 1})
	go s.svc.RunRoads(s.ctx)
	s.drive(1, 30, 36)
	waitfor.Until(t, 10*time.Second, "the matcher idle", s.svc.RoadsIdle)
	s.drive(31, 10, 36)
	waitfor.Until(t, 10*time.Second, "the matcher idle again", s.svc.RoadsIdle)
	counts := func() *trips.RoadStats {
		r, err := s.svc.Route(s.ctx, "org-a", "test", s.id, trips.RouteQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return r.RoadMatching
	}
	if c := counts(); c == nil || c.Matched != 30-streetWaiting || c.Unmatched != 0 {
		t.Fatalf("road counts %+v after the fourth upload, want the %d points decided before it", c, 30-streetWaiting)
	}
}
