package emergency

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// Check names every field of alert body b at fault, by path (Create's
// checks of the body, which change nothing); empty when there is none.
func (a *Alerts) Check(b AlertBody) map[string]string {
	_, bad := b.validate(apitime.Of(a.now()))
	return bad
}

// validate checks every field of an alert and answers its expiration;
// bad is keyed by field path.
func (b *AlertBody) validate(now time.Time) (time.Time, map[string]string) {
	bad := map[string]string{}
	if msg := enum.Required(b.AlertType, AlertTypes...); msg != "" {
		bad["alert_type"] = msg
	}
	if msg := enum.Required(b.Severity, Severities...); msg != "" {
		bad["severity"] = msg
	}
	if strings.TrimSpace(b.Title) == "" || len([]rune(b.Title)) > 100 {
		bad["title"] = "is required, at most 100 characters"
	}
	if strings.TrimSpace(b.Message) == "" || len([]rune(b.Message)) > 500 {
		bad["message"] = "is required, at most 500 characters"
	}
	if b.AffectedArea == nil {
		bad["affected_area"] = "is required"
	} else {
		b.AffectedArea.validate(bad)
	}
	if ta := b.TargetAudience; ta == nil {
		bad["target_audience"] = "is required"
	} else {
		for _, l := range []struct {
			name string
			auds []string
		}{{"target_audience.include", ta.Include}, {"target_audience.exclude", ta.Exclude}} {
			for i, x := range l.auds {
				if !slices.Contains(Audiences, x) {
					bad[fmt.Sprintf("%s[%d]", l.name, i)] = enum.Refusal(Audiences...)
				}
			}
		}
		for _, l := range []struct {
			name string
			ids  []string
		}{{"target_audience.specific_vehicles", ta.SpecificVehicles}, {"target_audience.specific_drivers", ta.SpecificDrivers}} {
			if len(l.ids) > maxSpecific {
				// refused whole, before any id is read: every id named is
				// looked up in the directory and the trips
				bad[l.name] = fmt.Sprintf("at most %d ids", maxSpecific)
				continue
			}
			for i, id := range l.ids {
				if !vehicles.ValidID(id) {
					bad[fmt.Sprintf("%s[%d]", l.name, i)] = vehicles.IDRefusal
				}
			}
		}
		if !b.selectsSomeone() {
			bad["target_audience"] = "selects nobody: include an audience that is not excluded, or name specific_vehicles or specific_drivers"
		}
	}
	exp, err := apitime.Parse(b.Expiration)
	// the expiry is stated and kept in UTC to the millisecond, as every
	// time the service states: the alert expires when expires_at says
	exp = apitime.Of(exp)
	if err != nil {
		bad["expiration"] = "must be an ISO 8601 date-time"
	} else if !exp.After(now) {
		bad["expiration"] = "must be in the future"
	}
	if len(b.DeliveryChannels) == 0 {
		bad["delivery_channels"] = "at least one channel is required"
	}
	for i, c := range b.DeliveryChannels {
		c.validate(fmt.Sprintf("delivery_channels[%d]", i), b.DeliveryChannels[:i], now, exp, bad)
	}
	for i, x := range b.AutomatedActions {
		switch {
		case !slices.Contains(Actions, x):
			bad[fmt.Sprintf("automated_actions[%d]", i)] = enum.Refusal(Actions...)
		case slices.Contains(b.AutomatedActions[:i], x):
			bad[fmt.Sprintf("automated_actions[%d]", i)] = "is listed twice: each action once"
		}
	}
	if ep := b.EscalationPolicy; ep != nil {
		if ep.Enabled == nil {
			// left out, the levels sent would never run
			bad["escalation_policy.enabled"] = "is required: true to escalate through escalation_levels, false for no escalation"
		} else if *ep.Enabled && !b.AcknowledgmentRequired {
			// escalation waits on acknowledgments pending: on an alert
			// that requires none it would be accepted and never run
			bad["escalation_policy.enabled"] = "escalation needs acknowledgment_required true: it escalates while acknowledgments are pending, and an alert that requires none has none (set enabled false for no escalation)"
		}
		if ep.on() && len(ep.EscalationLevels) == 0 {
			// enabled and stated as such, it would never escalate
			bad["escalation_policy.escalation_levels"] = "at least one level is required with enabled true: a policy without levels never escalates (set enabled false for no escalation)"
		}
		for i, l := range ep.EscalationLevels {
			p := fmt.Sprintf("escalation_policy.escalation_levels[%d]", i)
			switch {
			case l.DelayMinutes <= 0:
				bad[p+".delay_minutes"] = "is required: above 0"
			case l.DelayMinutes > maxDelayMinutes:
				bad[p+".delay_minutes"] = fmt.Sprintf("must be 1 to %d minutes after the alert's creation", maxDelayMinutes)
			case i > 0 && l.DelayMinutes <= ep.EscalationLevels[i-1].DelayMinutes:
				// levels are reached in order: one due before the level
				// ahead of it would be sent first and the other never
				bad[p+".delay_minutes"] = "must be after the level before it: levels are reached in order"
			case exp.After(now) && !now.Add(time.Duration(l.DelayMinutes)*time.Minute).Before(exp):
				bad[p+".delay_minutes"] = "must fall before the expiration"
			}
			if _, ok := levelRoles[l.Action]; !ok {
				bad[p+".action"] = enum.Refusal(slices.Sorted(maps.Keys(levelRoles))...)
			}
		}
	}
	return exp, bad
}

