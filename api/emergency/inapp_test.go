package emergency_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// dataBus records the event_data of each emergency_alert published.
type dataBus struct {
	mu  sync.Mutex
	got []map[string]any
}

func (b *dataBus) Publish(_ context.Context, _, _ string, evs ...*event.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ev := range evs {
		if ev.EventType == "emergency_alert" {
			b.got = append(b.got, ev.EventData)
		}
	}
	return nil
}

func (b *dataBus) take() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.got
	b.got = nil
	return out
}

// TestInAppAlertCarriesItsPriority: the in_app_alert channel's priority
// reaches the app in the emergency_alert's event_data, as the gateway's
// notifications carry theirs, and a repeat says which it is; a channel
// sent without a priority states none.
func TestInAppAlertCarriesItsPriority(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	b := &dataBus{}
	f := startWithBus(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil, b)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550008101"}})

	code, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour),
		map[string]any{"channel": "in_app_alert", "priority": "low", "repeat_interval_minutes": 5, "max_repeats": 1}))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	got := b.take()
	if len(got) != 1 || got[0]["priority"] != "low" || got[0]["repeat"] != nil {
		t.Fatalf("in-app delivery's event_data %v, want priority low and no repeat", got)
	}
	clk.set(t0.Add(5 * time.Minute))
	f.tick()
	got = b.take()
	if len(got) != 1 || got[0]["priority"] != "low" || got[0]["repeat"] != 1 {
		t.Errorf("in-app repeat's event_data %v, want priority low and repeat 1", got)
	}

	if code, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour), map[string]any{"channel": "in_app_alert"})); code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if got := b.take(); len(got) != 1 || got[0]["priority"] != nil {
		t.Errorf("in-app delivery without a priority: event_data %v, want no priority", got)
	}
}

// TestReroutingProgressUnknown: route_vehicles_to_shelter carries the
// interface's rerouting_progress, null: no device reports how far its
// rerouting went. Other actions do not carry it.
func TestReroutingProgressUnknown(t *testing.T) {
	f := startWithBus(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil, &dataBus{})
	f.trip("trp_s", "veh_s", "drv_s", 40.0, -83.0)
	b := alertBody([]string{"active_drivers"}, nil, "in_app_alert")
	b["automated_actions"] = []string{"route_vehicles_to_shelter", "show_safe_route"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	_, read := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	for what, a := range map[string]map[string]any{"created": al, "read": read} {
		for _, x := range a["automated_actions_executed"].([]any) {
			x := x.(map[string]any)
			v, ok := x["rerouting_progress"]
			switch x["action"] {
			case "route_vehicles_to_shelter":
				if !ok || v != nil || x["status"] != "requested" || x["affected_vehicles"] != 1.0 {
					t.Errorf("%s: %v, want requested of 1 vehicle with rerouting_progress null", what, x)
				}
			default:
				if ok {
					t.Errorf("%s: %v carries rerouting_progress", what, x)
				}
			}
		}
	}
}
