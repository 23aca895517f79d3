package emergency_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// directory holds a driver's emergency contacts and the contacts of
// each role.
type directory struct {
	ecs   []contacts.Contact
	roles map[string][]contacts.Contact
}

func (d directory) WithRole(_ context.Context, _ store.Scope, role string) ([]contacts.Contact, error) {
	return d.roles[role], nil
}

func (d directory) EmergencyContactsOf(_ context.Context, _ store.Scope, driverID string) ([]contacts.Contact, error) {
	if driverID == "drv_1" {
		return d.ecs, nil
	}
	return nil, nil
}

func (directory) ForDriver(context.Context, store.Scope, string) ([]contacts.Contact, error) {
	return nil, nil
}

func (directory) ForVehicle(context.Context, store.Scope, string) ([]contacts.Contact, error) {
	return nil, nil
}

func (directory) Get(context.Context, store.Scope, string) (contacts.Contact, error) {
	return contacts.Contact{}, contacts.ErrNotFound
}

// accepting is a gateway that takes every notification.
type accepting struct{}

func (accepting) Notify(context.Context, emergency.Notification) error { return nil }

// TestIncidentEventsCarryResponseAndEscalation: an incident's events
// carry emergency_response with the emergency contacts its report
// reached (the dispatchers are not counted) and no dispatch, and
// escalation at level 0, then 1 once escalated, with nothing scheduled
// and nobody notified at escalation; a crash is an emergency_events
// event, a breakdown a maintenance_events one with recommendations and
// predictive_indicators.
func TestIncidentEventsCarryResponseAndEscalation(t *testing.T) {
	st := testdb.SQLite(t)
	b := &bus{}
	dir := directory{
		ecs:   []contacts.Contact{{ContactID: "ctc_e1", Name: "E1", Channels: contacts.Channels{SMS: "+15550000001"}}, {ContactID: "ctc_e2", Name: "E2", Channels: contacts.Channels{Email: "e2@example.com"}}},
		roles: map[string][]contacts.Contact{"dispatcher": {{ContactID: "ctc_d1", Name: "D1", Channels: contacts.Channels{SMS: "+15550000002"}}}},
	}
	svc := emergency.NewIncidents(st, st, dir, accepting{}, b, nil, slog.New(slog.DiscardHandler))
	sc := store.Scope{Org: "org-a", Env: "test"}
	lat, lon := 40.0, -83.0
	in, err := svc.Report(t.Context(), sc, "key_1", emergency.ReportBody{EventType: "crash", SeverityLevel: "high", DriverID: "drv_1", VehicleID: "veh_1",
		Location: &emergency.ReportedLocation{Latitude: &lat, Longitude: &lon}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetStatus(t.Context(), sc, in.IncidentID, "key_1", emergency.StatusBody{Status: "escalated"}); err != nil {
		t.Fatal(err)
	}
	if len(b.evs) != 2 {
		t.Fatalf("%d events published, want incident_reported and incident_escalated", len(b.evs))
	}
	for i, want := range []struct {
		typ   string
		level int
	}{{"incident_reported", 0}, {"incident_escalated", 1}} {
		ev := b.evs[i]
		if ev.EventType != want.typ || ev.Category != "emergency_events" {
			t.Errorf("event %d: %s in %s, want %s in emergency_events", i, ev.EventType, ev.Category, want.typ)
		}
		er := ev.EmergencyResponse
		if er["response_initiated"] != false || er["authorities_contacted"] != false || er["emergency_contacts_notified"] != 2 ||
			er["estimated_response_time"] != nil || len(er) != 4 {
			t.Errorf("%s emergency_response %v, want 2 emergency contacts notified, nothing initiated or contacted, no response time", ev.EventType, er)
		}
		es := ev.Escalation
		if es["level"] != want.level || es["next_escalation"] != nil || fmt.Sprint(es["escalation_contacts"]) != "[]" || len(es) != 3 {
			t.Errorf("%s escalation %v, want level %d, next_escalation null, no contacts", ev.EventType, es, want.level)
		}
		if ev.Recommendations != nil || ev.PredictiveIndicators != nil {
			t.Errorf("a crash's %s carries maintenance objects: %v %v", ev.EventType, ev.Recommendations, ev.PredictiveIndicators)
		}
	}

	// a breakdown is a maintenance matter, with its next actions as
	// recommendations and no prediction, whatever its status
	bd, err := svc.Report(t.Context(), sc, "key_1", emergency.ReportBody{EventType: "breakdown", SeverityLevel: "moderate", VehicleID: "veh_2",
		Location: &emergency.ReportedLocation{Latitude: &lat, Longitude: &lon}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetStatus(t.Context(), sc, bd.IncidentID, "key_1", emergency.StatusBody{Status: "resolved", ResolutionType: "towed"}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		typ, recs string
	}{{"incident_reported", fmt.Sprint([]string{"contact the driver", "confirm the location", "notify the fleet supervisor", "arrange vehicle recovery if needed", "file the incident report"})},
		{"incident_resolved", fmt.Sprint([]string{"review the incident report"})}} {
		ev := b.evs[2+i]
		if ev.EventType != want.typ || ev.Category != "maintenance_events" || ev.EventData["incident_type"] != "breakdown" {
			t.Errorf("breakdown event %s in %s (%v), want %s in maintenance_events", ev.EventType, ev.Category, ev.EventData, want.typ)
		}
		if got := fmt.Sprint(ev.Recommendations); got != want.recs {
			t.Errorf("%s recommendations %s, want the incident's next actions %s", ev.EventType, got, want.recs)
		}
		if pi := ev.PredictiveIndicators; len(pi) != 2 || pi["failure_probability"] != nil || pi["estimated_time_to_failure"] != nil {
			t.Errorf("%s predictive_indicators %v, want failure_probability and estimated_time_to_failure null", ev.EventType, pi)
		}
		if ev.EmergencyResponse["emergency_contacts_notified"] != 0 || ev.Escalation["level"] != 0 {
			t.Errorf("%s emergency_response %v escalation %v", ev.EventType, ev.EmergencyResponse, ev.Escalation)
		}
	}
}

// TestAlertEventsCarryResponseAndEscalation: an alert's events carry
// emergency_response (nothing dispatched, the emergency contacts reached
// once counted: null on the emergency_alert published while the alert is
// delivered) and escalation: level 0 with the first level's due time,
// then, on the level's emergency_action, level 1 with the next level's
// due time and the supervisor it reached; nothing scheduled once the
// alert is cancelled.
func TestAlertEventsCarryResponseAndEscalation(t *testing.T) {
	st := testdb.SQLite(t)
	addTrip(t, st, "trp_1", "veh_1", "drv_1", 40.0, -83.0)
	// a creation time with milliseconds: next_escalation keeps them, as
	// escalation_status.next_escalation_at does
	t0 := time.Now().UTC().Truncate(time.Second).Add(123 * time.Millisecond)
	clock := t0
	b := &bus{}
	dir := directory{roles: map[string][]contacts.Contact{"supervisor": {{ContactID: "ctc_s1", Name: "S1", Channels: contacts.Channels{SMS: "+15550000003"}}}}}
	a := emergency.NewAlerts(emergency.AlertsConfig{Claims: emergency.Claims{Now: func() time.Time { return clock }}}, st, st, dir, accepting{}, b)
	sc := store.Scope{Org: "org-a", Env: "test"}
	body := actionBody(40.0, -83.0)
	body.AcknowledgmentRequired = true
	body.EscalationPolicy = &emergency.EscalationPolicy{Enabled: new(true), EscalationLevels: []emergency.EscalationLevel{
		{DelayMinutes: 1, Action: "notify_supervisors"}, {DelayMinutes: 10, Action: "notify_dispatchers"}}}
	al, err := a.Create(t.Context(), sc, body)
	if err != nil {
		t.Fatal(err)
	}
	clock = t0.Add(2 * time.Minute)
	if _, err := a.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Cancel(t.Context(), sc, al.AlertID); err != nil {
		t.Fatal(err)
	}
	stamp := func(d time.Duration) string { return t0.Add(d).Format("2006-01-02T15:04:05.000Z") }
	want := []struct {
		typ, contacts, level, next, escalated string
	}{
		{"emergency_alert", "<nil>", "0", stamp(time.Minute), "[]"},
		{"emergency_action", "0", "1", stamp(10 * time.Minute), "[ctc_s1]"},
		{"emergency_alert_cancelled", "0", "1", "<nil>", "[ctc_s1]"},
	}
	if len(b.evs) != len(want) {
		t.Fatalf("%d events published, want %d", len(b.evs), len(want))
	}
	for i, w := range want {
		ev := b.evs[i]
		er, es := ev.EmergencyResponse, ev.Escalation
		if ev.EventType != w.typ || er["response_initiated"] != false || er["authorities_contacted"] != false || er["estimated_response_time"] != nil ||
			fmt.Sprint(er["emergency_contacts_notified"]) != w.contacts || len(er) != 4 {
			t.Errorf("%s emergency_response %v, want emergency_contacts_notified %s, nothing initiated, contacted or timed", ev.EventType, er, w.contacts)
		}
		if fmt.Sprint(es["level"]) != w.level || fmt.Sprint(es["next_escalation"]) != w.next || fmt.Sprint(es["escalation_contacts"]) != w.escalated {
			t.Errorf("%s escalation %v, want level %s, next_escalation %s, escalation_contacts %s", ev.EventType, es, w.level, w.next, w.escalated)
		}
	}
}

// fleets answers the fleet of each vehicle it names.
type fleets map[string]string

func (f fleets) Fleet(_ context.Context, _, _, vehicleID string) (string, error) {
	return f[vehicleID], nil
}

// TestIncidentEventsCarryTheFleet: an incident's events carry its
// fleet_id, the report's or else its vehicle's, so the streams of that
// fleet receive them.
func TestIncidentEventsCarryTheFleet(t *testing.T) {
	st := testdb.SQLite(t)
	b := &bus{}
	svc := emergency.NewIncidents(st, st, nil, nil, b, nil, slog.New(slog.DiscardHandler)).WithFleets(fleets{"veh_n": "north"})
	sc := store.Scope{Org: "org-a", Env: "test"}
	lat, lon := 40.0, -83.0
	for _, c := range []struct {
		vehicle, fleet, want string
	}{{"veh_n", "", "north"}, {"veh_x", "south", "south"}, {"veh_x", "", ""}} {
		in, err := svc.Report(t.Context(), sc, "key_1", emergency.ReportBody{EventType: "crash", SeverityLevel: "high", VehicleID: c.vehicle, FleetID: c.fleet,
			Location: &emergency.ReportedLocation{Latitude: &lat, Longitude: &lon}})
		if err != nil {
			t.Fatal(err)
		}
		ev := b.evs[len(b.evs)-1]
		if in.FleetID != c.want || ev.Source.FleetID != c.want {
			t.Errorf("%s reported with fleet %q: incident fleet %q, event fleet %q; want %q", c.vehicle, c.fleet, in.FleetID, ev.Source.FleetID, c.want)
		}
	}
}
