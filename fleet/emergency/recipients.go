package emergency

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/fleet/geofences/fence"
	"github.com/fleethub/fleethub/internal/store"
)

// TripLister lists a scope's trips: alert recipients are the drivers of
// the active trips in the alert's area.
type TripLister interface {
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
}

// Directory finds the people of an organization (fleet/contacts):
// field personnel, dispatchers, emergency contacts, the drivers' own
// entries.
type Directory interface {
	WithRole(ctx context.Context, sc store.Scope, role string) ([]contacts.Contact, error)
	// EmergencyContactsOf answers the emergency contacts naming driverID
	// (a driver id or a driver's contact id).
	EmergencyContactsOf(ctx context.Context, sc store.Scope, driverID string) ([]contacts.Contact, error)
	// ForDriver answers the entries linking a driver id.
	ForDriver(ctx context.Context, sc store.Scope, driverID string) ([]contacts.Contact, error)
	// Get answers one entry; contacts.ErrNotFound when there is none.
	Get(ctx context.Context, sc store.Scope, id string) (contacts.Contact, error)
}

// Audience names; a recipient named in the target audience's specific
// drivers or vehicles carries specific_drivers or specific_vehicles.
const (
	audDrivers          = "active_drivers"
	audField            = "field_personnel"
	audEmergency        = "emergency_contacts"
	audDispatch         = "dispatchers"
	audSpecificDrivers  = "specific_drivers"
	audSpecificVehicles = "specific_vehicles"
)

// person is one candidate recipient with every audience that names them.
type person struct {
	rec       Recipient
	contact   *contacts.Contact
	audiences []string
}

// audienceSet gathers the people of an alert's audiences, one entry per
// person: a driver with a directory entry (a contact with the driver role
// linking their driver id) is that contact.
type audienceSet struct {
	byKey  map[string]*person
	order  []string
	driver map[string]*contacts.Contact // driver id → their directory entry
}

func (s *audienceSet) add(key string, p person, audience string) *person {
	if q := s.byKey[key]; q != nil {
		if !slices.Contains(q.audiences, audience) {
			q.audiences = append(q.audiences, audience)
		}
		return q
	}
	p.audiences = []string{audience}
	s.byKey[key] = &p
	s.order = append(s.order, key)
	return &p
}

// addContact adds a directory entry to an audience.
func (s *audienceSet) addContact(c *contacts.Contact, audience, typ string) {
	s.add("contact:"+c.ContactID, person{contact: c, rec: Recipient{RecipientID: c.ContactID, RecipientType: typ, ContactID: c.ContactID, Name: c.Name}}, audience)
}

// recipients finds who an alert reaches. Audiences:
//   - active_drivers: the drivers of the organization's active trips whose
//     last point is in the area;
//   - field_personnel: directory entries with that role whose last known
//     location, else home area, is in the area;
//   - dispatchers: every dispatcher of the organization;
//   - emergency_contacts: the emergency contacts of the drivers in the
//     area.
//
// A person named by an excluded audience is left out even when an
// included one names them too (exclude wins), and each person is reached
// once however many audiences name them. Specific vehicles and drivers
// are added as named, carrying the audience specific_vehicles or
// specific_drivers (a person already reached gains it). vehicles are
// the vehicles of the trips in the area, each once.
func (a *Alerts) recipients(ctx context.Context, sc store.Scope, b *AlertBody, area region) (out []Recipient, people map[string]*contacts.Contact, vehicles []areaVehicle, err error) {
	ta := b.TargetAudience
	set := &audienceSet{byKey: map[string]*person{}, driver: map[string]*contacts.Contact{}}
	dir, err := a.directory(ctx, sc, ta, set)
	if err != nil {
		return nil, nil, nil, err
	}
	driversInArea, vehicles, err := a.tripDrivers(ctx, sc, ta, area, set)
	if err != nil {
		return nil, nil, nil, err
	}
	for i := range dir["field_personnel"] {
		c := &dir["field_personnel"][i]
		if b.AffectedArea.holds(area, c) {
			set.addContact(c, audField, "field_personnel")
		}
	}
	for i := range dir["dispatcher"] {
		set.addContact(&dir["dispatcher"][i], audDispatch, "dispatcher")
	}
	for i := range dir["emergency_contact"] {
		c := &dir["emergency_contact"][i]
		if slices.ContainsFunc(c.Links.EmergencyContactFor, func(id string) bool { return set.covers(id, driversInArea) }) {
			set.addContact(c, audEmergency, "emergency_contact")
		}
	}
	out, people = set.reached(ta)
	out = set.addSpecific(ta, out, people)
	return out, people, vehicles, nil
}

