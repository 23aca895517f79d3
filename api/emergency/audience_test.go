package emergency_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	apicontacts "github.com/fleethub/fleethub/api/contacts"
	apiemergency "github.com/fleethub/fleethub/api/emergency"
	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

type auth map[string]*api.Principal

func (a auth) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if p := a[key]; p != nil {
		return p, nil
	}
	return nil, api.Errf("api_key_not_found", "unknown key")
}

var key = func() string {
	k, err := apikey.Generate("test")
	if err != nil {
		panic(err)
	}
	return k
}()

// gateway records every notification it receives.
type gateway struct {
	mu  sync.Mutex
	got []emergency.Notification
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var n emergency.Notification
	if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
		w.WriteHeader(400)
		return
	}
	g.mu.Lock()
	g.got = append(g.got, n)
	g.mu.Unlock()
	w.WriteHeader(202)
}

// sent answers "channel recipient to" of every notification of one alert
// or incident, sorted.
func (g *gateway) sent(id string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, n := range g.got {
		if n.AlertID == id || n.IncidentID == id {
			out = append(out, n.Channel+" "+n.Recipient+" "+n.To)
		}
	}
	sort.Strings(out)
	return out
}

type fixture struct {
	t      *testing.T
	url    string
	st     store.Backend
	gw     *gateway
	alerts *emergency.Alerts
	outbox *emergency.Outbox
	// shutdown stops the node's API server (once; the test's cleanup
	// calls it too).
	shutdown func()
}

func start(t *testing.T, open testdb.Opener) *fixture {
	t.Helper()
	return startWith(t, open(t), &gateway{}, emergency.AlertsConfig{}, nil)
}

// places, when set, is the address data of the nodes startWith makes.
var places emergency.Places

// startWith serves a node over st whose notifications go to gw; through
// a queue when ocfg is not nil.
func startWith(t *testing.T, st store.Backend, gw http.Handler, cfg emergency.AlertsConfig, ocfg *emergency.OutboxConfig) *fixture {
	t.Helper()
	return startWithBus(t, st, gw, cfg, ocfg, nil)
}

// startWithBus is startWith whose alerts publish their events on pub (nil:
// no bus, as startWith).
func startWithBus(t *testing.T, st store.Backend, gw http.Handler, cfg emergency.AlertsConfig, ocfg *emergency.OutboxConfig, pub emergency.Publisher) *fixture {
	t.Helper()
	noGateway := gw == nil // as a server without --notify-url
	if noGateway {
		gw = http.NotFoundHandler()
	}
	gws := httptest.NewServer(gw)
	t.Cleanup(gws.Close)
	var notifier emergency.Notifier = &emergency.HTTPNotifier{URL: gws.URL, Client: gws.Client()}
	if noGateway {
		notifier = nil
	}
	var outbox *emergency.Outbox
	if ocfg != nil {
		outbox = emergency.NewOutbox(*ocfg, st, &emergency.HTTPNotifier{URL: gws.URL, Client: gws.Client(), Secrets: st})
		notifier = outbox
	}
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(),
		auth{key: {KeyID: "k1", Org: "org-a", Env: "test", Permissions: []string{"all"}, Rate: 1e6, Burst: 1e6}}, nil)
	dir := contacts.New(st, nil)
	srv.Handle(apicontacts.New(dir).Routes()...)
	links, err := emergency.NewLinks([]byte("share-link-secret-0123456789"), 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle(apiemergency.New(emergency.NewIncidents(st, st, dir, notifier, nil, links, slog.New(slog.DiscardHandler))).Routes()...)
	if cfg.Places == nil {
		cfg.Places = places
	}
	alerts := emergency.NewAlerts(cfg, st, st, dir, notifier, pub)
	srv.Handle(apiemergency.NewAlerts(alerts).Routes()...)
	srv.Handle(apiemergency.NewGateway(st, gws.URL).Routes()...)
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	var once sync.Once
	shutdown := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			<-done
		})
	}
	t.Cleanup(shutdown)
	g, _ := gw.(*gateway)
	return &fixture{t: t, url: "http://" + addr.String(), st: st, gw: g, alerts: alerts, outbox: outbox, shutdown: shutdown}
}

func (f *fixture) do(method, path string, body any) (int, map[string]any) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.url+path, rd)
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		f.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, out
}

