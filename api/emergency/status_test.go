package emergency_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// TestAlertTimingsAndNextCheck: an alert whose only channel is delayed
// reports no delivery timings until its first delivery went out, then the
// time from its creation; next_status_check follows the schedule (the
// escalation level, then the delayed delivery, then the expiration) and
// is null once the alert is cancelled.
func TestAlertTimingsAndNextCheck(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550006001"}})
	b := timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "delay_minutes": 10})
	b["acknowledgment_required"] = true
	b["escalation_policy"] = map[string]any{"enabled": true, "escalation_levels": []map[string]any{{"delay_minutes": 5, "action": "notify_supervisors"}}}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	m := al["alert_metrics"].(map[string]any)
	if m["creation_to_first_delivery_ms"] != nil || m["average_delivery_time_ms"] != nil || m["timed_deliveries"] != 0.0 {
		t.Errorf("metrics before any delivery %v", m)
	}
	if al["next_status_check"] != rfc(t0.Add(5*time.Minute)) {
		t.Errorf("next_status_check at creation %v, want the escalation level at +5 min", al["next_status_check"])
	}

	clk.set(t0.Add(5 * time.Minute))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	if al["next_status_check"] != rfc(t0.Add(10*time.Minute)) {
		t.Errorf("next_status_check after the level %v, want the delayed sms at +10 min", al["next_status_check"])
	}

	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	m = al["alert_metrics"].(map[string]any)
	first, _ := m["creation_to_first_delivery_ms"].(float64)
	if first < float64(10*time.Minute/time.Millisecond) || m["average_delivery_time_ms"] == nil || m["timed_deliveries"] != 1.0 {
		t.Errorf("metrics after the delayed sms went out %v: the first delivery came 10 minutes after the creation", m)
	}
	if al["next_status_check"] != rfc(t0.Add(time.Hour)) {
		t.Errorf("next_status_check with only the expiration to come %v", al["next_status_check"])
	}

	code, al = f.do("DELETE", "/v1/emergency/alerts/"+id, nil)
	if code != 200 || al["next_status_check"] != nil {
		t.Errorf("cancelled: %d next_status_check %v, want null", code, al["next_status_check"])
	}
}

