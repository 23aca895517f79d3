package emergency

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/fleethub/fleethub/filters/geofence"
	"github.com/fleethub/fleethub/internal/store"
)

// TripLister lists a scope's trips: alert recipients are the drivers of
// the active trips in the alert's area.
type TripLister interface {
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
}

// recipients finds who an alert reaches: drivers of the organization's
// active trips whose last point is in the area (radius and polygon; for
// route, city and state areas, which need map data, every active driver),
// plus specific vehicles and drivers. inArea counts the trips in the area.
func (a *Alerts) recipients(ctx context.Context, sc store.Scope, b *AlertBody) (out []Recipient, inArea int, err error) {
	seen := map[string]bool{}
	ta := b.TargetAudience
	wantDrivers := slices.Contains(ta.Include, "active_drivers") && !slices.Contains(ta.Exclude, "active_drivers")
	trips, err := a.trips.ListTrips(ctx, store.TripFilter{Scope: sc, Statuses: []string{store.TripActive, store.TripPaused}, Limit: 10_000, Sort: "start_time"})
	if err != nil {
		return nil, 0, err
	}
	area := b.AffectedArea.shape()
	for _, t := range trips {
		if area != nil && !inShape(area, t) {
			continue
		}
		inArea++
		if !wantDrivers {
			continue
		}
		id := t.DriverID
		if id == "" {
			id = "vehicle:" + t.VehicleID
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, Recipient{RecipientID: id, RecipientType: "driver", VehicleID: t.VehicleID})
		}
	}
	for _, v := range ta.SpecificVehicles {
		if id := "vehicle:" + v; !seen[id] {
			seen[id] = true
			out = append(out, Recipient{RecipientID: id, RecipientType: "vehicle", VehicleID: v})
		}
	}
	for _, d := range ta.SpecificDrivers {
		if !seen[d] {
			seen[d] = true
			out = append(out, Recipient{RecipientID: d, RecipientType: "driver"})
		}
	}
	return out, inArea, nil
}

// shape is a radius or polygon area as a geofence, nil for the areas that
// need map data (route, city, state).
func (a *AffectedArea) shape() *geofence.Area {
	switch a.Type {
	case "radius":
		return &geofence.Area{Center: geofence.Point{Lat: a.Center.Latitude, Lon: a.Center.Longitude}, Radius: *a.RadiusKm * 1000}
	case "polygon":
		area := &geofence.Area{}
		for _, p := range a.Polygon {
			area.Polygon = append(area.Polygon, geofence.Point{Lat: p.Latitude, Lon: p.Longitude})
		}
		return area
	}
	return nil
}

// inShape says whether a trip's last point, or else its start, lies in
// area; a trip with neither is outside.
func inShape(area *geofence.Area, t store.Trip) bool {
	var st struct {
		Last *struct {
			Lat float64 `json:"lat"`
			Lon float64 `json:"lon"`
		} `json:"last"`
	}
	_ = json.Unmarshal(t.State, &st)
	if st.Last != nil {
		return area.Contains(st.Last.Lat, st.Last.Lon)
	}
	if t.StartLocation != nil {
		return area.Contains(t.StartLocation.Latitude, t.StartLocation.Longitude)
	}
	return false
}