func (f *fixture) contact(body map[string]any) string {
	f.t.Helper()
	code, out := f.do("POST", "/v1/contacts", body)
	if code != 201 {
		f.t.Fatalf("contact: %d %v", code, out)
	}
	return out["contact_id"].(string)
}

// trip stores an active trip whose last point is at lat, lon.
func (f *fixture) trip(id, vehicle, driver string, lat, lon float64) {
	f.t.Helper()
	now := time.Now().UTC()
	state, _ := json.Marshal(map[string]any{"last": map[string]float64{"lat": lat, "lon": lon}})
	if err := f.st.CreateTrip(f.t.Context(), store.Trip{ID: id, Org: "org-a", Env: "test", VehicleID: vehicle, DriverID: driver, Status: store.TripActive,
		StartTime: now, StartLocation: &store.Place{Latitude: lat, Longitude: lon}, Metadata: []byte(`{}`), MetadataHistory: []byte(`[]`), State: state,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		f.t.Fatal(err)
	}
}

// people is a directory around an area centred on 40, -83.
type people struct {
	f1, f2, f3, d1, d2, e1, e2, dc, e3, x string
}

func seed(f *fixture) people {
	f.trip("trp_in", "veh_in", "drv_in", 40.01, -83.0)
	f.trip("trp_out", "veh_out", "drv_out", 41.0, -83.0)
	f.trip("trp_both", "veh_both", "drv_both", 40.0, -83.01)
	in := map[string]any{"latitude": 40.02, "longitude": -83.02}
	out := map[string]any{"latitude": 45.0, "longitude": -90.0}
	var p people
	p.f1 = f.contact(map[string]any{"name": "F1", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000001", "email": "f1@example.com"}, "location": in})
	p.f2 = f.contact(map[string]any{"name": "F2", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000002"}, "home_area": in})
	p.f3 = f.contact(map[string]any{"name": "F3", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000003"}, "home_area": in, "location": out})
	p.d1 = f.contact(map[string]any{"name": "D1", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550000004", "email": "d1@example.com"}})
	p.d2 = f.contact(map[string]any{"name": "D2", "roles": []string{"dispatcher", "field_personnel"}, "channels": map[string]any{"sms": "+15550000005"}, "location": in})
	p.e1 = f.contact(map[string]any{"name": "E1", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550000006"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_in"}}})
	p.e2 = f.contact(map[string]any{"name": "E2", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550000007"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_out"}}})
	p.dc = f.contact(map[string]any{"name": "DC", "roles": []string{"driver"}, "channels": map[string]any{"push_token": "tok-dc"},
		"links": map[string]any{"driver_ids": []string{"drv_both"}}})
	p.e3 = f.contact(map[string]any{"name": "E3", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550000008"},
		"links": map[string]any{"emergency_contact_for": []string{p.dc}}})
	p.x = f.contact(map[string]any{"name": "X", "roles": []string{"dispatcher", "emergency_contact"}, "channels": map[string]any{"sms": "+15550000009"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_in"}}})
	return p
}

func alertBody(include, exclude []string, channels ...string) map[string]any {
	var ch []map[string]any
	for _, c := range channels {
		ch = append(ch, map[string]any{"channel": c})
	}
	return map[string]any{"alert_type": "severe_weather_warning", "severity": "high", "title": "Tornado", "message": "Take shelter",
		"affected_area":   map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 10},
		"target_audience": map[string]any{"include": include, "exclude": exclude}, "delivery_channels": ch,
		"expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
}

func recipientIDs(al map[string]any) []string {
	var out []string
	for _, r := range al["recipients"].([]any) {
		out = append(out, r.(map[string]any)["recipient_id"].(string))
	}
	sort.Strings(out)
	return out
}

func sorted(xs ...string) []string {
	xs = slices.Clone(xs)
	sort.Strings(xs)
	return xs
}

func TestAudiences(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		f := start(t, open)
		p := seed(f)
		all := []string{"active_drivers", "field_personnel", "dispatchers", "emergency_contacts"}
		code, al := f.do("POST", "/v1/emergency/alerts", alertBody(all, nil, "sms", "push_notification"))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)
		// drv_both is DC; X is a dispatcher and drv_in's emergency contact,
		// reached once; F3's last location is outside, E2's driver too.
		if got, want := recipientIDs(al), sorted("drv_in", "drv_both", p.f1, p.f2, p.d1, p.d2, p.e1, p.e3, p.x); !slices.Equal(got, want) {
			t.Errorf("recipients %v, want %v", got, want)
		}
		// drv_in has no directory entry, so no address: nothing is sent
		// to them through the gateway.
		want := sorted("push_notification drv_both tok-dc",
			"sms "+p.f1+" +15550000001", "sms "+p.f2+" +15550000002", "sms "+p.d1+" +15550000004", "sms "+p.d2+" +15550000005",
			"sms "+p.e1+" +15550000006", "sms "+p.e3+" +15550000008", "sms "+p.x+" +15550000009")
		if got := f.gw.sent(id); !slices.Equal(got, want) {
			t.Errorf("gateway got\n%v\nwant\n%v", got, want)
		}
		aa := al["affected_area_analysis"].(map[string]any)
		if aa["total_vehicles_in_area"] != 2.0 || aa["active_drivers_notified"] != 1.0 || aa["field_personnel_notified"] != 3.0 || aa["dispatchers_notified"] != 3.0 ||
			aa["emergency_contacts_notified"] != 3.0 || aa["specific_drivers_notified"] != 0.0 || aa["specific_vehicles_notified"] != 0.0 {
			t.Errorf("affected_area_analysis %v", aa)
		}
		for _, r := range al["recipients"].([]any) {
			r := r.(map[string]any)
			if r["recipient_id"] == "drv_in" {
				for _, d := range r["deliveries"].([]any) {
					if d := d.(map[string]any); d["status"] != "skipped" || d["reason"] != "no_address" || d["to"] != nil {
						t.Errorf("drv_in, without a directory entry: delivery %v, want skipped for no_address", d)
					}
				}
				if r["delivered"] != false {
					t.Errorf("drv_in counted as reached: %v", r)
				}
			}
			if r["recipient_id"] == p.f1 {
				ds := r["deliveries"].([]any)
				if len(ds) != 2 || !slices.ContainsFunc(ds, func(d any) bool {
					m := d.(map[string]any)
					return m["channel"] == "push_notification" && m["status"] == "skipped" && m["reason"] == "no_address"
				}) {
					t.Errorf("F1's deliveries %v", ds)
				}
			}
		}

		// Exclude wins: X is a dispatcher but also an emergency contact.
		code, al = f.do("POST", "/v1/emergency/alerts", alertBody([]string{"field_personnel", "dispatchers"}, []string{"emergency_contacts"}, "sms"))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		if got, want := recipientIDs(al), sorted(p.f1, p.f2, p.d1, p.d2); !slices.Equal(got, want) {
			t.Errorf("with emergency contacts excluded: %v, want %v", got, want)
		}
		aa = al["affected_area_analysis"].(map[string]any)
		if aa["active_drivers_notified"] != 0.0 || aa["field_personnel_notified"] != 3.0 || aa["dispatchers_notified"] != 2.0 || aa["emergency_contacts_notified"] != 0.0 {
			t.Errorf("affected_area_analysis %v", aa)
		}

		// Deleting a contact an active alert is notifying keeps the alert's
		// record of them: name, audiences and each channel's outcome.
		if code, out := f.do("DELETE", "/v1/contacts/"+p.f1, nil); code != 200 {
			t.Fatalf("delete: %d %v", code, out)
		}
		code, got := f.do("GET", "/v1/emergency/alerts/"+id, nil)
		if code != 200 || got["status"] != "active" || !slices.Contains(recipientIDs(got), p.f1) {
			t.Fatalf("alert after the delete: %d %v", code, got)
		}
		for _, r := range got["recipients"].([]any) {
			r := r.(map[string]any)
			if r["recipient_id"] != p.f1 {
				continue
			}
			if r["contact_id"] != p.f1 || r["name"] != "F1" || r["recipient_type"] != "field_personnel" || r["delivered"] != true ||
				fmt.Sprint(r["audiences"]) != "[field_personnel]" {
				t.Errorf("F1's record after the delete: %v", r)
			}
			var ds []string
			for _, d := range r["deliveries"].([]any) {
				d := d.(map[string]any)
				ds = append(ds, fmt.Sprintf("%v %v %v %v", d["channel"], d["to"], d["status"], d["reason"]))
			}
			sort.Strings(ds)
			if want := []string{"push_notification <nil> skipped no_address", "sms +15550000001 delivered <nil>"}; !slices.Equal(ds, want) {
				t.Errorf("F1's deliveries after the delete: %v, want %v", ds, want)
			}
		}
		if aa := got["affected_area_analysis"].(map[string]any); aa["field_personnel_notified"] != 3.0 || aa["dispatchers_notified"] != 3.0 {
			t.Errorf("affected_area_analysis after the delete: %v", aa)
		}
	})
}

func TestQuietHours(t *testing.T) {
	f := start(t, testdb.SQLite)
	now := time.Now().UTC()
	quiet := map[string]any{"start": now.Add(-time.Hour).Format("15:04"), "end": now.Add(time.Hour).Format("15:04"), "timezone": "UTC"}
	q := f.contact(map[string]any{"name": "Q", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550000010"}, "quiet_hours": quiet})
	quiet["critical_override"] = false
	never := f.contact(map[string]any{"name": "N", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550000011"}, "quiet_hours": quiet})
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	_, al := f.do("POST", "/v1/emergency/alerts", b)
	if got := f.gw.sent(al["alert_id"].(string)); len(got) != 0 {
		t.Errorf("a high alert in quiet hours reached %v", got)
	}
	b["severity"] = "critical"
	_, al = f.do("POST", "/v1/emergency/alerts", b)
	if got, want := f.gw.sent(al["alert_id"].(string)), []string{"sms " + q + " +15550000010"}; !slices.Equal(got, want) {
		t.Errorf("a critical alert in quiet hours reached %v, want %v (not %s)", got, want, never)
	}
}

// TestIncidentQuietHours: a reported incident sends nothing to a person
// in their quiet hours, nor logs or names them as notified, unless it is
// critical and they keep the override, as for alerts.
func TestIncidentQuietHours(t *testing.T) {
	f := start(t, testdb.SQLite)
	now := time.Now().UTC()
	quiet := map[string]any{"start": now.Add(-time.Hour).Format("15:04"), "end": now.Add(time.Hour).Format("15:04"), "timezone": "UTC"}
	q := f.contact(map[string]any{"name": "Q", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550000010"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_q"}}, "quiet_hours": quiet})
	quiet["critical_override"] = false
	never := f.contact(map[string]any{"name": "N", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550000011"}, "quiet_hours": quiet})
	report := func(severity string) map[string]any {
		t.Helper()
		code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": severity,
			"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "driver_id": "drv_q"})
		if code != 201 {
			t.Fatalf("incident: %d %v", code, in)
		}
		return in
	}
	in := report("high")
	if got := f.gw.sent(in["incident_id"].(string)); len(got) != 0 {
		t.Errorf("a high incident in quiet hours reached %v", got)
	}
	if log := in["communication_log"].([]any); len(log) != 0 {
		t.Errorf("communication_log %v, want nothing: nothing was sent", log)
	}
	if tl := in["timeline"].([]any); len(tl) != 1 {
		t.Errorf("timeline %v, want the report alone: nobody was notified", tl)
	}
	in = report("critical")
	if got, want := f.gw.sent(in["incident_id"].(string)), []string{"sms " + q + " +15550000010"}; !slices.Equal(got, want) {
		t.Errorf("a critical incident in quiet hours reached %v, want %v (not %s)", got, want, never)
	}
}

func TestIncidentNotifiesPeople(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		f := start(t, open)
		p := seed(f)
		code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "high",
			"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_in", "driver_id": "drv_in"})
		if code != 201 {
			t.Fatalf("incident: %d %v", code, in)
		}
		id := in["incident_id"].(string)
		want := sorted("sms "+p.e1+" +15550000006", "sms "+p.x+" +15550000009", "sms "+p.d1+" +15550000004", "email "+p.d1+" d1@example.com",
			"sms "+p.d2+" +15550000005")
		if got := f.gw.sent(id); !slices.Equal(got, want) {
			t.Errorf("gateway got\n%v\nwant\n%v", got, want)
		}
		var entry map[string]any
		for _, e := range in["timeline"].([]any) {
			if e := e.(map[string]any); e["event"] == "emergency_contacts_notified" {
				entry = e
			}
		}
		if entry == nil {
			t.Fatalf("no emergency_contacts_notified on the timeline: %v", in["timeline"])
		}
		data := entry["data"].(map[string]any)
		if len(data["emergency_contacts"].([]any)) != 2 || len(data["dispatchers"].([]any)) != 2 {
			t.Errorf("timeline data %v", data)
		}
		if n := len(in["communication_log"].([]any)); n != len(want) {
			t.Errorf("communication_log has %d entries, want %d", n, len(want))
		}
	})
}

func TestSpecificDriverIsOnePerson(t *testing.T) {
	f := start(t, testdb.SQLite)
	dd := f.contact(map[string]any{"name": "Dana", "roles": []string{"driver", "dispatcher"}, "channels": map[string]any{"sms": "+15550000020"},
		"links": map[string]any{"driver_ids": []string{"drv_idle"}}})
	b := alertBody([]string{"dispatchers"}, nil, "sms")
	b["target_audience"].(map[string]any)["specific_drivers"] = []string{"drv_idle", "drv_other"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if got, want := recipientIDs(al), sorted(dd, "drv_other"); !slices.Equal(got, want) {
		t.Errorf("recipients %v, want %v", got, want)
	}
	// drv_other has no directory entry: no address, nothing sent.
	if got := f.gw.sent(al["alert_id"].(string)); !slices.Equal(got, []string{"sms " + dd + " +15550000020"}) {
		t.Errorf("gateway got %v", got)
	}
	// Dana counts as a dispatcher and as a specific driver; drv_other,
	// reached by no channel, nowhere.
	aa := al["affected_area_analysis"].(map[string]any)
	if aa["dispatchers_notified"] != 1.0 || aa["specific_drivers_notified"] != 1.0 || aa["active_drivers_notified"] != 0.0 {
		t.Errorf("affected_area_analysis %v", aa)
	}
}

// TestAreaAnalysisCounts counts each audience's recipients reached at
// least once: nobody while the gateway refuses the first attempts, each
// audience once the queue's retries went through, never a person without
// an address for the channels.
func TestAreaAnalysisCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &flakyGateway{failures: 1, tries: map[string]int{}}
		f := startWith(t, open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now}, MinBackoff: time.Second})
		p := seed(f)
		// A dispatcher the channels cannot reach.
		mail := f.contact(map[string]any{"name": "DM", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "dm@example.com"}})
		f.contact(map[string]any{"name": "Far", "roles": []string{"driver"}, "channels": map[string]any{"sms": "+15550000030"},
			"links": map[string]any{"driver_ids": []string{"drv_far"}}})
		b := alertBody([]string{"active_drivers", "field_personnel", "dispatchers", "emergency_contacts"}, nil, "sms", "push_notification")
		b["target_audience"].(map[string]any)["specific_drivers"] = []string{"drv_in", "drv_far"}
		b["target_audience"].(map[string]any)["specific_vehicles"] = []string{"veh_z"}
		code, al := f.do("POST", "/v1/emergency/alerts", b)
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		if got, want := recipientIDs(al), sorted("drv_in", "drv_both", p.f1, p.f2, p.d1, p.d2, p.e1, p.e3, p.x, mail, "drv_far", "vehicle:veh_z"); !slices.Equal(got, want) {
			t.Errorf("recipients %v, want %v", got, want)
		}
		counts := func(aa map[string]any) string {
			return fmt.Sprint(aa["active_drivers_notified"], aa["field_personnel_notified"], aa["dispatchers_notified"], aa["emergency_contacts_notified"],
				aa["specific_drivers_notified"], aa["specific_vehicles_notified"])
		}
		if got := counts(al["affected_area_analysis"].(map[string]any)); got != "0 0 0 0 0 0" {
			t.Errorf("counts while every first attempt failed: %s", got)
		}
		clk.set(t0.Add(time.Second))
		if _, err := f.outbox.Tick(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, got := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
		// active drivers DC (drv_in has no directory entry, so no
		// address); field F1, F2, D2; dispatchers D1, D2, X (not DM);
		// emergency contacts E1, E3, X; specific drv_far (at their entry's
		// number; not drv_in); no vehicle (veh_z has no address).
		if got := counts(got["affected_area_analysis"].(map[string]any)); got != "1 3 3 3 1 0" {
			t.Errorf("counts after the retries: %s, want 1 3 3 3 1 0", got)
		}
		for _, r := range got["recipients"].([]any) {
			if r := r.(map[string]any); r["recipient_id"] == "drv_in" && fmt.Sprint(r["audiences"]) != "[active_drivers specific_drivers]" {
				t.Errorf("drv_in's audiences: %v", r["audiences"])
			}
		}
	})
}

// TestIncidentStatesOnlyWhatHappened: the hub calls no emergency service,
// so a critical crash's incident says so (not_integrated, nothing
// contacted or dispatched, no response time) and its timeline holds no
// step that did not happen; people of the directory are still notified.
func TestIncidentStatesOnlyWhatHappened(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		f := start(t, open)
		seed(f)
		code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "critical",
			"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_in", "driver_id": "drv_in"})
		if code != 201 {
			t.Fatalf("incident: %d %v", code, in)
		}
		er := in["emergency_response"].(map[string]any)
		if er["status"] != "not_integrated" || er["dispatched"] != false || len(er["services_contacted"].([]any)) != 0 || er["estimated_response_time"] != nil {
			t.Errorf("emergency_response %v, want not_integrated with nothing contacted or dispatched and no response time", er)
		}
		var events []string
		for _, e := range in["timeline"].([]any) {
			events = append(events, e.(map[string]any)["event"].(string))
		}
		if !slices.Equal(events, []string{"incident_detected", "emergency_contacts_notified"}) {
			t.Errorf("timeline %v, want only incident_detected and emergency_contacts_notified", events)
		}
		if !slices.Contains(in["next_actions"].(map[string]any)["immediate"].([]any), any("call emergency services")) {
			t.Errorf("next_actions %v do not ask a person to call emergency services", in["next_actions"])
		}
	})
}

