package telemetry

import (
	"math"

	"github.com/fleethub/fleethub/hub/event"
)

// Roads tells the road at a location: its speed limit (km/h) and class;
// ok false off the road network. The map matcher of --osm is one.
type Roads interface {
	RoadAt(lat, lon, accuracy float64) (limitKmh float64, class string, ok bool)
}

// fillRoad gives an event's location the speed limit and road type of
// the road it lies on, each where the sender gave none.
func (s *Service) fillRoad(e *event.Event) {
	l := e.Location
	if s.cfg.Roads == nil || l == nil || l.SpeedLimit != nil && l.RoadType != "" {
		return
	}
	acc := 0.0
	if l.Accuracy != nil {
		acc = *l.Accuracy
	}
	limit, class, ok := s.cfg.Roads.RoadAt(l.Latitude, l.Longitude, acc)
	if !ok {
		return
	}
	if l.SpeedLimit == nil {
		v := math.Round(limit*10) / 10
		l.SpeedLimit = &v
	}
	if l.RoadType == "" {
		l.RoadType = class
	}
}
