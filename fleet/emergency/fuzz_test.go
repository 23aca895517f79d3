package emergency

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzAlertBody feeds arbitrary alert bodies to the alert checks. They
// never panic, and a body they accept can be carried out as it says: it
// expires after now and to the millisecond, reaches someone, its area has
// a shape that contains what it names (a radius' center, a valid polygon),
// and every channel is a known one, listed once, due before the expiry.
func FuzzAlertBody(f *testing.F) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b AlertBody
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		exp, bad := b.validate(now)
		if len(bad) > 0 {
			for k, v := range bad {
				if k == "" || v == "" {
					t.Fatalf("a refusal without its field or words: %q: %q", k, v)
				}
			}
			return
		}
		if !exp.After(now) || !exp.Equal(exp.Truncate(time.Millisecond)) {
			t.Fatalf("accepted expiry %v (now %v)", exp, now)
		}
		if strings.TrimSpace(b.Title) == "" || utf8.RuneCountInString(b.Title) > 100 || strings.TrimSpace(b.Message) == "" {
			t.Fatalf("accepted title %q, message %q", b.Title, b.Message)
		}
		if !b.selectsSomeone() {
			t.Fatalf("accepted an audience of nobody: %+v", b.TargetAudience)
		}
		switch a := b.AffectedArea; a.Type {
		case "radius":
			if s := a.shape(); s.Validate() != nil || !s.Contains(*a.Center.Latitude, *a.Center.Longitude) {
				t.Fatalf("accepted a radius area that does not hold its center: %+v", a)
			}
		case "polygon":
			if a.shape().Validate() != nil {
				t.Fatalf("accepted a polygon that is no shape: %+v", a.Polygon)
			}
		}
		if len(b.DeliveryChannels) == 0 {
			t.Fatal("accepted no channel")
		}
		for i, c := range b.DeliveryChannels {
			if !slices.Contains(Channels, c.Channel) || slices.ContainsFunc(b.DeliveryChannels[:i], func(o Channel) bool { return o.Channel == c.Channel }) {
				t.Fatalf("accepted channel %q at %d", c.Channel, i)
			}
			if !now.Add(time.Duration(c.DelayMinutes) * time.Minute).Before(exp) {
				t.Fatalf("accepted channel %q due at or after the expiry", c.Channel)
			}
		}
	})
}

// FuzzReportBody feeds arbitrary incident reports to the report checks:
// they never panic, and a report they accept has a known type and
// severity and a location on the Earth.
func FuzzReportBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b ReportBody
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		if bad := b.validate(); len(bad) > 0 {
			return
		}
		if !slices.Contains(EventTypes, b.EventType) || !slices.Contains(Severities, b.SeverityLevel) {
			t.Fatalf("accepted type %q, severity %q", b.EventType, b.SeverityLevel)
		}
		l := b.Location
		if l == nil || l.Latitude == nil || l.Longitude == nil || *l.Latitude < -90 || *l.Latitude > 90 || *l.Longitude < -180 || *l.Longitude > 180 {
			t.Fatalf("accepted location %+v", l)
		}
	})
}