// maxSpecific bounds target_audience.specific_vehicles and
// specific_drivers, each: 5,000 ids took 3.2 s to resolve.
const maxSpecific = 1000

// Bounds of a channel's timing.
const (
	maxDelayMinutes  = 24 * 60
	maxRepeatMinutes = 24 * 60
	maxRepeats       = 20
)

// validate adds the faults of the channel at path p to bad; before are
// the channels listed ahead of it, exp the alert's expiration (checked
// against the delay when it is valid).
func (c *Channel) validate(p string, before []Channel, now, exp time.Time, bad map[string]string) {
	switch msg := enum.Required(c.Channel, Channels...); {
	case msg != "":
		bad[p+".channel"] = msg
	case slices.ContainsFunc(before, func(o Channel) bool { return o.Channel == c.Channel }):
		bad[p+".channel"] = "is listed twice: one item per channel"
	}
	if c.Priority != "" && !slices.Contains(ChannelPriorities, c.Priority) {
		bad[p+".priority"] = enum.Refusal(ChannelPriorities...)
	}
	switch {
	case c.DelayMinutes < 0 || c.DelayMinutes > maxDelayMinutes:
		bad[p+".delay_minutes"] = fmt.Sprintf("must be 0 to %d minutes after the alert's creation", maxDelayMinutes)
	case exp.After(now) && !now.Add(time.Duration(c.DelayMinutes)*time.Minute).Before(exp):
		bad[p+".delay_minutes"] = "must fall before the expiration"
	}
	switch {
	case c.RepeatIntervalMinutes < 0 || c.RepeatIntervalMinutes > maxRepeatMinutes:
		bad[p+".repeat_interval_minutes"] = fmt.Sprintf("must be 1 to %d minutes", maxRepeatMinutes)
	case c.RepeatIntervalMinutes == 0 && c.MaxRepeats > 0:
		bad[p+".repeat_interval_minutes"] = fmt.Sprintf("is required with max_repeats: 1 to %d minutes", maxRepeatMinutes)
	}
	switch {
	case c.MaxRepeats < 0 || c.MaxRepeats > maxRepeats:
		bad[p+".max_repeats"] = fmt.Sprintf("must be 1 to %d", maxRepeats)
	case c.MaxRepeats == 0 && c.RepeatIntervalMinutes > 0:
		bad[p+".max_repeats"] = fmt.Sprintf("is required with repeat_interval_minutes: 1 to %d", maxRepeats)
	}
}

