package emergency_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// refused checks that a request answered 400 with the code and exactly
// the fields named in error.details.
func refused(t *testing.T, name string, code int, out map[string]any, wantCode string, fields ...string) {
	t.Helper()
	e, _ := out["error"].(map[string]any)
	details, _ := e["details"].(map[string]any)
	if code != 400 || e["code"] != wantCode || !slices.Equal(slices.Sorted(maps.Keys(details)), fields) {
		t.Errorf("%s: %d %v, want 400 %s naming %v", name, code, out, wantCode, fields)
	}
}

// count is how many notifications the gateway received.
func (g *gateway) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.got)
}

// TestMissingCoordinatesRefused: a report or an alert whose place lacks
// its latitude or longitude is refused naming the missing one, is not
// stored and notifies nobody; it is never taken as 0, 0.
func TestMissingCoordinatesRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550007001"}})
	for _, c := range []struct {
		name     string
		location map[string]any
		fields   []string
	}{
		{"an address only", map[string]any{"address": "I-70 mile 100"}, []string{"location.latitude", "location.longitude"}},
		{"empty", map[string]any{}, []string{"location.latitude", "location.longitude"}},
		{"no latitude", map[string]any{"longitude": -83.0}, []string{"location.latitude"}},
		{"negative accuracy", map[string]any{"latitude": 39.9, "longitude": -83.0, "accuracy": -5}, []string{"location.accuracy"}},
	} {
		code, out := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "critical", "location": c.location, "driver_id": "drA"})
		refused(t, "incident at "+c.name, code, out, "validation_failed", c.fields...)
	}
	if _, list := f.do("GET", "/v1/emergency/incidents", nil); len(list["incidents"].([]any)) != 0 {
		t.Errorf("refused reports were stored: %v", list["incidents"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused reports notified the gateway %d times", n)
	}

	for _, c := range []struct {
		name   string
		area   map[string]any
		fields []string
	}{
		{"a centre without longitude", map[string]any{"type": "radius", "center": map[string]any{"latitude": 39.97}, "radius_km": 10},
			[]string{"affected_area.center.longitude"}},
		{"an empty centre", map[string]any{"type": "radius", "center": map[string]any{}, "radius_km": 10},
			[]string{"affected_area.center.latitude", "affected_area.center.longitude"}},
		{"vertices missing a coordinate", map[string]any{"type": "polygon", "polygon": []any{
			map[string]any{"latitude": 1}, map[string]any{"latitude": 2}, map[string]any{"longitude": 3}}},
			[]string{"affected_area.polygon[0].longitude", "affected_area.polygon[1].longitude", "affected_area.polygon[2].latitude"}},
	} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["affected_area"] = c.area
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "alert over "+c.name, code, out, "validation_failed", c.fields...)
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}

	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "critical",
		"location": map[string]any{"latitude": 39.9, "longitude": 0, "accuracy": 0}})
	if loc, _ := in["location"].(map[string]any); code != 201 || loc["latitude"] != 39.9 || loc["longitude"] != 0.0 || loc["accuracy"] != 0.0 {
		t.Errorf("a longitude of 0 given and an accuracy of 0: %d %v", code, in)
	}
}

