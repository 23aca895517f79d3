package emergency

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
)

// validate checks every field of an alert and answers its expiration;
// bad is keyed by field path.
func (b *AlertBody) validate(now time.Time) (time.Time, map[string]string) {
	bad := map[string]string{}
	if !slices.Contains(AlertTypes, b.AlertType) {
		bad["alert_type"] = "must be one of " + strings.Join(AlertTypes, ", ")
	}
	if !slices.Contains(Severities, b.Severity) {
		bad["severity"] = "must be low, moderate, high or critical"
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
		for i, x := range append(append([]string{}, ta.Include...), ta.Exclude...) {
			if !slices.Contains(Audiences, x) {
				bad[fmt.Sprintf("target_audience.include_or_exclude[%d]", i)] = "must be one of " + strings.Join(Audiences, ", ")
			}
		}
	}
	if len(b.DeliveryChannels) == 0 {
		bad["delivery_channels"] = "at least one channel is required"
	}
	for i, c := range b.DeliveryChannels {
		if !slices.Contains(Channels, c.Channel) {
			bad[fmt.Sprintf("delivery_channels[%d].channel", i)] = "must be one of " + strings.Join(Channels, ", ")
		}
		if c.RepeatIntervalMinutes < 0 || c.MaxRepeats < 0 || c.MaxRepeats > 20 || c.DelayMinutes < 0 {
			bad[fmt.Sprintf("delivery_channels[%d]", i)] = "repeat_interval_minutes and delay_minutes must not be negative, max_repeats 0-20"
		}
	}
	exp, err := time.Parse(time.RFC3339Nano, b.Expiration)
	if err != nil {
		bad["expiration"] = "must be an ISO 8601 date-time"
	} else if !exp.After(now) {
		bad["expiration"] = "must be in the future"
	}
	for i, x := range b.AutomatedActions {
		if !slices.Contains(Actions, x) {
			bad[fmt.Sprintf("automated_actions[%d]", i)] = "must be one of " + strings.Join(Actions, ", ")
		}
	}
	if ep := b.EscalationPolicy; ep != nil {
		for i, l := range ep.EscalationLevels {
			if l.DelayMinutes <= 0 || l.Action == "" {
				bad[fmt.Sprintf("escalation_policy.escalation_levels[%d]", i)] = "delay_minutes above 0 and an action are required"
			}
		}
	}
	return exp.UTC(), bad
}

// validate adds the area's faults to bad.
func (a *AffectedArea) validate(bad map[string]string) {
	switch a.Type {
	case "radius":
		if a.Center == nil || !(fence.Point{Lat: a.Center.Latitude, Lon: a.Center.Longitude}).Valid() {
			bad["affected_area.center"] = "is required: latitude -90..90, longitude -180..180"
		}
		if a.RadiusKm == nil || !(*a.RadiusKm > 0 && *a.RadiusKm <= 20000) {
			bad["affected_area.radius_km"] = "must be above 0 and at most 20000"
		}
	case "polygon":
		ar := fence.Area{}
		for _, p := range a.Polygon {
			ar.Polygon = append(ar.Polygon, fence.Point{Lat: p.Latitude, Lon: p.Longitude})
		}
		if err := ar.Validate(); err != nil || len(a.Polygon) == 0 {
			bad["affected_area.polygon"] = "must be at least three valid vertices"
		}
	case "route":
		if a.RouteID == "" {
			bad["affected_area.route_id"] = "is required for type route"
		}
	case "city":
		if a.City == "" {
			bad["affected_area.city"] = "is required for type city"
		}
	case "state":
		if len(a.State) != 2 || strings.ToUpper(a.State) != a.State {
			bad["affected_area.state"] = "must be a two-letter state code"
		}
	default:
		bad["affected_area.type"] = "must be radius, polygon, route, city or state"
	}
	if a.BufferKm != nil && !(*a.BufferKm >= 0 && *a.BufferKm <= 100) {
		bad["affected_area.buffer_km"] = "must be 0 to 100"
	}
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
