package trips

import (
	"math"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
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

// roadsOf matches the points of an upload, in timestamp order, on the
// trip's trace, and returns their roads: the final match of those the
// window has passed, the best path's so far for the newest (at most
// mapmatch's lag of them). Nil without a road network. Tracker lock held.
func (s *Service) roadsOf(tr *tracker, acc []Point) []road {
	if s.cfg.Roads == nil {
		return nil
	}
	if tr.trace == nil {
		tr.trace = s.cfg.Roads.Trace()
	}
	first := tr.trace.Added()
	out := make([]road, len(acc))
	keep := func(ms []mapmatch.Match) {
		for _, m := range ms {
			if i := m.Index - first; i >= 0 && i < len(out) && m.Matched {
				out[i] = road{limitKmh: m.LimitKmh, class: m.Class.String()}
			}
		}
	}
	for _, p := range acc {
		keep(tr.trace.Add(matchPoint(p)))
	}
	keep(tr.trace.Tentative())
	return out
}

// withRoad is the detector's point for p on road r.
func withRoad(p Point, r road) detect.Point {
	dp := detectPoint(p)
	dp.RoadLimitKmh, dp.RoadType = r.limitKmh, r.class
	return dp
}

// roadAt is the i-th road of roads, the zero road when there are none.
func roadAt(roads []road, i int) road {
	if i < len(roads) {
		return roads[i]
	}
	return road{}
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
