package contacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // quiet hours' zones must not depend on the host's zoneinfo
	"unicode"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// Limits of a contact.
const (
	maxName  = 200
	maxID    = 200 // characters, as trips and vehicle profiles take a driver or vehicle id
	maxLinks = 100
	maxToken = 4096
)

var (
	e164     = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	language = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
)

// validate checks every field of b and fills its defaults; bad is keyed
// by field path.
func (b *Body) validate() map[string]string {
	bad := map[string]string{}
	b.Name = strings.TrimSpace(b.Name)
	if b.Name == "" || len([]rune(b.Name)) > maxName || hasControl(b.Name) {
		bad["name"] = fmt.Sprintf("is required, at most %d characters", maxName)
	}
	b.validateRoles(bad)
	b.Channels.validate(bad, slices.Contains(b.Roles, "driver"))
	if h := b.HomeArea; h != nil {
		h.validate(bad)
	}
	if l := b.Location; l != nil {
		l.validate(bad, "location")
	}
	if b.Links == nil {
		b.Links = &Links{}
	}
	b.Links.validate(bad, slices.Contains(b.Roles, "emergency_contact"))
	if q := b.QuietHours; q != nil {
		q.validate(bad)
	}
	if b.Language == "" {
		b.Language = "en"
	}
	if len(b.Language) > 35 || !language.MatchString(b.Language) {
		bad["language"] = "must be a language tag such as en or es-MX"
	}
	return bad
}

// validateRoles adds to bad the faults of the roles: none, one unknown,
// one listed twice.
func (b *Body) validateRoles(bad map[string]string) {
	if len(b.Roles) == 0 {
		bad["roles"] = "at least one role is required: " + strings.Join(Roles, ", ")
	}
	for i, r := range b.Roles {
		switch {
		case !slices.Contains(Roles, r):
			bad[fmt.Sprintf("roles[%d]", i)] = enum.Refusal(Roles...)
		case slices.Index(b.Roles, r) < i:
			bad[fmt.Sprintf("roles[%d]", i)] = "is listed twice"
		}
	}
}

// validate trims the channels and adds their faults to bad; a contact
// that is not a driver needs one at least.
func (ch *Channels) validate(bad map[string]string, driver bool) {
	for _, p := range []struct {
		name string
		v    *string
	}{{"channels.sms", &ch.SMS}, {"channels.voice", &ch.Voice}} {
		*p.v = strings.TrimSpace(*p.v)
		if *p.v != "" && !e164.MatchString(*p.v) {
			bad[p.name] = "must be an E.164 number: + then 7 to 15 digits, e.g. +14155550100"
		}
	}
	ch.Email = strings.TrimSpace(ch.Email)
	if ch.Email != "" && !validEmail(ch.Email) {
		bad["channels.email"] = "must be an e-mail address such as name@example.com"
	}
	switch {
	case len(ch.PushToken) > maxToken || hasControl(ch.PushToken):
		bad["channels.push_token"] = fmt.Sprintf("must be at most %d printable characters", maxToken)
	case ch.PushToken != "" && jsonpath.IsBlank(ch.PushToken):
		// white space is no token: nothing could be pushed to it
		bad["channels.push_token"] = jsonpath.BlankRefusal
	}
	if ch.SMS == "" && ch.Voice == "" && ch.Email == "" && ch.PushToken == "" && !driver {
		bad["channels"] = "at least one of sms, voice, email or push_token is required"
	}
}

// validate adds the home area's faults to bad: it needs a point, a city
// or a state.
func (h *HomeArea) validate(bad map[string]string) {
	// the two go together: the one missing is named, as a place's
	// missing coordinate is on every request
	switch {
	case h.Latitude != nil && h.Longitude == nil:
		bad["home_area.longitude"] = "is required with latitude"
	case h.Latitude == nil && h.Longitude != nil:
		bad["home_area.latitude"] = "is required with longitude"
	}
	checkPoint(bad, "home_area", h.Latitude, h.Longitude, false)
	if h.RadiusKm != nil && !(*h.RadiusKm > 0 && *h.RadiusKm <= 1000) {
		bad["home_area.radius_km"] = "must be above 0 and at most 1000"
	}
	if h.State != "" && !geocode.IsStateCode(h.State) {
		bad["home_area.state"] = "must be a two-letter USPS state code, as OH or DC"
	}
	switch {
	case h.City != "" && jsonpath.IsBlank(h.City):
		// white space places the person nowhere, yet would count as a
		// home area
		bad["home_area.city"] = jsonpath.BlankRefusal
	case utf8.RuneCountInString(h.City) > maxName:
		bad["home_area.city"] = fmt.Sprintf("must be at most %d characters", maxName)
	case hasControl(h.City):
		bad["home_area.city"] = "must not contain a control character"
	}
	if h.Latitude == nil && h.City == "" && h.State == "" {
		bad["home_area"] = "needs a point (latitude, longitude), a city or a state"
	}
}