// TestIncidentShareLink: an incident's share_location_url is an absolute
// address on the host the client reached (https behind a proxy that says
// so), the same in every answer that shows the incident, served without
// a key; it shows the incident and its trip's last position; an altered
// link shows nothing.
func TestIncidentShareLink(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	f.trip("trp_share", "veh_share", "drv_share", 40.05, -83.07)
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_share", "trip_id": "trp_share"})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	lt := in["live_tracking"].(map[string]any)
	url, _ := lt["share_location_url"].(string)
	if !strings.HasPrefix(url, f.url+emergency.SharePath) || lt["expires_at"] == nil {
		t.Fatalf("live_tracking %v, want an absolute link on %s", lt, f.url)
	}
	id := in["incident_id"].(string)
	link := func(in map[string]any) any { return in["live_tracking"].(map[string]any)["share_location_url"] }
	_, read := f.do("GET", "/v1/emergency/incidents/"+id, nil)
	_, listed := f.do("GET", "/v1/emergency/incidents", nil)
	_, moved := f.do("PUT", "/v1/emergency/incidents/"+id+"/status", map[string]any{"status": "escalated"})
	for what, got := range map[string]any{"read": link(read), "listed": link(listed["incidents"].([]any)[0].(map[string]any)), "status change": link(moved)} {
		if got != url {
			t.Errorf("%s: share_location_url %v, want %s", what, got, url)
		}
	}
	req, _ := http.NewRequest("GET", f.url+"/v1/emergency/incidents/"+id, nil)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("X-Forwarded-Proto", "https")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var proxied map[string]any
	if err := json.NewDecoder(res.Body).Decode(&proxied); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := link(proxied); got != "https://"+strings.TrimPrefix(url, "http://") {
		t.Errorf("behind a TLS proxy: share_location_url %v, want https", got)
	}
	get := func(url string) (int, map[string]any) {
		res, err := http.Get(url) // no key
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, out
	}
	code, v := get(url)
	pos, _ := v["vehicle_position"].(map[string]any)
	if code != 200 || v["incident_id"] != in["incident_id"] || v["status"] != "escalated" || pos == nil || pos["latitude"] != 40.05 || pos["longitude"] != -83.07 {
		t.Fatalf("share link: %d %v", code, v)
	}
	if _, ok := v["communication_log"]; ok {
		t.Errorf("a share link shows the communication log: %v", v)
	}
	tampered := url[:len(url)-2] + "AA"
	if code, v := get(tampered); code != 404 || v["error"].(map[string]any)["code"] != "share_link_not_found" {
		t.Errorf("altered link: %d %v", code, v)
	}
}

