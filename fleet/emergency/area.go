package emergency

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/store"
)

// Area resolution.
const (
	// defaultBufferKm widens a city, a state or a route when the alert
	// names no buffer_km.
	defaultBufferKm = 2.0
	// maxPlaces bounds the addresses one city or state is drawn from.
	maxPlaces = 5000
)

// Places searches the loaded address data (internal/geocode.Index).
type Places interface {
	Search(q string, limit int) []geocode.Match
}

// RouteReader reads stored optimizations, whose routes make route areas.
type RouteReader interface {
	GetOptimization(ctx context.Context, s store.Scope, id string) (store.Optimization, error)
}

// AreaResolution says how an alert's area was drawn: exact (radius,
// polygon), address_data (a city's or a state's addresses), route (a
// stored optimization's stops), or approximated when the data was not
// there: then every active driver of the organization is reached, and
// field personnel by the city or state of their home area.
type AreaResolution struct {
	Method       string  `json:"method" enum:"exact,address_data,route,approximated"`
	Approximated bool    `json:"approximated"`
	BufferKm     float64 `json:"buffer_km,omitempty"`
	Points       int     `json:"points,omitempty" doc:"addresses or route stops the area was drawn from"`
	Reason       string  `json:"reason,omitempty"`
}

// region is a resolved area.
type region interface {
	Contains(lat, lon float64) bool
	// Within says whether a point is within m metres of the region.
	Within(lat, lon, m float64) bool
}

// resolve draws an alert's area. A nil region is the whole organization.
func (a *Alerts) resolve(ctx context.Context, sc store.Scope, ar *AffectedArea) (region, AreaResolution, float64, error) {
	buffer := defaultBufferKm
	if ar.BufferKm != nil {
		buffer = *ar.BufferKm
	}
	switch ar.Type {
	case "radius", "polygon":
		return ar.shape(), AreaResolution{Method: "exact"}, impactRadius(ar), nil
	case "city", "state":
		if a.cfg.Places == nil {
			return nil, AreaResolution{Method: "approximated", Approximated: true, Reason: "no address data is loaded (--addresses)"}, 0, nil
		}
		pts := placePoints(a.cfg.Places, ar)
		if len(pts) == 0 {
			return nil, AreaResolution{Method: "approximated", Approximated: true, Reason: "the loaded address data has no address in " + ar.name()}, 0, nil
		}
		box := boxAround(pts, buffer)
		return box, AreaResolution{Method: "address_data", BufferKm: buffer, Points: len(pts)}, spread(pts, buffer), nil
	case "route":
		rr, ok := a.st.(RouteReader)
		if !ok {
			return nil, AreaResolution{Method: "approximated", Approximated: true, Reason: "no stored optimizations"}, 0, nil
		}
		pts, err := routePoints(ctx, rr, sc, ar.RouteID)
		var nr *noRouteError
		switch {
		case errors.Is(err, store.ErrNotFound):
			// a route_id that names nothing is a mistake of the request,
			// as a city that names no place: approximated, the alert
			// would reach the whole organization
			return nil, AreaResolution{}, 0, &ValidationError{Fields: map[string]string{"affected_area.route_id": "is not an optimization of this organization: " + routeIDForm}}
		case errors.As(err, &nr):
			return nil, AreaResolution{}, 0, &ValidationError{Fields: map[string]string{"affected_area.route_id": nr.Error()}}
		case err == nil && len(pts) == 0:
			// the optimization has no routes yet (queued, running) or
			// none at all (failed): its ground is not known
			return nil, AreaResolution{Method: "approximated", Approximated: true, Reason: "optimization " + ar.RouteID + " has no routes"}, 0, nil
		}
		if err != nil {
			return nil, AreaResolution{}, 0, err
		}
		var all []geo.Point
		for _, l := range pts {
			all = append(all, l...)
		}
		return &corridor{pts: pts, m: buffer * 1000}, AreaResolution{Method: "route", BufferKm: buffer, Points: len(all)}, spread(all, buffer), nil
	}
	return nil, AreaResolution{Method: "approximated", Approximated: true}, 0, nil
}

func (a *AffectedArea) name() string {
	if a.Type == "city" {
		if a.State != "" {
			return a.City + ", " + a.State
		}
		return a.City
	}
	return a.State
}