// validate makes nil id lists empty and adds the links' faults to bad;
// an emergency contact names the drivers whose contact they are.
func (lk *Links) validate(bad map[string]string, emergencyContact bool) {
	for _, l := range []struct {
		name string
		ids  *[]string
	}{{"links.driver_ids", &lk.DriverIDs}, {"links.vehicle_ids", &lk.VehicleIDs}, {"links.emergency_contact_for", &lk.EmergencyContactFor}} {
		if *l.ids == nil {
			*l.ids = []string{}
		}
		if len(*l.ids) > maxLinks {
			bad[l.name] = fmt.Sprintf("at most %d ids", maxLinks)
		}
		for i, id := range *l.ids {
			if id == "" || utf8.RuneCountInString(id) > maxID || hasControl(id) {
				bad[fmt.Sprintf("%s[%d]", l.name, i)] = fmt.Sprintf("must be an id of 1 to %d printable characters", maxID)
			}
		}
	}
	if emergencyContact && len(lk.EmergencyContactFor) == 0 {
		bad["links.emergency_contact_for"] = "an emergency contact names the drivers whose contact they are"
	}
	if !emergencyContact && len(lk.EmergencyContactFor) > 0 {
		bad["links.emergency_contact_for"] = "is only for a contact with the emergency_contact role"
	}
}

// validate adds the quiet hours' faults to bad and fills their defaults:
// the zone UTC, critical alerts let through.
func (q *QuietHours) validate(bad map[string]string) {
	start, errS := minuteOfDay(q.Start)
	if errS != nil {
		bad["quiet_hours.start"] = "must be a time of day HH:MM"
	}
	end, errE := minuteOfDay(q.End)
	switch {
	case errE != nil:
		bad["quiet_hours.end"] = "must be a time of day HH:MM"
	case errS == nil && start == end:
		bad["quiet_hours.end"] = "must differ from start: a window of no length holds no one quiet"
	}
	if q.Timezone == "" {
		q.Timezone = "UTC"
	}
	if _, err := time.LoadLocation(q.Timezone); err != nil || q.Timezone == "Local" {
		bad["quiet_hours.timezone"] = "must be an IANA time zone such as America/Chicago"
	}
	if q.CriticalOverride == nil {
		t := true
		q.CriticalOverride = &t
	}
}

// validate adds the location's faults to bad under the prefix p; the
// server stamps reported_at, so a request's is refused.
func (l *Location) validate(bad map[string]string, p string) {
	checkPoint(bad, p, l.Latitude, l.Longitude, true)
	if l.ReportedAt != nil {
		bad[p+".reported_at"] = "is set by the server when the location is reported; leave it out"
	}
	if l.AccuracyM != nil && !(*l.AccuracyM >= 0 && *l.AccuracyM <= 100_000) {
		bad[p+".accuracy_m"] = "must be 0 to 100000"
	}
}

// checkPoint adds the faults of a latitude and longitude to bad.
func checkPoint(bad map[string]string, p string, lat, lon *float64, required bool) {
	if lat == nil {
		if required {
			bad[p+".latitude"] = "is required"
		}
	} else if !(*lat >= -90 && *lat <= 90) {
		bad[p+".latitude"] = "must be between -90 and 90"
	}
	if lon == nil {
		if required {
			bad[p+".longitude"] = "is required"
		}
	} else if !(*lon >= -180 && *lon <= 180) {
		bad[p+".longitude"] = "must be between -180 and 180"
	}
}

// validEmail accepts a bare address with a dotted domain.
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	d := s[at+1:]
	return strings.Contains(d, ".") && !strings.HasPrefix(d, ".") && !strings.HasSuffix(d, ".")
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// maxRawKey is the longest duplicate key stored as it is; a longer one is
// stored as its SHA-256. A unique index of PostgreSQL holds at most about
// 2.7 kB an entry, and 100 driver ids of 200 characters make far more.
// Shorter keys stay as they are, so that contacts stored before keep
// matching their duplicates.
const maxRawKey = 1024

// key is the duplicate key of a contact: its name (case and spaces aside)
// with its numbers, e-mail and driver ids (two drivers of one name are two
// people).
func (b *Body) key() string {
	name := strings.ToLower(strings.Join(strings.Fields(b.Name), " "))
	k := name + "\x1f" + b.Channels.SMS + "\x1f" + b.Channels.Voice + "\x1f" + strings.ToLower(b.Channels.Email)
	if b.Links != nil && len(b.Links.DriverIDs) > 0 {
		k += "\x1f" + strings.Join(slices.Sorted(slices.Values(b.Links.DriverIDs)), "\x1e")
	}
	if len(k) > maxRawKey {
		sum := sha256.Sum256([]byte(k))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	return k
}