// TestRelatedIncidents: an alert names the incidents active at its
// creation in its area, and those of the vehicles and drivers its
// audience names wherever they are; not a resolved one, nor one outside
// the area of someone else.
func TestRelatedIncidents(t *testing.T) {
	f := start(t, testdb.SQLite)
	report := func(lat, lon float64, vehicle, driver string) string {
		t.Helper()
		b := map[string]any{"event_type": "breakdown", "severity_level": "low", "location": map[string]any{"latitude": lat, "longitude": lon}}
		if vehicle != "" {
			b["vehicle_id"] = vehicle
		}
		if driver != "" {
			b["driver_id"] = driver
		}
		code, out := f.do("POST", "/v1/emergency/incidents", b)
		if code != 201 {
			t.Fatalf("incident: %d %v", code, out)
		}
		return out["incident_id"].(string)
	}
	inArea := report(40.01, -83.01, "veh_1", "")
	resolved := report(40.02, -83.0, "veh_2", "")
	farVehicle := report(45.0, -90.0, "veh_named", "")
	farDriver := report(44.0, -91.0, "", "drv_named")
	report(46.0, -92.0, "veh_other", "drv_other")
	if code, out := f.do("PUT", "/v1/emergency/incidents/"+resolved+"/status", map[string]any{"status": "resolved", "resolution_type": "towed"}); code != 200 {
		t.Fatalf("resolve: %d %v", code, out)
	}

	b := alertBody([]string{"dispatchers"}, nil, "in_app_alert")
	b["target_audience"].(map[string]any)["specific_vehicles"] = []string{"veh_named"}
	b["target_audience"].(map[string]any)["specific_drivers"] = []string{"drv_named"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	var got []string
	for _, x := range al["related_incidents"].([]any) {
		got = append(got, x.(string))
	}
	slices.Sort(got)
	if want := sorted(inArea, farVehicle, farDriver); !slices.Equal(got, want) {
		t.Errorf("related_incidents %v, want %v", got, want)
	}
	_, again := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	if n := len(again["related_incidents"].([]any)); n != 3 {
		t.Errorf("read back: %d related incidents, want 3", n)
	}

	quiet := alertBody([]string{"dispatchers"}, nil, "in_app_alert")
	quiet["affected_area"] = map[string]any{"type": "radius", "center": map[string]any{"latitude": 10.0, "longitude": 10.0}, "radius_km": 5}
	_, al = f.do("POST", "/v1/emergency/alerts", quiet)
	if r, ok := al["related_incidents"].([]any); !ok || len(r) != 0 {
		t.Errorf("an area without incidents: related_incidents %v, want []", al["related_incidents"])
	}
}

// TestVoiceCallOutcomeUnknown: voice calls the gateway accepted are
// counted as initiated; whether they were answered or reached voicemail
// is not known to the hub, so both are null, also when the alert is read.
func TestVoiceCallOutcomeUnknown(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "V1", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+15550008001"}})
	f.contact(map[string]any{"name": "V2", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+15550008002"}})
	code, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "voice_call"))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	_, read := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	for name, a := range map[string]map[string]any{"created": al, "read": read} {
		v := a["delivery_status"].(map[string]any)["delivery_breakdown"].(map[string]any)["voice_call"].(map[string]any)
		if v["initiated"] != 2.0 || v["failed"] != 0.0 || v["answered"] != nil || v["voicemail"] != nil {
			t.Errorf("%s: voice_call %v, want 2 initiated, 0 failed, answered and voicemail null", name, v)
		}
		if _, ok := v["answered"]; !ok {
			t.Errorf("%s: voice_call %v has no answered field", name, v)
		}
	}
}

// TestNoAddressNothingSent: a driver without a directory entry has no
// address, so the gateway channels skip them (no_address) at once and in
// a delayed round, nothing is POSTed to the gateway for them and they are
// not counted delivered or scheduled.
func TestNoAddressNothingSent(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	b := timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms"}, map[string]any{"channel": "email", "delay_minutes": 10})
	b["target_audience"] = map[string]any{"specific_drivers": []string{"drv_unlisted"}}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	check := func(when string, al map[string]any) {
		t.Helper()
		for _, ch := range []string{"sms", "email"} {
			if d := delivery(t, al, "drv_unlisted", ch); d["status"] != "skipped" || d["reason"] != "no_address" {
				t.Errorf("%s: %s delivery %v, want skipped for no_address", when, ch, d)
			}
		}
		ds := al["delivery_status"].(map[string]any)
		if ds["successful_deliveries"] != 0.0 || ds["scheduled_deliveries"] != 0.0 || ds["delivery_breakdown"].(map[string]any)["sms"].(map[string]any)["sent"] != 0.0 {
			t.Errorf("%s: delivery_status %v, want nothing sent, delivered or scheduled", when, ds)
		}
		if aa := al["affected_area_analysis"].(map[string]any); aa["specific_drivers_notified"] != 0.0 {
			t.Errorf("%s: affected_area_analysis %v, want nobody reached", when, aa)
		}
	}
	check("at creation", al)
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	check("after the delayed round", al)
	if n := gw.count(); n != 0 {
		t.Errorf("the gateway received %d notifications without an address", n)
	}
}

// TestAlertExpiryToTheMillisecond: an expiration given with microseconds
// and in another zone is stated, in expires_at and next_status_check, in
// UTC to the millisecond as every time the service states, and the alert
// expires at that time.
func TestAlertExpiryToTheMillisecond(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550006101"}})
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	exp := t0.Add(time.Hour + 987654*time.Microsecond)
	b["expiration"] = exp.In(time.FixedZone("", 3600)).Format(time.RFC3339Nano)
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	want := t0.Add(time.Hour + 987*time.Millisecond).Format(time.RFC3339Nano)
	if al["expires_at"] != want || al["next_status_check"] != want {
		t.Errorf("expires_at %v, next_status_check %v, want %s both", al["expires_at"], al["next_status_check"], want)
	}
	clk.set(t0.Add(time.Hour + 987*time.Millisecond))
	if _, got := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil); got["status"] != "expired" {
		t.Errorf("at its stated expiry the alert is %v", got["status"])
	}
}