// wants says whether the audience includes or excludes aud: only then
// are its people looked up.
func wants(ta *Audience, aud string) bool {
	return slices.Contains(ta.Include, aud) || slices.Contains(ta.Exclude, aud)
}

// directory reads the directory entries of the roles the audience needs
// (drivers always, to know the drivers' entries), by role, and notes in
// set each driver id's entry. Without a directory there are none.
func (a *Alerts) directory(ctx context.Context, sc store.Scope, ta *Audience, set *audienceSet) (map[string][]contacts.Contact, error) {
	dir := map[string][]contacts.Contact{}
	if a.dir == nil {
		return dir, nil
	}
	for _, role := range []string{"driver", "field_personnel", "dispatcher", "emergency_contact"} {
		if role == "field_personnel" && !wants(ta, audField) || role == "dispatcher" && !wants(ta, audDispatch) || role == "emergency_contact" && !wants(ta, audEmergency) {
			continue
		}
		cs, err := a.dir.WithRole(ctx, sc, role)
		if err != nil {
			return nil, fmt.Errorf("emergency: directory, role %s: %w", role, err)
		}
		dir[role] = cs
	}
	for i := range dir["driver"] {
		c := &dir["driver"][i]
		for _, id := range c.Links.DriverIDs {
			set.driver[id] = c
		}
	}
	return dir, nil
}

// areaVehicle is a vehicle of a trip in an alert's area, with that
// trip's driver: the automated actions are requested of it.
type areaVehicle struct {
	vehicleID, driverID, tripID string
}

// tripDrivers answers the drivers and the vehicles (each once) of the
// active and paused trips in the area; when the audience wants active
// drivers, it adds each trip's driver (or, without one, its vehicle) to
// the set.
func (a *Alerts) tripDrivers(ctx context.Context, sc store.Scope, ta *Audience, area region, set *audienceSet) (drivers []string, vehicles []areaVehicle, err error) {
	trips, err := a.trips.ListTrips(ctx, store.TripFilter{Scope: sc, Statuses: []string{store.TripActive, store.TripPaused}, Limit: 10_000, Sort: "start_time"})
	if err != nil {
		return nil, nil, fmt.Errorf("emergency: active trips: %w", err)
	}
	for _, t := range trips {
		if area != nil && !inShape(area, t) {
			continue
		}
		if t.VehicleID != "" && !slices.ContainsFunc(vehicles, func(v areaVehicle) bool { return v.vehicleID == t.VehicleID }) {
			vehicles = append(vehicles, areaVehicle{vehicleID: t.VehicleID, driverID: t.DriverID, tripID: t.ID})
		}
		if t.DriverID != "" {
			drivers = append(drivers, t.DriverID)
		}
		if !wants(ta, audDrivers) {
			continue
		}
		id := t.DriverID
		if id == "" {
			id = "vehicle:" + t.VehicleID
		}
		key := "driver:" + id
		var c *contacts.Contact
		if c = set.driver[t.DriverID]; c != nil && t.DriverID != "" {
			key = "contact:" + c.ContactID
		}
		p := set.add(key, person{contact: c, rec: Recipient{RecipientID: id, RecipientType: "driver", VehicleID: t.VehicleID}}, audDrivers)
		if c != nil {
			p.rec.ContactID, p.rec.Name = c.ContactID, c.Name
		}
	}
	return drivers, vehicles, nil
}

// reached are the people the audience reaches, in the order they were
// added: named by an included audience and by no excluded one. people
// maps those with a directory entry to it, by recipient id.
func (s *audienceSet) reached(ta *Audience) (out []Recipient, people map[string]*contacts.Contact) {
	people = map[string]*contacts.Contact{}
	for _, key := range s.order {
		p := s.byKey[key]
		if slices.ContainsFunc(p.audiences, func(x string) bool { return slices.Contains(ta.Exclude, x) }) ||
			!slices.ContainsFunc(p.audiences, func(x string) bool { return slices.Contains(ta.Include, x) }) {
			continue
		}
		p.rec.Audiences = p.audiences
		out = append(out, p.rec)
		if p.contact != nil {
			people[p.rec.RecipientID] = p.contact
		}
	}
	return out, people
}