// TestRefusalsNameTheField: error.details names the field at fault, by
// its own path: the audience list and index, the status change's field
// that is too long; nothing changes.
func TestRefusalsNameTheField(t *testing.T) {
	f := start(t, testdb.SQLite)
	b := alertBody([]string{"dispatchers"}, []string{"martians"}, "in_app_alert")
	code, out := f.do("POST", "/v1/emergency/alerts", b)
	refused(t, "an unknown excluded audience", code, out, "invalid_request", "target_audience.exclude[0]")

	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	id := in["incident_id"].(string)
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"status": "resolved", "resolution_type": long(101)}, "resolution_type"},
		{map[string]any{"status": "resolved", "updated_by": long(201)}, "updated_by"},
		{map[string]any{"status": "resolved", "notes": long(2001)}, "notes"},
		{map[string]any{"status": "resolved", "updated_by": " \t"}, "updated_by"},
		{map[string]any{"status": "resolved", "resolution_type": "  "}, "resolution_type"},
		{map[string]any{"status": "escalated", "resolution_type": "false_positive"}, "resolution_type"},
	} {
		code, out := f.do("PUT", "/v1/emergency/incidents/"+id+"/status", c.body)
		refused(t, fmt.Sprintf("%v", c.body), code, out, "validation_failed", c.field)
	}
	if _, got := f.do("GET", "/v1/emergency/incidents/"+id, nil); got["status"] != "active" || len(got["status_updates"].([]any)) != 1 {
		t.Errorf("refused changes changed the incident: %v %v", got["status"], got["status_updates"])
	}
	// a move with no resolution records none, not an empty one
	code, esc := f.do("PUT", "/v1/emergency/incidents/"+id+"/status", map[string]any{"status": "escalated", "updated_by": "ops"})
	if code != 200 {
		t.Fatalf("escalate: %d %v", code, esc)
	}
	tl := esc["timeline"].([]any)
	if data := tl[len(tl)-1].(map[string]any)["data"].(map[string]any); fmt.Sprint(data) != "map[updated_by:ops]" {
		t.Errorf("escalation's timeline data %v, want updated_by alone", data)
	}
	code, out = f.do("PUT", "/v1/emergency/incidents/"+id+"/status", map[string]any{"status": "resolved", "resolution_type": long(100), "updated_by": long(200), "notes": long(2000)})
	if code != 200 || out["status"] != "resolved" || len(out["status_updates"].([]any)) != 3 {
		t.Errorf("fields at their longest (in characters): %d %v, want 200 resolved after two changes", code, out["status"])
	}
}

// TestAlertToNobodyRefused: a target audience that can name nobody (no
// included audience left once the excluded ones are taken out, no
// specific vehicle or driver) is refused naming target_audience and
// sends nothing; one naming a specific driver only is an alert.
func TestAlertToNobodyRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550009001"}})
	for name, ta := range map[string]map[string]any{
		"empty":             {},
		"all excluded":      {"include": []string{"dispatchers"}, "exclude": []string{"dispatchers"}},
		"empty lists given": {"include": []string{}, "specific_vehicles": []string{}, "specific_drivers": []string{}},
	} {
		b := alertBody(nil, nil, "sms")
		b["target_audience"] = ta
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "audience "+name, code, out, "validation_failed", "target_audience")
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	b := alertBody(nil, nil, "in_app_alert")
	b["target_audience"] = map[string]any{"specific_drivers": []string{"drv_named"}}
	if code, al := f.do("POST", "/v1/emergency/alerts", b); code != 201 || al["delivery_status"].(map[string]any)["total_recipients"] != 1.0 {
		t.Errorf("an alert to one named driver: %d %v", code, al)
	}
}

// TestUnknownEnumValueIsInvalidRequest: a body value outside a field's
// fixed set (an incident's event_type, a status change's status) answers
// invalid_request naming the field, the message listing the allowed
// values; with another problem beside it the request is validation_failed
// naming both, and a missing one is validation_failed (is required).
// Nothing is stored or changed.
func TestUnknownEnumValueIsInvalidRequest(t *testing.T) {
	f := start(t, testdb.SQLite)
	report := func(eventType string, latitude float64) map[string]any {
		return map[string]any{"event_type": eventType, "severity_level": "high",
			"location": map[string]any{"latitude": latitude, "longitude": -83.0}}
	}
	code, out := f.do("POST", "/v1/emergency/incidents", report("fire", 40))
	refused(t, "an unknown event_type", code, out, "invalid_request", "event_type")
	if msg, _ := out["error"].(map[string]any)["message"].(string); msg != "event_type: must be one of crash, breakdown, medical_emergency, security_incident" {
		t.Errorf("message %q does not list the event types", msg)
	}
	code, out = f.do("POST", "/v1/emergency/incidents", report("fire", 91))
	refused(t, "an unknown event_type and a latitude out of range", code, out, "validation_failed", "event_type", "location.latitude")
	code, out = f.do("POST", "/v1/emergency/incidents", report("", 40))
	refused(t, "no event_type", code, out, "validation_failed", "event_type")
	if d, _ := out["error"].(map[string]any)["details"].(map[string]any); d["event_type"] != "is required" {
		t.Errorf("no event_type: %v, want is required", d)
	}
	if _, list := f.do("GET", "/v1/emergency/incidents", nil); len(list["incidents"].([]any)) != 0 {
		t.Errorf("refused reports were stored: %v", list["incidents"])
	}

	code, in := f.do("POST", "/v1/emergency/incidents", report("crash", 40))
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	id := in["incident_id"].(string)
	code, out = f.do("PUT", "/v1/emergency/incidents/"+id+"/status", map[string]any{"status": "bogus"})
	refused(t, "an unknown status", code, out, "invalid_request", "status")
	if _, got := f.do("GET", "/v1/emergency/incidents/"+id, nil); got["status"] != "active" {
		t.Errorf("a refused status change changed the incident: %v", got["status"])
	}
}