// TestAutomatedActionsReportWhatHappened: notify_emergency_contacts sends
// the alert to the drivers' emergency contacts through the gateway and
// says how many it reached; an action that is only a request to devices
// says requested when its event is published and failed when it is not
// (this node has no bus): never completed for something nobody did.
func TestAutomatedActionsReportWhatHappened(t *testing.T) {
	f := start(t, func(t *testing.T) store.Backend { return testdb.SQLite(t) })
	p := seed(f)
	b := alertBody([]string{"active_drivers"}, nil, "sms")
	b["automated_actions"] = []string{"notify_emergency_contacts", "show_safe_route"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	sent := f.gw.sent(al["alert_id"].(string))
	for _, want := range []string{"sms " + p.e1 + " +15550000006", "sms " + p.x + " +15550000009"} {
		if !slices.Contains(sent, want) {
			t.Errorf("gateway got %v, lacks %q (an emergency contact of a driver in the area)", sent, want)
		}
	}
	acts := map[string]map[string]any{}
	for _, a := range al["automated_actions_executed"].([]any) {
		a := a.(map[string]any)
		acts[a["action"].(string)] = a
	}
	if n := acts["notify_emergency_contacts"]; n["status"] != "sent" || n["contacts_notified"].(float64) < 2 {
		t.Errorf("notify_emergency_contacts %v, want sent to at least 2 contacts", n)
	}
	if r := acts["show_safe_route"]; r["status"] != "failed" {
		t.Errorf("show_safe_route without a bus: %v, want failed", r)
	}
}

// refusingGateway answers 500 to the notifications whose address is in
// refuse (all of them when refuse is nil), 202 to the others.
type refusingGateway struct{ refuse map[string]bool }

func (g refusingGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var n emergency.Notification
	if err := json.NewDecoder(r.Body).Decode(&n); err != nil || g.refuse == nil || g.refuse[n.To] {
		w.WriteHeader(500)
		return
	}
	w.WriteHeader(202)
}

// TestIncidentTimelineNamesOnlyThoseReached: the timeline's
// emergency_contacts_notified lists the people with a notification
// delivered, not those every notification failed for, and is left out
// when nobody was reached.
func TestIncidentTimelineNamesOnlyThoseReached(t *testing.T) {
	report := func(f *fixture) map[string]any {
		code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "high",
			"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_in", "driver_id": "drv_in"})
		if code != 201 {
			t.Fatalf("incident: %d %v", code, in)
		}
		return in
	}
	entry := func(in map[string]any) map[string]any {
		for _, e := range in["timeline"].([]any) {
			if e := e.(map[string]any); e["event"] == "emergency_contacts_notified" {
				return e
			}
		}
		return nil
	}
	t.Run("some refused", func(t *testing.T) {
		// e1's only address and d1's sms are refused; d1's e-mail goes.
		f := startWith(t, testdb.SQLite(t), refusingGateway{refuse: map[string]bool{"+15550000006": true, "+15550000004": true}}, emergency.AlertsConfig{}, nil)
		p := seed(f)
		in := report(f)
		e := entry(in)
		if e == nil {
			t.Fatalf("no emergency_contacts_notified although some were reached: %v", in["timeline"])
		}
		data := e["data"].(map[string]any)
		if got := fmt.Sprint(data["emergency_contacts"]); got != fmt.Sprint([]string{p.x}) {
			t.Errorf("emergency contacts reached %s, want [%s] (not %s, refused)", got, p.x, p.e1)
		}
		if got, want := fmt.Sprint(sorted(anyStrings(data["dispatchers"])...)), fmt.Sprint(sorted(p.d1, p.d2)); got != want {
			t.Errorf("dispatchers reached %s, want %s", got, want)
		}
		if e["description"] != "1 emergency contact and 2 dispatchers notified" {
			t.Errorf("description %q", e["description"])
		}
	})
	t.Run("all refused", func(t *testing.T) {
		f := startWith(t, testdb.SQLite(t), refusingGateway{}, emergency.AlertsConfig{}, nil)
		seed(f)
		in := report(f)
		if e := entry(in); e != nil {
			t.Errorf("timeline says %v although every notification failed", e)
		}
		log := in["communication_log"].([]any)
		if len(log) == 0 {
			t.Fatal("nothing was tried")
		}
		for _, l := range log {
			if s := l.(map[string]any)["delivery_status"]; s != "failed" {
				t.Errorf("communication_log entry %v, want failed", l)
			}
		}
	})
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestAlertWithoutGatewayStatesNothingSent: without a notification
// gateway nothing leaves the hub on the gateway's channels, so the
// breakdown counts those deliveries failed and none sent, and the
// channel's schedule says it never went out.
func TestAlertWithoutGatewayStatesNothingSent(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), nil, emergency.AlertsConfig{}, nil)
	seed(f)
	code, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms"))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	ds := al["delivery_status"].(map[string]any)
	sms := ds["delivery_breakdown"].(map[string]any)["sms"].(map[string]any)
	if sms["sent"] != 0.0 || sms["delivered"] != 0.0 || sms["failed"] == 0.0 {
		t.Errorf("sms breakdown %v, want nothing sent and the deliveries failed", sms)
	}
	for _, c := range ds["channel_schedule"].([]any) {
		if c := c.(map[string]any); c["times_sent"] != 0.0 || c["last_sent_at"] != nil {
			t.Errorf("schedule %v, want never sent", c)
		}
	}
}

