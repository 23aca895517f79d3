package emergency_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// alertBus records the in-app alerts published: "recipient vehicle" of
// each emergency_alert event.
type alertBus struct {
	mu  sync.Mutex
	got []string
}

func (b *alertBus) Publish(_ context.Context, _, _ string, evs ...*event.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ev := range evs {
		if ev.EventType == "emergency_alert" {
			b.got = append(b.got, fmt.Sprint(ev.EventData["recipient_id"], " ", ev.Source.VehicleID))
		}
	}
	return nil
}

func (b *alertBus) alerts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := slices.Clone(b.got)
	sort.Strings(out)
	return out
}

// pausedTrip stores a paused trip far from every alert's area.
func (f *fixture) pausedTrip(id, vehicle, driver string) {
	f.t.Helper()
	now := time.Now().UTC()
	state, _ := json.Marshal(map[string]any{"last": map[string]float64{"lat": 45.0, "lon": -90.0}})
	if err := f.st.CreateTrip(f.t.Context(), store.Trip{ID: id, Org: "org-a", Env: "test", VehicleID: vehicle, DriverID: driver, Status: store.TripPaused,
		StartTime: now, StartLocation: &store.Place{Latitude: 45.0, Longitude: -90.0}, Metadata: []byte(`{}`), MetadataHistory: []byte(`[]`), State: state,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		f.t.Fatal(err)
	}
}

// TestSpecificVehicleReachesItsPeople: a vehicle named in
// specific_vehicles reaches the directory contacts linking it, the
// driver of its active or paused trip at their directory entry, and
// itself in-app; each person once (a contact linked to the vehicle and
// driving it, a dispatcher linked to it and reached as a dispatcher); a
// vehicle with neither is the in-app recipient alone, as a driver of its
// trip without a directory entry adds nobody. The counts and the
// acknowledgments cover them all.
func TestSpecificVehicleReachesItsPeople(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		bus := &alertBus{}
		f := startWithBus(t, open(t), &gateway{}, emergency.AlertsConfig{}, nil, bus)
		f.trip("trp_1", "veh_1", "drv_1", 41.0, -83.0) // outside the area: named, not in it
		f.pausedTrip("trp_2", "veh_2", "drv_2")
		f.trip("trp_5", "veh_5", "drv_5", 41.0, -83.0) // drv_5 has no directory entry
		far := map[string]any{"latitude": 45.0, "longitude": -90.0}
		linked := f.contact(map[string]any{"name": "Lee", "roles": []string{"field_personnel"}, "home_area": far,
			"channels": map[string]any{"sms": "+15550000101", "email": "lee@example.com"}, "links": map[string]any{"vehicle_ids": []string{"veh_1"}}})
		driver := f.contact(map[string]any{"name": "Dee", "roles": []string{"driver"}, "channels": map[string]any{"sms": "+15550000102"},
			"links": map[string]any{"driver_ids": []string{"drv_1"}}})
		both := f.contact(map[string]any{"name": "Bo", "roles": []string{"driver"}, "channels": map[string]any{"sms": "+15550000103", "email": "bo@example.com"},
			"links": map[string]any{"driver_ids": []string{"drv_2"}, "vehicle_ids": []string{"veh_2"}}})
		disp := f.contact(map[string]any{"name": "Dia", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550000104"},
			"links": map[string]any{"vehicle_ids": []string{"veh_1"}}})
		f.contact(map[string]any{"name": "Oz", "roles": []string{"field_personnel"}, "home_area": far, "channels": map[string]any{"sms": "+15550000105"},
			"links": map[string]any{"vehicle_ids": []string{"veh_9"}}})

		b := alertBody([]string{"dispatchers"}, nil, "sms", "email", "in_app_alert")
		b["target_audience"].(map[string]any)["specific_vehicles"] = []string{"veh_1", "veh_2", "veh_4", "veh_5"}
		b["acknowledgment_required"] = true
		code, al := f.do("POST", "/v1/emergency/alerts", b)
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)

		// who, as what, named by which audiences, at which contact
		var got []string
		for _, r := range al["recipients"].([]any) {
			r := r.(map[string]any)
			got = append(got, fmt.Sprint(r["recipient_id"], " ", r["recipient_type"], " ", r["contact_id"], " ", r["vehicle_id"], " ", r["audiences"]))
		}
		sort.Strings(got)
		want := sorted(
			disp+" dispatcher "+disp+" <nil> [dispatchers specific_vehicles]",
			"drv_1 driver "+driver+" veh_1 [specific_vehicles]",
			linked+" field_personnel "+linked+" <nil> [specific_vehicles]",
			"vehicle:veh_1 vehicle <nil> veh_1 [specific_vehicles]",
			"drv_2 driver "+both+" veh_2 [specific_vehicles]",
			"vehicle:veh_2 vehicle <nil> veh_2 [specific_vehicles]",
			"vehicle:veh_4 vehicle <nil> veh_4 [specific_vehicles]",
			"vehicle:veh_5 vehicle <nil> veh_5 [specific_vehicles]",
		)
		if !slices.Equal(got, want) {
			t.Errorf("recipients\n%v\nwant\n%v", got, want)
		}

		// the gateway: each person once per channel they have an address
		// for; the vehicles have none
		wantSent := sorted("sms "+disp+" +15550000104", "sms drv_1 +15550000102", "sms "+linked+" +15550000101", "email "+linked+" lee@example.com",
			"sms drv_2 +15550000103", "email drv_2 bo@example.com")
		if got := f.gw.sent(id); !slices.Equal(got, wantSent) {
			t.Errorf("gateway got\n%v\nwant\n%v", got, wantSent)
		}
		wantInApp := sorted(disp+" ", "drv_1 veh_1", linked+" ", "vehicle:veh_1 veh_1", "drv_2 veh_2", "vehicle:veh_2 veh_2", "vehicle:veh_4 veh_4", "vehicle:veh_5 veh_5")
		if got := bus.alerts(); !slices.Equal(got, wantInApp) {
			t.Errorf("in-app alerts\n%v\nwant\n%v", got, wantInApp)
		}
		for _, r := range al["recipients"].([]any) {
			r := r.(map[string]any)
			if r["recipient_type"] != "vehicle" {
				continue
			}
			for _, d := range r["deliveries"].([]any) {
				d := d.(map[string]any)
				if d["channel"] == "in_app_alert" && d["status"] != "delivered" || d["channel"] != "in_app_alert" && (d["status"] != "skipped" || d["reason"] != "no_address") {
					t.Errorf("%s: delivery %v", r["recipient_id"], d)
				}
			}
		}

		counts := func(al map[string]any) string {
			ds := al["delivery_status"].(map[string]any)
			br := ds["delivery_breakdown"].(map[string]any)
			ch := func(c string) string {
				m := br[c].(map[string]any)
				return fmt.Sprint(m["sent"], "/", m["delivered"], "/", m["failed"])
			}
			ack := al["acknowledgment_status"].(map[string]any)
			aa := al["affected_area_analysis"].(map[string]any)
			return fmt.Sprint("total ", ds["total_recipients"], " ok ", ds["successful_deliveries"], " failed ", ds["failed_deliveries"], " pending ", ds["pending_deliveries"],
				" sms ", ch("sms"), " email ", ch("email"), " in_app ", ch("in_app_alert"),
				" ack ", ack["received"], "/", ack["pending"], " dispatchers ", aa["dispatchers_notified"], " vehicles ", aa["specific_vehicles_notified"])
		}
		if got, want := counts(al), "total 8 ok 14 failed 0 pending 0 sms 4/4/0 email 2/2/0 in_app 8/8/0 ack 0/8 dispatchers 1 vehicles 8"; got != want {
			t.Errorf("answer's counts:\n%s\nwant\n%s", got, want)
		}

		// the contact linked to the vehicle and the driver of its trip
		// acknowledge as any recipient does
		for _, who := range []string{linked, "drv_2"} {
			if code, out := f.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", map[string]any{"recipient_id": who}); code != 200 {
				t.Fatalf("acknowledge %s: %d %v", who, code, out)
			}
		}
		code, read := f.do("GET", "/v1/emergency/alerts/"+id, nil)
		if code != 200 {
			t.Fatalf("read: %d %v", code, read)
		}
		if got, want := counts(read), "total 8 ok 14 failed 0 pending 0 sms 4/4/0 email 2/2/0 in_app 8/8/0 ack 2/6 dispatchers 1 vehicles 8"; got != want {
			t.Errorf("counts after two acknowledgments:\n%s\nwant\n%s", got, want)
		}
		for _, r := range read["recipients"].([]any) {
			r := r.(map[string]any)
			acked := r["acknowledged_at"] != nil
			if want := r["recipient_id"] == linked || r["recipient_id"] == "drv_2"; acked != want {
				t.Errorf("%s: acknowledged %v, want %v", r["recipient_id"], acked, want)
			}
			if r["recipient_id"] == linked && r["acknowledged_by_type"] != "field_personnel" || r["recipient_id"] == "drv_2" && r["acknowledged_by_type"] != "driver" {
				t.Errorf("%s: acknowledged_by_type %v", r["recipient_id"], r["acknowledged_by_type"])
			}
		}

		// named specifically, a vehicle's people are reached even when an
		// excluded audience names them, with only the audience naming
		// them there
		b = alertBody(nil, []string{"dispatchers"}, "sms")
		b["target_audience"].(map[string]any)["specific_vehicles"] = []string{"veh_1"}
		code, al = f.do("POST", "/v1/emergency/alerts", b)
		if code != 201 {
			t.Fatalf("alert excluding dispatchers: %d %v", code, al)
		}
		got = nil
		for _, r := range al["recipients"].([]any) {
			r := r.(map[string]any)
			got = append(got, fmt.Sprint(r["recipient_id"], " ", r["recipient_type"], " ", r["audiences"]))
		}
		sort.Strings(got)
		want = sorted(disp+" dispatcher [specific_vehicles]", "drv_1 driver [specific_vehicles]", linked+" field_personnel [specific_vehicles]",
			"vehicle:veh_1 vehicle [specific_vehicles]")
		if !slices.Equal(got, want) {
			t.Errorf("recipients excluding dispatchers\n%v\nwant\n%v", got, want)
		}
	})
}