// placePoints are the addresses of a city (in State when given) or of a
// state, from the address search filtered to exact matches.
func placePoints(p Places, ar *AffectedArea) []geo.Point {
	var out []geo.Point
	q := ar.State
	if ar.Type == "city" {
		q = strings.TrimSpace(ar.City + " " + ar.State)
	}
	for _, m := range p.Search(q, maxPlaces) {
		ad := m.Address
		if ar.Type == "city" && !strings.EqualFold(ad.City, ar.City) || ar.State != "" && !strings.EqualFold(ad.Region, ar.State) {
			continue
		}
		out = append(out, geo.Point{Lat: ad.Latitude, Lon: ad.Longitude})
	}
	return out
}

// routePoints are the stops of a stored optimization's routes, in order:
// id is an optimization id, or "<optimization id>:<vehicle id>" for one
// of its routes.
func routePoints(ctx context.Context, rr RouteReader, sc store.Scope, id string) ([][]geo.Point, error) {
	optID, vehicle, _ := strings.Cut(id, ":")
	o, err := rr.GetOptimization(ctx, sc, optID)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Routes []struct {
			VehicleID string `json:"vehicle_id"`
			Stops     []struct {
				Location *struct {
					Latitude  float64 `json:"latitude"`
					Longitude float64 `json:"longitude"`
				} `json:"location"`
			} `json:"route_sequence"`
		} `json:"optimized_routes"`
	}
	if err := json.Unmarshal(o.Doc, &doc); err != nil {
		return nil, err
	}
	var out [][]geo.Point
	found := false
	for _, r := range doc.Routes {
		if vehicle != "" && r.VehicleID != vehicle {
			continue
		}
		found = true
		var line []geo.Point
		for _, s := range r.Stops {
			if s.Location != nil {
				line = append(line, geo.Point{Lat: s.Location.Latitude, Lon: s.Location.Longitude})
			}
		}
		if len(line) > 0 {
			out = append(out, line)
		}
	}
	if vehicle != "" && !found && len(doc.Routes) > 0 {
		return nil, &noRouteError{optID: optID, vehicle: vehicle}
	}
	return out, nil
}

// routeIDForm says what a route area's route_id names.
const routeIDForm = "route_id is the optimization_id of a stored optimization, or <optimization_id>:<vehicle_id> for one of its routes"

// noRouteError is a route_id naming a vehicle the optimization's plan
// gives no route.
type noRouteError struct{ optID, vehicle string }

func (e *noRouteError) Error() string {
	return "optimization " + e.optID + " has no route of vehicle " + e.vehicle
}

// boxAround is the box around pts widened by buffer km on every side.
func boxAround(pts []geo.Point, bufferKm float64) *fence.Area {
	s, w, n, e := pts[0].Lat, pts[0].Lon, pts[0].Lat, pts[0].Lon
	for _, p := range pts {
		s, n = math.Min(s, p.Lat), math.Max(n, p.Lat)
		w, e = math.Min(w, p.Lon), math.Max(e, p.Lon)
	}
	dLat := bufferKm / 111.32
	dLon := bufferKm / (111.32 * math.Max(math.Cos((s+n)/2*math.Pi/180), 0.01))
	s, n = math.Max(s-dLat, -90), math.Min(n+dLat, 90)
	w, e = math.Max(w-dLon, -180), math.Min(e+dLon, 180)
	return &fence.Area{Polygon: []fence.Point{{Lat: s, Lon: w}, {Lat: s, Lon: e}, {Lat: n, Lon: e}, {Lat: n, Lon: w}}}
}

// spread is the distance in km from the points' mean to the farthest,
// plus the buffer: the impact radius of a drawn area.
func spread(all []geo.Point, bufferKm float64) float64 {
	var lat, lon float64
	for _, p := range all {
		lat, lon = lat+p.Lat, lon+p.Lon
	}
	c := geo.Point{Lat: lat / float64(len(all)), Lon: lon / float64(len(all))}
	r := 0.0
	for _, p := range all {
		r = math.Max(r, geo.Distance(c, p)/1000)
	}
	return round2(r + bufferKm)
}

// corridor is the ground within m metres of a route's stops and the legs
// between them.
type corridor struct {
	pts [][]geo.Point
	m   float64
}

// Contains says whether a point is within the corridor, on a local flat
// projection (legs are short next to the Earth).
func (c *corridor) Contains(lat, lon float64) bool { return c.Within(lat, lon, 0) }

// Within says whether a point is within m metres of the corridor.
func (c *corridor) Within(lat, lon, m float64) bool {
	p := geo.Point{Lat: lat, Lon: lon}
	m += c.m
	for _, line := range c.pts {
		for i := range line {
			if geo.Distance(p, line[i]) <= m {
				return true
			}
			if i > 0 && geo.SegmentDistance(p, line[i-1], line[i]) <= m {
				return true
			}
		}
	}
	return false
}