// TestAreaFieldsOfAnotherTypeRefused: an affected area field its type
// does not take (a city or a buffer on a radius, a polygon on a state) is
// refused naming it, never taken as honoured; an action listed twice is
// refused, never carried out twice. Nothing is sent.
func TestAreaFieldsOfAnotherTypeRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550009101"}})
	centre := map[string]any{"latitude": 40.0, "longitude": -83.0}
	tri := []any{centre, map[string]any{"latitude": 40.1, "longitude": -83.0}, map[string]any{"latitude": 40.1, "longitude": -83.1}}
	for _, c := range []struct {
		name   string
		area   map[string]any
		fields []string
	}{
		{"a radius with a city and a buffer", map[string]any{"type": "radius", "center": centre, "radius_km": 5, "city": "Columbus", "buffer_km": 50},
			[]string{"affected_area.buffer_km", "affected_area.city"}},
		{"a radius with a polygon", map[string]any{"type": "radius", "center": centre, "radius_km": 5, "polygon": tri}, []string{"affected_area.polygon"}},
		{"a polygon with a centre and radius", map[string]any{"type": "polygon", "polygon": tri, "center": centre, "radius_km": 5},
			[]string{"affected_area.center", "affected_area.radius_km"}},
		{"a state with a route", map[string]any{"type": "state", "state": "OH", "route_id": "opt_1"}, []string{"affected_area.route_id"}},
		{"a city in a state that is no code", map[string]any{"type": "city", "city": "Columbus", "state": "Ohio"}, []string{"affected_area.state"}},
	} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["affected_area"] = c.area
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "alert over "+c.name, code, out, "validation_failed", c.fields...)
	}
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	b["automated_actions"] = []string{"play_emergency_sound", "show_safe_route", "play_emergency_sound"}
	code, out := f.do("POST", "/v1/emergency/alerts", b)
	refused(t, "an action listed twice", code, out, "validation_failed", "automated_actions[2]")
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	b = alertBody([]string{"dispatchers"}, nil, "sms")
	b["affected_area"] = map[string]any{"type": "city", "city": "Columbus", "state": "OH", "buffer_km": 3}
	if code, out := f.do("POST", "/v1/emergency/alerts", b); code != 201 {
		t.Errorf("a city in a state with a buffer: %d %v", code, out)
	}
}

