package contacts

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBodyValidate(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	valid := func() Body {
		return Body{Name: "Ana", Roles: []string{"field_personnel"}, Channels: Channels{SMS: "+14155550100", Email: "ana@example.com"}}
	}
	for _, c := range []struct {
		name string
		edit func(b *Body)
		bad  []string
	}{
		{"valid", func(*Body) {}, nil},
		{"driver without channels", func(b *Body) { b.Roles, b.Channels = []string{"driver"}, Channels{} }, nil},
		{"no channels", func(b *Body) { b.Channels = Channels{} }, []string{"channels"}},
		{"national number", func(b *Body) { b.Channels.SMS = "4155550100" }, []string{"channels.sms"}},
		{"too long a number", func(b *Body) { b.Channels.Voice = "+1234567890123456" }, []string{"channels.voice"}},
		{"display name", func(b *Body) { b.Channels.Email = "Ana <ana@example.com>" }, []string{"channels.email"}},
		{"dotless domain", func(b *Body) { b.Channels.Email = "ana@localhost" }, []string{"channels.email"}},
		{"role twice", func(b *Body) { b.Roles = []string{"dispatcher", "dispatcher"} }, []string{"roles[1]"}},
		{"half a home point", func(b *Body) { b.HomeArea = &HomeArea{Latitude: f(1)} }, []string{"home_area.longitude"}},
		{"home state", func(b *Body) { b.HomeArea = &HomeArea{City: "Columbus", State: "Ohio"} }, []string{"home_area.state"}},
		{"home radius", func(b *Body) { b.HomeArea = &HomeArea{Latitude: f(1), Longitude: f(2), RadiusKm: f(0)} }, []string{"home_area.radius_km"}},
		{"location", func(b *Body) { b.Location = &Location{Latitude: f(0), Longitude: f(-180.01)} }, []string{"location.longitude"}},
		{"quiet hours", func(b *Body) { b.QuietHours = &QuietHours{Start: "7pm", End: "24:00"} }, []string{"quiet_hours.end", "quiet_hours.start"}},
		{"local zone", func(b *Body) { b.QuietHours = &QuietHours{Start: "22:00", End: "06:00", Timezone: "Local"} }, []string{"quiet_hours.timezone"}},
		{"empty link", func(b *Body) { b.Links = &Links{VehicleIDs: []string{""}} }, []string{"links.vehicle_ids[0]"}},
		// ids as trips and vehicle profiles take them: up to 200 characters
		{"200-character ids", func(b *Body) {
			b.Links = &Links{DriverIDs: []string{strings.Repeat("d", 200)}, VehicleIDs: []string{strings.Repeat("é", 200)}}
		}, nil},
		{"201-character id", func(b *Body) { b.Links = &Links{VehicleIDs: []string{strings.Repeat("é", 201)}} }, []string{"links.vehicle_ids[0]"}},
		{"language", func(b *Body) { b.Language = "e" }, []string{"language"}},
	} {
		b := valid()
		c.edit(&b)
		got := slices.Sorted(maps.Keys(b.validate()))
		if !slices.Equal(got, c.bad) && !(len(got) == 0 && len(c.bad) == 0) {
			t.Errorf("%s: %v, want %v", c.name, got, c.bad)
		}
	}
}

func TestQuiet(t *testing.T) {
	off := false
	at := func(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }
	overnight := &Contact{QuietHours: &QuietHours{Start: "22:00", End: "06:30", Timezone: "America/New_York"}}
	daytime := &Contact{QuietHours: &QuietHours{Start: "12:00", End: "13:00", Timezone: "UTC", CriticalOverride: &off}}
	for _, c := range []struct {
		c        *Contact
		at       time.Time
		severity string
		want     bool
	}{
		{overnight, at(3, 30), "high", true},      // 22:30 in New York
		{overnight, at(11, 29), "high", true},     // 06:29
		{overnight, at(11, 30), "high", false},    // 06:30
		{overnight, at(3, 30), "critical", false}, // the override holds by default
		{daytime, at(12, 0), "critical", true},    // the override is off
		{daytime, at(13, 0), "high", false},
		{&Contact{}, at(3, 0), "low", false},
	} {
		if got := c.c.Quiet(c.at, c.severity); got != c.want {
			t.Errorf("%+v at %v (%s): %v", c.c.QuietHours, c.at, c.severity, got)
		}
	}
}

// FuzzBody checks that any JSON body validates without panicking and that
// a valid one keeps a duplicate key and survives a round trip.
func FuzzBody(f *testing.F) {
	f.Add(`{"name":"Ana","roles":["dispatcher"],"channels":{"sms":"+14155550100"}}`)
	f.Add(`{"name":"Mom","roles":["emergency_contact"],"channels":{"email":"m@example.com"},"links":{"emergency_contact_for":["drv_1"]},"quiet_hours":{"start":"22:00","end":"06:00","timezone":"Europe/Paris"}}`)
	f.Add(`{"name":"F","roles":["field_personnel"],"channels":{"push_token":"t"},"home_area":{"latitude":91,"longitude":0,"state":"oh"},"location":{"latitude":1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var b Body
		if json.Unmarshal([]byte(s), &b) != nil {
			return
		}
		if bad := b.validate(); len(bad) > 0 {
			return
		}
		if b.key() == "" || b.Links == nil || b.Language == "" {
			t.Fatalf("valid body without its defaults: %+v", b)
		}
		c := fromBody("con_x", &b, time.Unix(0, 0), time.Unix(0, 0))
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Contact
		if err := json.Unmarshal(raw, &back); err != nil || back.Name != c.Name {
			t.Fatalf("round trip: %v %+v", err, back)
		}
		_ = back.Quiet(time.Unix(0, 0), "high")
	})
}