// addSpecific adds the audience's specific vehicles and drivers to out,
// each as named: a recipient already reached gains the audience
// specific_vehicles or specific_drivers, anyone else is added with it
// (a driver with a directory entry also to people).
func (s *audienceSet) addSpecific(ta *Audience, out []Recipient, people map[string]*contacts.Contact) []Recipient {
	// name adds aud to the recipients named id (or reached as the
	// contact cid), answering whether there was one.
	name := func(id, cid, aud string) bool {
		found := false
		for i := range out {
			r := &out[i]
			if r.RecipientID == id || cid != "" && r.ContactID == cid {
				if !slices.Contains(r.Audiences, aud) {
					r.Audiences = append(r.Audiences, aud)
				}
				found = true
			}
		}
		return found
	}
	for _, v := range ta.SpecificVehicles {
		if id := "vehicle:" + v; !name(id, "", audSpecificVehicles) {
			out = append(out, Recipient{RecipientID: id, RecipientType: "vehicle", VehicleID: v, Audiences: []string{audSpecificVehicles}})
		}
	}
	for _, d := range ta.SpecificDrivers {
		c := s.driver[d]
		cid := ""
		if c != nil {
			cid = c.ContactID
		}
		if name(d, cid, audSpecificDrivers) {
			continue
		}
		r := Recipient{RecipientID: d, RecipientType: "driver", Audiences: []string{audSpecificDrivers}}
		if c != nil {
			r.ContactID, r.Name = c.ContactID, c.Name
			people[d] = c
		}
		out = append(out, r)
	}
	return out
}

// covers says whether an emergency contact's link (a driver id, or the
// contact id of a driver's directory entry) names one of drivers.
func (s *audienceSet) covers(link string, drivers []string) bool {
	for _, d := range drivers {
		if link == d {
			return true
		}
		if c := s.driver[d]; c != nil && c.ContactID == link {
			return true
		}
	}
	return false
}

// holds says whether a contact is in the area: by last known location,
// else home area. A city or state area matches the home area's city or
// state; a route area holds everyone with a known position.
func (a *AffectedArea) holds(shape region, c *contacts.Contact) bool {
	lat, lon, ok := c.Position()
	switch {
	case shape != nil:
		return ok && shape.Contains(lat, lon)
	case a.Type == "city" && c.HomeArea != nil && c.HomeArea.City != "":
		return strings.EqualFold(c.HomeArea.City, a.City)
	case a.Type == "state" && c.HomeArea != nil && c.HomeArea.State != "":
		return c.HomeArea.State == a.State
	}
	return ok
}

// point is p as a geofence point; p is validated.
func (p AreaPoint) point() fence.Point { return fence.Point{Lat: *p.Latitude, Lon: *p.Longitude} }

// shape is a radius or polygon area as a geofence, nil for the areas that
// need map data (route, city, state).
func (a *AffectedArea) shape() *fence.Area {
	switch a.Type {
	case "radius":
		return &fence.Area{Center: a.Center.point(), Radius: *a.RadiusKm * 1000}
	case "polygon":
		area := &fence.Area{}
		for _, p := range a.Polygon {
			area.Polygon = append(area.Polygon, p.point())
		}
		return area
	}
	return nil
}

// inShape says whether a trip's last point, or else its start, lies in
// area; a trip with neither is outside.
func inShape(area region, t store.Trip) bool {
	var st struct {
		Last *struct {
			Lat float64 `json:"lat"`
			Lon float64 `json:"lon"`
		} `json:"last"`
	}
	// a state that cannot be read has no last point: the start decides
	if err := json.Unmarshal(t.State, &st); err == nil && st.Last != nil {
		return area.Contains(st.Last.Lat, st.Last.Lon)
	}
	if t.StartLocation != nil {
		return area.Contains(t.StartLocation.Latitude, t.StartLocation.Longitude)
	}
	return false
}