// validate adds the area's faults to bad.
func (a *AffectedArea) validate(bad map[string]string) {
	switch a.Type {
	case "radius":
		if a.Center == nil {
			bad["affected_area.center"] = "is required for type radius: latitude -90..90, longitude -180..180"
		} else {
			checkPoint(bad, "affected_area.center", a.Center.Latitude, a.Center.Longitude)
		}
		if a.RadiusKm == nil || !(*a.RadiusKm > 0 && *a.RadiusKm <= 20000) {
			bad["affected_area.radius_km"] = "must be above 0 and at most 20000"
		}
	case "polygon":
		valid := true
		for i, p := range a.Polygon {
			valid = checkPoint(bad, fmt.Sprintf("affected_area.polygon[%d]", i), p.Latitude, p.Longitude) && valid
		}
		if !valid {
			break
		}
		if err := a.shape().Validate(); err != nil || len(a.Polygon) == 0 {
			bad["affected_area.polygon"] = "must be at least three valid vertices"
		}
	case "route":
		if a.RouteID == "" {
			bad["affected_area.route_id"] = "is required for type route"
		}
	case "city":
		// a city that names no place would be approximated over the
		// whole organization: refused, as a mistake of the request
		switch {
		case a.City == "":
			bad["affected_area.city"] = "is required for type city"
		case jsonpath.IsBlank(a.City):
			bad["affected_area.city"] = jsonpath.BlankRefusal
		case utf8.RuneCountInString(a.City) > maxPlaceName:
			bad["affected_area.city"] = fmt.Sprintf("must be at most %d characters", maxPlaceName)
		case strings.ContainsFunc(a.City, unicode.IsControl):
			bad["affected_area.city"] = "must not contain a control character"
		}
		if a.State != "" && !geocode.IsStateCode(a.State) {
			bad["affected_area.state"] = stateRefusal
		}
	case "state":
		if !geocode.IsStateCode(a.State) {
			bad["affected_area.state"] = stateRefusal
		}
	default:
		bad["affected_area.type"] = enum.Required(a.Type, areaTypes...)
	}
	if a.BufferKm != nil && !(*a.BufferKm >= 0 && *a.BufferKm <= 100) {
		bad["affected_area.buffer_km"] = "must be 0 to 100"
	}
	if !slices.Contains(areaTypes, a.Type) {
		return
	}
	// a field of another type would be taken as honoured and is not
	for _, f := range []struct {
		name  string
		sent  bool
		types []string
	}{
		{"center", a.Center != nil, []string{"radius"}},
		{"radius_km", a.RadiusKm != nil, []string{"radius"}},
		{"polygon", a.Polygon != nil, []string{"polygon"}},
		{"route_id", a.RouteID != "", []string{"route"}},
		{"city", a.City != "", []string{"city"}},
		{"state", a.State != "", []string{"state", "city"}},
		{"buffer_km", a.BufferKm != nil, []string{"route", "city", "state"}},
	} {
		if f.sent && !slices.Contains(f.types, a.Type) {
			bad["affected_area."+f.name] = "does not apply to type " + a.Type + ": only to type " + strings.Join(f.types, ", ")
		}
	}
}

// maxPlaceName is the longest city an area names, as a contact's home
// area city.
const maxPlaceName = 200

// stateRefusal refuses a state that is no USPS code: the address data
// (internal/geocode) holds United States addresses only.
const stateRefusal = "must be a two-letter USPS state code, as OH or DC"

// areaTypes are the types of an affected area.
var areaTypes = []string{"radius", "polygon", "route", "city", "state"}

// selectsSomeone says whether the target audience can name anyone: an
// included audience it does not exclude (emergency_contacts counting as
// included with the notify_emergency_contacts action), or a specific
// vehicle or driver. Otherwise the alert would reach nobody whatever the
// directory and the trips hold.
func (b *AlertBody) selectsSomeone() bool {
	ta := b.TargetAudience
	if len(ta.SpecificVehicles) > 0 || len(ta.SpecificDrivers) > 0 {
		return true
	}
	included := slices.Clone(ta.Include)
	if slices.Contains(b.AutomatedActions, "notify_emergency_contacts") {
		included = append(included, "emergency_contacts")
	}
	return slices.ContainsFunc(included, func(x string) bool { return !slices.Contains(ta.Exclude, x) })
}

// checkPoint adds to bad the faults of a latitude and longitude under the
// prefix p: each is required and in range. It reports whether both are
// good.
func checkPoint(bad map[string]string, p string, lat, lon *float64) bool {
	ok := true
	switch {
	case lat == nil:
		bad[p+".latitude"], ok = "is required", false
	case !(*lat >= -90 && *lat <= 90):
		bad[p+".latitude"], ok = "must be between -90 and 90", false
	}
	switch {
	case lon == nil:
		bad[p+".longitude"], ok = "is required", false
	case !(*lon >= -180 && *lon <= 180):
		bad[p+".longitude"], ok = "must be between -180 and 180", false
	}
	return ok
}

// notifyContacts carries out the notify_emergency_contacts action: the
// emergency contacts join the alert's audience (unless the body excludes
// them), so the alert reaches them on its channels like every recipient.
func (b *AlertBody) notifyContacts() {
	a := b.TargetAudience
	if a == nil || !slices.Contains(b.AutomatedActions, "notify_emergency_contacts") || slices.Contains(a.Include, "emergency_contacts") {
		return
	}
	a.Include = append(slices.Clip(a.Include), "emergency_contacts")
}