// TestNotifyEmergencyContactsWithNobodyToNotify: the action reports
// skipped when the audience holds no emergency contact (no driver in the
// area has one), not failed: nothing was tried; failed is for contacts
// none of whom was reached.
func TestNotifyEmergencyContactsWithNobodyToNotify(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), refusingGateway{refuse: map[string]bool{"+15550009202": true}}, emergency.AlertsConfig{}, nil)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550009201"}})
	action := func(al map[string]any) map[string]any {
		for _, a := range al["automated_actions_executed"].([]any) {
			if a := a.(map[string]any); a["action"] == "notify_emergency_contacts" {
				return a
			}
		}
		return nil
	}
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	b["automated_actions"] = []string{"notify_emergency_contacts"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if a := action(al); code != 201 || a["status"] != "skipped" || a["contacts_notified"] != 0.0 {
		t.Errorf("no driver in the area: %d %v, want skipped with 0 contacts notified", code, a)
	}
	f.trip("trp_1", "veh_1", "drv_1", 40.01, -83.0)
	f.contact(map[string]any{"name": "Em", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550009202"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	code, al = f.do("POST", "/v1/emergency/alerts", b)
	if a := action(al); code != 201 || a["status"] != "failed" || a["contacts_notified"] != 0.0 {
		t.Errorf("the one emergency contact's gateway refuses: %d %v, want failed with 0 contacts notified", code, a)
	}
}

// TestAirbagDeploymentAsReported: a crash's airbag_deployment is what
// the report said, null when it said nothing (never false); the risk is
// high with airbags deployed and unknown with nothing known. Sent with a
// breakdown it is refused naming it: nothing would keep it.
func TestAirbagDeploymentAsReported(t *testing.T) {
	f := start(t, testdb.SQLite)
	report := func(eventType string, airbags any) (int, map[string]any) {
		b := map[string]any{"event_type": eventType, "severity_level": "high", "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		if airbags != nil {
			b["airbag_deployment"] = airbags
		}
		return f.do("POST", "/v1/emergency/incidents", b)
	}
	for _, c := range []struct {
		airbags   any
		want      any
		riskLevel string
	}{{nil, nil, "unknown"}, {true, true, "high"}, {false, false, "unknown"}} {
		code, in := report("crash", c.airbags)
		ca, _ := in["crash_analysis"].(map[string]any)
		if v, ok := ca["airbag_deployment"]; code != 201 || !ok || v != c.want || ca["occupant_risk_level"] != c.riskLevel {
			t.Errorf("a crash reported with airbag_deployment %v: %d %v, want %v and risk %s", c.airbags, code, ca, c.want, c.riskLevel)
		}
	}
	code, out := report("breakdown", true)
	refused(t, "a breakdown with airbags", code, out, "validation_failed", "airbag_deployment")
}

// TestIncidentTripIsChecked: a report's trip_id names a trip of the
// organization (another is refused naming trip_id, nothing stored, nobody
// notified); the vehicle and driver left out are the trip's, so the
// driver's emergency contacts are reached, and ones the trip does not
// have are refused by name.
func TestIncidentTripIsChecked(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.trip("trp_1", "veh_1", "drv_1", 40.0, -83.0)
	ec := f.contact(map[string]any{"name": "Mom", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550009301"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	report := func(extra map[string]any) (int, map[string]any) {
		b := map[string]any{"event_type": "crash", "severity_level": "high", "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		maps.Copy(b, extra)
		return f.do("POST", "/v1/emergency/incidents", b)
	}
	code, out := report(map[string]any{"trip_id": "trp_nope"})
	refused(t, "an unknown trip", code, out, "validation_failed", "trip_id")
	code, out = report(map[string]any{"trip_id": "trp_1", "driver_id": "drv_2", "vehicle_id": "veh_2"})
	refused(t, "another vehicle and driver than the trip's", code, out, "validation_failed", "driver_id", "vehicle_id")
	if _, list := f.do("GET", "/v1/emergency/incidents", nil); len(list["incidents"].([]any)) != 0 || f.gw.count() != 0 {
		t.Errorf("refused reports were stored or notified: %v, %d notifications", list["incidents"], f.gw.count())
	}
	code, in := report(map[string]any{"trip_id": "trp_1"})
	if code != 201 || in["vehicle_id"] != "veh_1" || in["driver_id"] != "drv_1" {
		t.Fatalf("a report naming its trip only: %d %v", code, in)
	}
	if sent := f.gw.sent(in["incident_id"].(string)); !slices.Contains(sent, "sms "+ec+" +15550009301") {
		t.Errorf("the trip's driver's emergency contact was not notified: %v", sent)
	}
	if code, in := report(map[string]any{"trip_id": "trp_1", "vehicle_id": "veh_1", "driver_id": "drv_1"}); code != 201 {
		t.Errorf("a report naming its trip's vehicle and driver: %d %v", code, in)
	}
}

// TestEscalationLevelsRefused: an escalation level whose delay could not
// be kept (beyond a day, whose due time would overflow into the past and
// escalate at once; at or after the expiration; not after the level
// before it, which would be sent first and leave the other unsent) is
// refused naming it, and no alert is stored or sent.
func TestEscalationLevelsRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550007001"}})
	level := func(delay int, action string) map[string]any {
		return map[string]any{"delay_minutes": delay, "action": action}
	}
	for _, c := range []struct {
		name   string
		levels []map[string]any
		fields []string
	}{
		{"a delay that overflows", []map[string]any{level(200000000, "notify_supervisors")}, []string{"escalation_policy.escalation_levels[0].delay_minutes"}},
		{"a delay past the expiration", []map[string]any{level(15, "notify_supervisors"), level(60, "notify_dispatchers")},
			[]string{"escalation_policy.escalation_levels[1].delay_minutes"}},
		{"levels out of order", []map[string]any{level(30, "notify_supervisors"), level(15, "notify_emergency_management")},
			[]string{"escalation_policy.escalation_levels[1].delay_minutes"}},
	} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["expiration"] = time.Now().Add(time.Hour - time.Minute).UTC().Format(time.RFC3339)
		b["acknowledgment_required"] = true
		b["escalation_policy"] = map[string]any{"enabled": true, "escalation_levels": c.levels}
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "alert with "+c.name, code, out, "validation_failed", c.fields...)
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
}

// TestIncidentAndAlertIDsRefused: a vehicle, driver or fleet id no trip
// or vehicle profile could carry (over 200 characters, or with a control
// character) is refused naming it, in a report and in an alert's
// target audience; nothing is stored or sent. 200 characters are taken.
func TestIncidentAndAlertIDsRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550007001"}})
	long, max := strings.Repeat("d", 201), strings.Repeat("d", 200)
	report := func(ids map[string]any) (int, map[string]any) {
		b := map[string]any{"event_type": "breakdown", "severity_level": "low", "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		for k, v := range ids {
			b[k] = v
		}
		return f.do("POST", "/v1/emergency/incidents", b)
	}
	code, out := report(map[string]any{"vehicle_id": "veh\u0007", "driver_id": long, "fleet_id": long})
	refused(t, "report", code, out, "validation_failed", "driver_id", "fleet_id", "vehicle_id")
	b := alertBody(nil, nil, "sms")
	b["target_audience"] = map[string]any{"specific_vehicles": []string{"veh\n1"}, "specific_drivers": []string{max, long}}
	code, out = f.do("POST", "/v1/emergency/alerts", b)
	refused(t, "alert", code, out, "validation_failed", "target_audience.specific_drivers[1]", "target_audience.specific_vehicles[0]")
	if _, list := f.do("GET", "/v1/emergency/incidents", nil); len(list["incidents"].([]any)) != 0 {
		t.Errorf("refused reports were stored: %v", list["incidents"])
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused requests notified the gateway %d times", n)
	}
	if code, out := report(map[string]any{"vehicle_id": max, "driver_id": max, "fleet_id": max}); code != 201 {
		t.Errorf("ids of 200 characters: %d %v", code, out)
	}
}

// TestInvolvedPartyOfAVehicleAlone: a report naming a vehicle and no
// driver lists the vehicle as the involved party, not a driver nobody
// named; one naming a driver lists the driver.
func TestInvolvedPartyOfAVehicleAlone(t *testing.T) {
	f := start(t, testdb.SQLite)
	for _, c := range []struct {
		ids  map[string]any
		want string
	}{
		{map[string]any{"vehicle_id": "veh_1"}, "map[contact_info:map[emergency_contact:<nil> name:<nil> phone:<nil>] device_id:veh_1 driver_id:<nil> status:unknown type:vehicle]"},
		{map[string]any{"vehicle_id": "veh_1", "driver_id": "drv_1"}, "map[contact_info:map[emergency_contact:<nil> name:<nil> phone:<nil>] device_id:veh_1 driver_id:drv_1 status:unknown type:driver]"},
	} {
		b := map[string]any{"event_type": "breakdown", "severity_level": "low", "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		for k, v := range c.ids {
			b[k] = v
		}
		code, in := f.do("POST", "/v1/emergency/incidents", b)
		if code != 201 {
			t.Fatalf("incident: %d %v", code, in)
		}
		if got := fmt.Sprint(in["involved_parties"].([]any)[0]); got != c.want {
			t.Errorf("%v: involved party %s, want %s", c.ids, got, c.want)
		}
	}
}

// TestAreaPlaceNamesRefused: a city or a state an alert's area cannot be
// drawn from is refused naming it, stored nowhere and sent to nobody. An
// area is approximated over the whole organization only when the data
// lacks a real place; a blank city, a city past 200 characters or with a
// control character, and a state that is no USPS code (digits, ZZ) are
// mistakes of the request, not places the data lacks.
func TestAreaPlaceNamesRefused(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550009201"}})
	for _, c := range []struct {
		name  string
		area  map[string]any
		field string
	}{
		{"an empty city", map[string]any{"type": "city", "city": ""}, "affected_area.city"},
		{"a blank city", map[string]any{"type": "city", "city": "   "}, "affected_area.city"},
		{"a city past 200 characters", map[string]any{"type": "city", "city": strings.Repeat("a", 201)}, "affected_area.city"},
		{"a city with a control character", map[string]any{"type": "city", "city": "Colum\nbus"}, "affected_area.city"},
		{"a city in a state of digits", map[string]any{"type": "city", "city": "Columbus", "state": "12"}, "affected_area.state"},
		{"a state of digits", map[string]any{"type": "state", "state": "12"}, "affected_area.state"},
		{"a state that is no state", map[string]any{"type": "state", "state": "ZZ"}, "affected_area.state"},
	} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["affected_area"] = c.area
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "alert over "+c.name, code, out, "validation_failed", c.field)
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	for _, area := range []map[string]any{
		{"type": "state", "state": "DC"},
		{"type": "state", "state": "PR"},
		{"type": "city", "city": strings.Repeat("a", 200), "state": "OH"},
	} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["affected_area"] = area
		if code, out := f.do("POST", "/v1/emergency/alerts", b); code != 201 {
			t.Errorf("%v: %d %v", area, code, out)
		}
	}
}

