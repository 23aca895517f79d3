package contacts

import (
	"time"
)

// Roles a contact can hold.
var Roles = []string{"driver", "field_personnel", "dispatcher", "supervisor", "emergency_management", "emergency_contact"}

// Channels are the addresses that reach a contact; each is optional.
type Channels struct {
	SMS       string `json:"sms,omitempty" doc:"E.164 number, e.g. +14155550100"`
	Voice     string `json:"voice,omitempty" doc:"E.164 number"`
	Email     string `json:"email,omitempty"`
	PushToken string `json:"push_token,omitempty" doc:"opaque token, at most 4096 printable characters, not only white space"`
}

// Point is a position.
type Point struct {
	Latitude  *float64 `json:"latitude" required:"true"`
	Longitude *float64 `json:"longitude" required:"true"`
}

// HomeArea is where a contact is based when no location is known: a
// point with an optional radius, and the city and state it lies in.
type HomeArea struct {
	Latitude  *float64 `json:"latitude,omitempty"`
	Longitude *float64 `json:"longitude,omitempty"`
	RadiusKm  *float64 `json:"radius_km,omitempty"`
	City      string   `json:"city,omitempty" doc:"at most 200 characters, not only white space, without a control character"`
	State     string   `json:"state,omitempty" doc:"a USPS code in capitals (OH, DC, PR)"`
}

// Location is a contact's last known position.
type Location struct {
	Latitude   *float64   `json:"latitude" required:"true"`
	Longitude  *float64   `json:"longitude" required:"true"`
	AccuracyM  *float64   `json:"accuracy_m,omitempty"`
	ReportedAt *time.Time `json:"reported_at,omitempty" doc:"set by the server when the location is reported; refused in a request"`
}

// Links tie a contact to the drivers and vehicles they belong to; an
// emergency contact names the drivers (driver ids, or contact ids of this
// organization) whose contact they are.
type Links struct {
	DriverIDs           []string `json:"driver_ids" required:"false"`
	VehicleIDs          []string `json:"vehicle_ids" required:"false"`
	EmergencyContactFor []string `json:"emergency_contact_for" required:"false" id:"true"`
}

// QuietHours is a daily window, in the contact's time zone, when only
// in-app alerts reach them (no incident notification either), except
// critical alerts and incidents while CriticalOverride holds (the
// default).
type QuietHours struct {
	Start            string `json:"start" required:"true" doc:"HH:MM"`
	End              string `json:"end" required:"true" doc:"HH:MM"`
	Timezone         string `json:"timezone,omitempty" empty:"refused" doc:"IANA zone, default UTC (\"\" is refused)"`
	CriticalOverride *bool  `json:"critical_override,omitempty" doc:"critical alerts and incidents reach the contact anyway; default true"`
}

// Body creates or replaces a contact.
type Body struct {
	Name       string      `json:"name" required:"true"`
	Roles      []string    `json:"roles" required:"true" enum:"driver,field_personnel,dispatcher,supervisor,emergency_management,emergency_contact" doc:"one or more of driver, field_personnel, dispatcher, supervisor, emergency_management, emergency_contact"`
	Channels   Channels    `json:"channels" required:"true"`
	HomeArea   *HomeArea   `json:"home_area,omitempty"`
	Location   *Location   `json:"location,omitempty"`
	Links      *Links      `json:"links,omitempty"`
	QuietHours *QuietHours `json:"quiet_hours,omitempty"`
	Language   string      `json:"language,omitempty" empty:"refused" doc:"BCP 47 tag, e.g. en or es-MX; default en (\"\" is refused)"`
}

// Contact is the contact resource.
type Contact struct {
	ContactID  string      `json:"contact_id"`
	Name       string      `json:"name"`
	Roles      []string    `json:"roles"`
	Channels   Channels    `json:"channels"`
	HomeArea   *HomeArea   `json:"home_area,omitempty"`
	Location   *Location   `json:"location,omitempty"`
	Links      Links       `json:"links"`
	QuietHours *QuietHours `json:"quiet_hours,omitempty"`
	Language   string      `json:"language"`
	CreatedAt  time.Time   `json:"created_at"`
	UpdatedAt  time.Time   `json:"updated_at"`
}

// List is a page of contacts.
type List struct {
	Contacts   []Contact  `json:"contacts"`
	Pagination Pagination `json:"pagination"`
}

// Pagination continues a listing: NextCursor is null on the last page.
type Pagination struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more" doc:"true exactly when next_cursor is not null"`
	NextCursor *string `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
}

// Deleted answers a delete.
type Deleted struct {
	Success   bool   `json:"success"`
	ContactID string `json:"contact_id"`
}

// HasRole says whether c holds role.
func (c *Contact) HasRole(role string) bool {
	for _, r := range c.Roles {
		if r == role {
			return true
		}
	}
	return false
}

// Position is where c is: the last known location, else the home area's
// point; ok is false when neither is known.
func (c *Contact) Position() (lat, lon float64, ok bool) {
	if l := c.Location; l != nil && l.Latitude != nil && l.Longitude != nil {
		return *l.Latitude, *l.Longitude, true
	}
	if h := c.HomeArea; h != nil && h.Latitude != nil && h.Longitude != nil {
		return *h.Latitude, *h.Longitude, true
	}
	return 0, 0, false
}

// Quiet says whether at falls in c's quiet hours for an alert of the
// given severity: critical alerts pass unless the contact turned the
// override off.
func (c *Contact) Quiet(at time.Time, severity string) bool {
	q := c.QuietHours
	if q == nil {
		return false
	}
	if severity == "critical" && (q.CriticalOverride == nil || *q.CriticalOverride) {
		return false
	}
	loc, err := time.LoadLocation(q.Timezone)
	if err != nil {
		loc = time.UTC
	}
	start, err1 := minuteOfDay(q.Start)
	end, err2 := minuteOfDay(q.End)
	if err1 != nil || err2 != nil || start == end {
		return false
	}
	t := at.In(loc)
	m := t.Hour()*60 + t.Minute()
	if start < end {
		return m >= start && m < end
	}
	return m >= start || m < end // the window spans midnight
}

// minuteOfDay reads "HH:MM".
func minuteOfDay(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, err
	}
	return t.Hour()*60 + t.Minute(), nil
}
