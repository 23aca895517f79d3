package trips

import (
	"context"
	"math"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
)

// road is the road a point was matched to: its speed limit and class;
// zero when it was not matched (no road network, or off the network).
type road struct {
	limitKmh float64
	class    string
}

// matchPoint is a trip point as the map matcher takes it.
func matchPoint(p Point) mapmatch.Point {
	mp := mapmatch.Point{Lat: p.Lat, Lon: p.Lon}
	if !math.IsNaN(p.Accuracy) {
		mp.Accuracy = p.Accuracy
	}
	return mp
}

// withRoad is the detector's point for p on road r.
func withRoad(p Point, r road) detect.Point {
	dp := detectPoint(p)
	dp.RoadLimitKmh, dp.RoadType = r.limitKmh, r.class
	return dp
}

// placeOnRoads gives the events the upload's detector raised (harsh
// driving, idling) the class and limit of the road nearest where they
// started, as a lone location is placed (the lower limit of its two
// directions); without a road network, or off the roads, nothing.
func (s *Service) placeOnRoads(evs []detect.Event) {
	if s.cfg.Roads == nil {
		return
	}
	for i := range evs {
		if evs[i].RoadLimitKmh > 0 {
			continue
		}
		if limit, class, ok := s.cfg.Roads.RoadAt(evs[i].Lat, evs[i].Lon, 0); ok {
			evs[i].RoadLimitKmh, evs[i].RoadType = limit, class
		}
	}
}

// keepRoadEvents adds to the events of a replayed trip the speeding
// events the road matcher stored, which the upload's detector does not
// raise, so that the replay's rewrite keeps them; each is counted again
// in st's running analytics. Without a road network events is returned
// as it is.
func (s *Service) keepRoadEvents(ctx context.Context, sc store.Scope, id string, st *state, events []detect.Event) ([]detect.Event, error) {
	if s.roads == nil {
		return events, nil
	}
	stored, err := s.storedEvents(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	for _, e := range stored {
		if e.Type == detect.TypeSpeeding {
			st.Running.AddEvent(e.Event)
			events = append(events, e.Event)
		}
	}
	return events, nil
}

// band is what a road counts as in road_types.
type band uint8

const (
	bandNone    band = iota // not matched: the speed decides
	bandHighway             // motorway or trunk
	bandCity                // another road limited to 60 km/h or less
	bandRural               // another road limited above 60 km/h
)

// bandsOf matches a trip's stored points, as one trace, and returns the
// band of the road under each; nil without a road network.
func (s *Service) bandsOf(pts []Point) []band {
	if s.cfg.Roads == nil {
		return nil
	}
	out := make([]band, len(pts))
	tr := s.cfg.Roads.Trace()
	keep := func(ms []mapmatch.Match) {
		for _, m := range ms {
			if !m.Matched || m.Index >= len(out) {
				continue
			}
			switch {
			case m.Class == routing.ClassMotorway || m.Class == routing.ClassTrunk:
				out[m.Index] = bandHighway
			case m.LimitKmh <= 60:
				out[m.Index] = bandCity
			default:
				out[m.Index] = bandRural
			}
		}
	}
	for _, p := range pts {
		keep(tr.Add(matchPoint(p)))
	}
	keep(tr.Flush())
	return out
}
