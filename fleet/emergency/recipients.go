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
	// ForVehicle answers the entries linking a vehicle id.
	ForVehicle(ctx context.Context, sc store.Scope, vehicleID string) ([]contacts.Contact, error)
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
// named is the recipient as the target audience's specific vehicles or
// drivers first named them, nil when they did not.
type person struct {
	rec       Recipient
	named     *Recipient
	contact   *contacts.Contact
	audiences []string
}

// audienceSet gathers the people of an alert's audiences, one entry per
// person, keyed by who they are: "contact:<id>" for a directory entry (a
// driver with one, a contact with the driver role linking their driver
// id, is that contact), "driver:<id>" for a driver without one,
// "vehicle:<id>" for a vehicle.
type audienceSet struct {
	byKey  map[string]*person
	order  []string
	driver map[string]*contacts.Contact // driver id → their directory entry
	onTrip map[string]string            // vehicle id → the driver of its active or paused trip
}

// specificAudience says whether aud names people one by one: the target
// audience's specific drivers or vehicles.
func specificAudience(aud string) bool {
	return aud == audSpecificDrivers || aud == audSpecificVehicles
}

func (s *audienceSet) add(key string, p person, audience string) *person {
	q := s.byKey[key]
	if q == nil {
		q = &p
		s.byKey[key] = q
		s.order = append(s.order, key)
	}
	if !slices.Contains(q.audiences, audience) {
		q.audiences = append(q.audiences, audience)
	}
	if specificAudience(audience) && q.named == nil {
		named := p.rec
		q.named = &named
	}
	return q
}

// addContact adds a directory entry to an audience.
func (s *audienceSet) addContact(c *contacts.Contact, audience, typ string) {
	s.add("contact:"+c.ContactID, person{contact: c, rec: Recipient{RecipientID: c.ContactID, RecipientType: typ, ContactID: c.ContactID, Name: c.Name}}, audience)
}

// addDriver adds a driver to an audience: at their directory entry when
// they have one (one person with that entry), else without an address.
// vehicle is the vehicle they drive, when known.
func (s *audienceSet) addDriver(driverID, vehicle, audience string) {
	key, rec := "driver:"+driverID, Recipient{RecipientID: driverID, RecipientType: "driver", VehicleID: vehicle}
	c := s.driver[driverID]
	if c != nil {
		key, rec.ContactID, rec.Name = "contact:"+c.ContactID, c.ContactID, c.Name
	}
	s.add(key, person{contact: c, rec: rec}, audience)
}

// contactType is the recipient type of a directory entry reached as
// itself: driver for a driver, else its first role.
func contactType(c *contacts.Contact) string {
	if c.HasRole("driver") || len(c.Roles) == 0 {
		return "driver"
	}
	return c.Roles[0]
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
// specific_drivers (a person already reached gains it), even when an
// excluded audience names them: a vehicle reaches the contacts linking
// it, the driver of its active or paused trip when they have a directory
// entry, and itself (in-app). vehicles are the vehicles of the trips in
// the area, each once.
func (a *Alerts) recipients(ctx context.Context, sc store.Scope, b *AlertBody, area region) (out []Recipient, people map[string]*contacts.Contact, vehicles []areaVehicle, err error) {
	ta := b.TargetAudience
	set := &audienceSet{byKey: map[string]*person{}, driver: map[string]*contacts.Contact{}, onTrip: map[string]string{}}
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
	if err := a.specific(ctx, sc, ta, set); err != nil {
		return nil, nil, nil, err
	}
	out, people = set.reached(ta)
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
		if t.VehicleID != "" && t.DriverID != "" {
			set.onTrip[t.VehicleID] = t.DriverID
		}
		if area != nil && !inShape(area, t) {
			continue
		}
		if t.VehicleID != "" && !slices.ContainsFunc(vehicles, func(v areaVehicle) bool { return v.vehicleID == t.VehicleID }) {
			vehicles = append(vehicles, areaVehicle{vehicleID: t.VehicleID, driverID: t.DriverID, tripID: t.ID})
		}
		if t.DriverID != "" {
			drivers = append(drivers, t.DriverID)
		}
		switch {
		case !wants(ta, audDrivers):
		case t.DriverID != "":
			set.addDriver(t.DriverID, t.VehicleID, audDrivers)
		default:
			// a trip without a driver: its vehicle stands for them
			id := "vehicle:" + t.VehicleID
			set.add(id, person{rec: Recipient{RecipientID: id, RecipientType: "driver", VehicleID: t.VehicleID}}, audDrivers)
		}
	}
	return drivers, vehicles, nil
}

// reached are the people the audience reaches, in the order they were
// added: named by an included audience and by no excluded one, or named
// in the specific vehicles or drivers (then as named there, with only
// those audiences when an excluded audience names them too). people maps
// those with a directory entry to it, by recipient id.
func (s *audienceSet) reached(ta *Audience) (out []Recipient, people map[string]*contacts.Contact) {
	people = map[string]*contacts.Contact{}
	for _, key := range s.order {
		p := s.byKey[key]
		rec := p.rec
		rec.Audiences = p.audiences
		switch excluded := slices.ContainsFunc(p.audiences, func(x string) bool { return slices.Contains(ta.Exclude, x) }); {
		case excluded && p.named != nil:
			rec = *p.named
			rec.Audiences = slices.DeleteFunc(slices.Clone(p.audiences), func(x string) bool { return !specificAudience(x) })
		case excluded:
			continue
		case p.named == nil && !slices.ContainsFunc(p.audiences, func(x string) bool { return slices.Contains(ta.Include, x) }):
			continue
		}
		out = append(out, rec)
		if p.contact != nil {
			people[rec.RecipientID] = p.contact
		}
	}
	return out, people
}

// specific adds the audience's specific vehicles and drivers to the set.
// A vehicle reaches every directory entry linking it (links.vehicle_ids),
// the driver of its active or paused trip when they have a directory
// entry, and itself, for its in-app alert; a driver is reached at their
// directory entry, or without an address when they have none.
func (a *Alerts) specific(ctx context.Context, sc store.Scope, ta *Audience, set *audienceSet) error {
	for _, v := range ta.SpecificVehicles {
		if d := set.onTrip[v]; d != "" && set.driver[d] != nil {
			set.addDriver(d, v, audSpecificVehicles)
		}
		if a.dir != nil {
			linked, err := a.dir.ForVehicle(ctx, sc, v)
			if err != nil {
				return fmt.Errorf("emergency: directory, vehicle %s: %w", v, err)
			}
			for i := range linked {
				set.addContact(&linked[i], audSpecificVehicles, contactType(&linked[i]))
			}
		}
		id := "vehicle:" + v
		set.add(id, person{rec: Recipient{RecipientID: id, RecipientType: "vehicle", VehicleID: v}}, audSpecificVehicles)
	}
	for _, d := range ta.SpecificDrivers {
		set.addDriver(d, "", audSpecificDrivers)
	}
	return nil
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
// else home area (its point, or any of it within its radius_km). A city
// or state area matches the home area's city or state; a route area
// holds everyone with a known position.
func (a *AffectedArea) holds(shape region, c *contacts.Contact) bool {
	lat, lon, ok := c.Position()
	switch {
	case shape != nil && ok && c.Location == nil && c.HomeArea.RadiusKm != nil:
		return shape.Within(lat, lon, *c.HomeArea.RadiusKm*1000)
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