// TestEscalationPolicyNeedsEnabled: an escalation policy without enabled
// (left out or null) is refused naming escalation_policy.enabled: taken
// as off, the levels sent would be accepted and never run; one enabled
// without a level is refused naming escalation_policy.escalation_levels:
// it would be stated enabled and never escalate. Nothing is stored or
// sent; with enabled the same levels escalate.
func TestEscalationPolicyNeedsEnabled(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550009301"}})
	levels := []map[string]any{{"delay_minutes": 5, "action": "notify_supervisors"}}
	for _, p := range []map[string]any{{"escalation_levels": levels}, {"enabled": nil, "escalation_levels": levels}, {}} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["acknowledgment_required"] = true
		b["escalation_policy"] = p
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, fmt.Sprintf("escalation policy %v", p), code, out, "validation_failed", "escalation_policy.enabled")
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	// enabled without a level would be stated enabled and never escalate
	for _, p := range []map[string]any{{"enabled": true}, {"enabled": true, "escalation_levels": []any{}}} {
		b := alertBody([]string{"dispatchers"}, nil, "sms")
		b["acknowledgment_required"] = true
		b["escalation_policy"] = p
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, fmt.Sprintf("escalation policy %v", p), code, out, "validation_failed", "escalation_policy.escalation_levels")
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	b["acknowledgment_required"] = true
	b["escalation_policy"] = map[string]any{"enabled": true, "escalation_levels": levels}
	code, out := f.do("POST", "/v1/emergency/alerts", b)
	if es, _ := out["escalation_status"].(map[string]any); code != 201 || es["enabled"] != true || es["next_escalation_at"] == nil {
		t.Errorf("enabled with a level: %d %v", code, out["escalation_status"])
	}
}