// TestIncidentWithoutGatewayLogsNothing: without a notification gateway
// a reported incident sends nothing, so its communication_log is empty
// and its timeline names nobody as notified; the driver's directory entry
// still fills the involved party's contact_info.
func TestIncidentWithoutGatewayLogsNothing(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), nil, emergency.AlertsConfig{}, nil)
	seed(f)
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "high",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "vehicle_id": "veh_both", "driver_id": "drv_both"})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	if log := in["communication_log"].([]any); len(log) != 0 {
		t.Errorf("communication_log %v, want nothing: no gateway, nothing sent", log)
	}
	if tl := in["timeline"].([]any); len(tl) != 1 {
		t.Errorf("timeline %v, want the report alone", tl)
	}
	if ci := in["involved_parties"].([]any)[0].(map[string]any)["contact_info"].(map[string]any); ci["name"] != "DC" || ci["emergency_contact"] != "E3" {
		t.Errorf("contact_info %v, want the driver's directory entry", ci)
	}
}

// TestHomeAreaRadius: a contact known only by a home area with radius_km
// is in an alert's area when any of that home area is: based 13 km from
// the centre of a 10 km alert, a 5 km home area is reached and a 1 km one
// is not; nor is one without a radius. Over a drawn polygon alike.
func TestHomeAreaRadius(t *testing.T) {
	f := start(t, testdb.SQLite)
	at := func(radius any) map[string]any {
		h := map[string]any{"latitude": 40.0, "longitude": -83.0 + 13/85.39} // 13 km east (85.39 km a degree of longitude at 40°)
		if radius != nil {
			h["radius_km"] = radius
		}
		return h
	}
	wide := f.contact(map[string]any{"name": "W", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000021"}, "home_area": at(5)})
	f.contact(map[string]any{"name": "N", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000022"}, "home_area": at(1)})
	f.contact(map[string]any{"name": "P", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+15550000023"}, "home_area": at(nil)})
	b := alertBody([]string{"field_personnel"}, nil, "sms")
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if got, want := f.gw.sent(al["alert_id"].(string)), []string{"sms " + wide + " +15550000021"}; !slices.Equal(got, want) {
		t.Errorf("radius area: reached %v, want %v", got, want)
	}
	// a square of ±0.11° about the same centre: its east edge 9.4 km east
	sq := []map[string]any{{"latitude": 39.89, "longitude": -83.11}, {"latitude": 39.89, "longitude": -82.89}, {"latitude": 40.11, "longitude": -82.89}, {"latitude": 40.11, "longitude": -83.11}}
	b["affected_area"] = map[string]any{"type": "polygon", "polygon": sq}
	code, al = f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if got, want := f.gw.sent(al["alert_id"].(string)), []string{"sms " + wide + " +15550000021"}; !slices.Equal(got, want) {
		t.Errorf("polygon area: reached %v, want %v", got, want)
	}
}
