package trips_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// street is the fixture network: a residential street posted 40 km/h
// running 3 km north from 40°N 83°W, and a primary road posted 50 km/h
// crossing it 1 km up.
type street struct{}

func (street) Edges() int { return 4 }
func (street) Nodes() int { return 5 }

// the edges: street 0→1 (0 to 1 km), street 1→2 (1 to 3 km), primary
// 3→1 and 1→4 (west and east of the street)
var streetPts = [4][2][2]float64{
	{{40, -83}, {40 + 1000/111195.0, -83}},
	{{40 + 1000/111195.0, -83}, {40 + 3000/111195.0, -83}},
	{{40 + 1000/111195.0, -83.02}, {40 + 1000/111195.0, -83}},
	{{40 + 1000/111195.0, -83}, {40 + 1000/111195.0, -82.98}},
}

func (street) EdgePoints(e int, lat, lon []float64) ([]float64, []float64) {
	for _, p := range streetPts[e] {
		lat, lon = append(lat, p[0]), append(lon, p[1])
	}
	return lat, lon
}
func (street) EdgeEnds(e int) (int, int) {
	return [4][2]int{{0, 1}, {1, 2}, {3, 1}, {1, 4}}[e][0], [4][2]int{{0, 1}, {1, 2}, {3, 1}, {1, 4}}[e][1]
}
func (street) EdgeOpen(int, routing.Costing) (bool, bool) { return true, true }
func (street) EdgeRoad(e int, _ bool) routing.Road {
	if e < 2 {
		return routing.Road{WayID: 1, Class: routing.ClassResidential, LimitKmh: 40, Posted: true}
	}
	return routing.Road{WayID: 2, Class: routing.ClassPrimary, LimitKmh: 50, Posted: true}
}

// recorder keeps what the trips publish.
type recorder struct {
	mu  sync.Mutex
	evs []*event.Event
}

func (r *recorder) Publish(_ context.Context, _, _ string, evs ...*event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
	return nil
}

func (r *recorder) PublishPoints(ctx context.Context, org, env string, _ []event.Point, evs ...*event.Event) error {
	return r.Publish(ctx, org, env, evs...)
}

// TestSpeedingOnTheMatchedRoad: a trip driven at 60 km/h up a street
// posted 40 raises a speeding event judged by the street's limit
// (speed_limit_kmh 40, match road, the event's location carrying the
// limit and the road class) when the road network is loaded, and the
// route's road_types count the street as city driving; without it, 60 is
// under the configured 100 and nothing is raised, and 60 km/h is not
// city driving. With the roads the event comes from the road matcher
// beside the uploads: it is published and stored once the matcher has
// judged the points, not in an upload's answer.
func TestSpeedingOnTheMatchedRoad(t *testing.T) {
	for _, withRoads := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cfg := trips.Config{DefaultSpeedLimitKmh: 100}
		if withRoads {
			cfg.Roads = mapmatch.New(street{}, routing.Auto, mapmatch.Config{})
		}
		pub := &recorder{}
		svc, err := trips.New(cfg, st, pub, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		go svc.RunRoads(ctx)
		start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Second)
		tr, err := svc.Start(ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-1", StartTime: &start})
		if err != nil {
			t.Fatal(err)
		}
		// 60 km/h for 60 s (across the primary road), then 30 km/h for
		// 20 s, one fix a second, 3 m east of the street, in uploads of 10
		var got []trips.DetectedEvent
		lat, at := 40.0+100/111195.0, start.Add(time.Second)
		for i := 0; i < 80; i += 10 {
			b := &trips.BatchRequest{TripID: tr.TripID}
			for k := i; k < i+10; k++ {
				v := 60.0
				if k >= 60 {
					v = 30
				}
				lat += v / 3.6 / 111195
				la, lo, acc := lat, -83+3/(111195*math.Cos(40*math.Pi/180)), 5.0
				b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, AccuracyMeters: &acc, Timestamp: at.Format(time.RFC3339Nano)})
				at = at.Add(time.Second)
			}
			res, err := svc.UploadBatch(ctx, "org-a", "test", b)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.EventsDetected {
				if e.EventType == "speeding" {
					got = append(got, e)
				}
			}
		}
		if withRoads && len(got) != 0 {
			t.Errorf("with the roads an upload answered speeding %+v: the road matcher judges it", got)
		}
		var speeding *event.Event
		published := func() bool {
			pub.mu.Lock()
			defer pub.mu.Unlock()
			for _, e := range pub.evs {
				if e.EventType == "speeding" {
					speeding = e
				}
			}
			return speeding != nil
		}
		if withRoads {
			waitfor.Until(t, 10*time.Second, "the speeding event judged on the road", published)
		}
		// at 60 km/h on a street limited to 40, road_types count it as
		// city driving by the road, not as rural by the speed
		r, err := svc.Route(ctx, "org-a", "test", tr.TripID, trips.RouteQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if city := r.RouteAnalytics.CityDrivingPercentage; withRoads && city < 99 || !withRoads && city > 30 {
			t.Errorf("roads %v: city_driving_percentage %v", withRoads, city)
		}
		if !withRoads {
			if len(got) != 0 {
				t.Errorf("without roads, 60 km/h under the configured 100 raised %+v", got)
			}
			continue
		}
		n := 0
		for _, e := range pub.evs {
			if e.EventType == "speeding" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d speeding events published, want one", n)
		}
		if m := speeding.EventData; m["speed_limit_kmh"] != 40.0 || m["match"] != "road" || math.Abs(m["excess_speed_kmh"].(float64)-20) > 1 {
			t.Errorf("speeding metrics %v, want speed_limit_kmh 40, match road, 20 over", m)
		}
		if speeding == nil || speeding.Location == nil || speeding.Location.SpeedLimit == nil || *speeding.Location.SpeedLimit != 40 || speeding.Location.RoadType != "residential" {
			t.Errorf("published speeding event %+v, want its location on a residential road posted 40", speeding)
		}
		// 20 km/h over is high: a medium risk of collision, and no force
		// measured on the passengers
		if ra := speeding.RiskAssessment; speeding.Severity != "high" || ra["collision_risk"] != "medium" || ra["passenger_impact"] != nil ||
			fmt.Sprint(ra["recommended_actions"]) != "[review the event with the driver keep to the speed limit]" {
			t.Errorf("speeding (%s) risk_assessment %v, want collision_risk medium, passenger_impact null and the advice for speeding", speeding.Severity, ra)
		}
	}
}