// TestSpecificAudienceListsCapped: target_audience.specific_vehicles and
// specific_drivers hold at most 1,000 ids each; a longer list is refused
// naming the list, before any id of it is looked up, and nothing is
// stored or sent. 1,000 is accepted.
func TestSpecificAudienceListsCapped(t *testing.T) {
	f := start(t, testdb.SQLite)
	ids := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s-%d", prefix, i)
		}
		return out
	}
	for _, field := range []string{"specific_vehicles", "specific_drivers"} {
		b := alertBody(nil, nil, "in_app_alert")
		b["target_audience"] = map[string]any{field: ids("x", 1001)}
		began := time.Now()
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		refused(t, "1,001 "+field, code, out, "validation_failed", "target_audience."+field)
		e, _ := out["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		if d := details["target_audience."+field]; d != "at most 1000 ids" {
			t.Errorf("1,001 %s: %q, want at most 1000 ids", field, d)
		}
		if el := time.Since(began); el > 2*time.Second {
			t.Errorf("1,001 %s: refused after %v", field, el)
		}
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := f.gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	b := alertBody(nil, nil, "in_app_alert")
	b["target_audience"] = map[string]any{"specific_drivers": ids("d", 1000)}
	if code, out := f.do("POST", "/v1/emergency/alerts", b); code != 201 {
		t.Errorf("1,000 specific drivers: %d %v", code, out["error"])
	}
}
