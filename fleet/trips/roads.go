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
	mp := mapmatch.Point{Lat: p.Lat, Lon: p.Lon, Time: float64(p.TS) / 1000}
	if !math.IsNaN(p.Accuracy) {
		mp.Accuracy = p.Accuracy
	}
	if !math.IsNaN(p.Speed) {
		mp.Speed, mp.HasSpeed = p.Speed/3.6, true
	}
	if !math.IsNaN(p.Heading) {
		mp.Heading, mp.HasHeading = p.Heading, true
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

// matchTrip matches a trip's stored points, as one trace, with the
// route on the roads between them; nil without a road network.
func (s *Service) matchTrip(pts []Point) *mapmatch.Result {
	if s.cfg.Roads == nil {
		return nil
	}
	mp := make([]mapmatch.Point, len(pts))
	for i, p := range pts {
		mp[i] = matchPoint(p)
	}
	res := s.cfg.Roads.Match(mp)
	return &res
}

// matchPoints matches a trip's stored points, as one trace, without the
// route between them (what the road bands need); nil without a road
// network.
func (s *Service) matchPoints(pts []Point) []mapmatch.Match {
	if s.cfg.Roads == nil {
		return nil
	}
	tr := s.cfg.Roads.Trace()
	out := make([]mapmatch.Match, 0, len(pts))
	for _, p := range pts {
		out = append(out, tr.Add(matchPoint(p))...)
	}
	return append(out, tr.Flush()...)
}

// bandsOf is the band of the road under each point of a matched trip;
// nil when it was not matched (no road network).
func bandsOf(ms []mapmatch.Match) []band {
	if ms == nil {
		return nil
	}
	out := make([]band, len(ms))
	for i, m := range ms {
		switch {
		case !m.Matched:
		case m.Class == routing.ClassMotorway || m.Class == routing.ClassTrunk:
			out[i] = bandHighway
		case m.LimitKmh <= 60:
			out[i] = bandCity
		default:
			out[i] = bandRural
		}
	}
	return out
}

// matchedLine is a matched trip's line: the roads' geometry through each
// run of matched points, joined by straight legs through the points
// between runs; with the distance along the roads (km) and the points
// matched. Nil and nil when no two successive points were matched.
func matchedLine(pts []Point, res *mapmatch.Result) ([][2]float64, *float64, int) {
	if res == nil {
		return nil, nil, 0
	}
	var coords [][2]float64
	meters, routed, n := 0.0, false, 0
	add := func(lon, lat float64) {
		if k := len(coords) - 1; k >= 0 && coords[k] == [2]float64{lon, lat} {
			return
		}
		coords = append(coords, [2]float64{lon, lat})
	}
	next := 0 // the first point not yet drawn
	for _, r := range res.Runs {
		for ; next < r.First; next++ {
			add(pts[next].Lon, pts[next].Lat)
		}
		routed = routed || len(r.Segments) > 0
		meters += r.Meters
		first := res.Matches[r.First]
		add(first.Lon, first.Lat)
		for _, sg := range r.Segments {
			for k := range sg.Lat {
				add(sg.Lon[k], sg.Lat[k])
			}
		}
		last := res.Matches[r.Last]
		add(last.Lon, last.Lat)
		n += r.Last - r.First + 1
		next = r.Last + 1
	}
	for ; next < len(pts); next++ {
		add(pts[next].Lon, pts[next].Lat)
	}
	if !routed {
		return nil, nil, 0
	}
	km := round(meters/1000, 3)
	return coords, &km, n
}
