package emergency_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// bus records the events published, refusing those of the vehicles in
// refuse.
type bus struct {
	mu     sync.Mutex
	evs    []*event.Event
	refuse map[string]bool
}

func (b *bus) Publish(_ context.Context, _, _ string, evs ...*event.Event) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ev := range evs {
		if b.refuse[ev.Source.VehicleID] {
			return errors.New("bus: refused")
		}
		b.evs = append(b.evs, ev)
	}
	return nil
}

// actions answers "action vehicle driver trip" of each emergency_action
// event published, sorted.
func (b *bus) actions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, ev := range b.evs {
		if ev.EventType == "emergency_action" {
			out = append(out, ev.EventData["action"].(string)+" "+ev.Source.VehicleID+" "+ev.Source.DriverID+" "+ev.Source.TripID)
		}
	}
	slices.Sort(out)
	return out
}

func addTrip(t *testing.T, st store.Backend, id, vehicle, driver string, lat, lon float64) {
	t.Helper()
	now := time.Now().UTC()
	state, err := json.Marshal(map[string]any{"last": map[string]float64{"lat": lat, "lon": lon}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTrip(t.Context(), store.Trip{ID: id, Org: "org-a", Env: "test", VehicleID: vehicle, DriverID: driver, Status: store.TripActive,
		StartTime: now, StartLocation: &store.Place{Latitude: lat, Longitude: lon}, Metadata: []byte(`{}`), MetadataHistory: []byte(`[]`), State: state,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
}

func actionBody(lat, lon float64, actions ...string) emergency.AlertBody {
	radius := 5.0
	return emergency.AlertBody{AlertType: "severe_weather_warning", Severity: "high", Title: "Tornado", Message: "Take shelter",
		AffectedArea:     &emergency.AffectedArea{Type: "radius", Center: &emergency.AreaPoint{Latitude: &lat, Longitude: &lon}, RadiusKm: &radius},
		TargetAudience:   &emergency.Audience{Include: []string{"active_drivers"}},
		DeliveryChannels: []emergency.Channel{{Channel: "in_app_alert"}}, Expiration: time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		AutomatedActions: actions}
}

// TestActionsRequestedOfEachVehicle: an automated action is one
// emergency_action event per vehicle of the area, naming the vehicle, its
// driver and trip; its count is the requests published, so a vehicle
// whose request could not be published is not counted, and an area
// without vehicles requests nothing.
func TestActionsRequestedOfEachVehicle(t *testing.T) {
	st := testdb.SQLite(t)
	addTrip(t, st, "trp_1", "veh_1", "drv_1", 40.0, -83.0)
	addTrip(t, st, "trp_2", "veh_2", "drv_2", 40.01, -83.0)
	addTrip(t, st, "trp_3", "veh_3", "", 40.0, -83.01)
	addTrip(t, st, "trp_far", "veh_far", "drv_far", 45.0, -90.0)
	b := &bus{refuse: map[string]bool{"veh_3": true}}
	al, err := emergency.NewAlerts(emergency.AlertsConfig{}, st, st, nil, nil, b).Create(t.Context(), store.Scope{Org: "org-a", Env: "test"},
		actionBody(40.0, -83.0, "route_vehicles_to_shelter", "enable_emergency_tracking", "suspend_outdoor_operations", "play_emergency_sound"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"enable_emergency_tracking veh_1 drv_1 trp_1", "enable_emergency_tracking veh_2 drv_2 trp_2",
		"play_emergency_sound veh_1 drv_1 trp_1", "play_emergency_sound veh_2 drv_2 trp_2",
		"route_vehicles_to_shelter veh_1 drv_1 trp_1", "route_vehicles_to_shelter veh_2 drv_2 trp_2",
		"suspend_outdoor_operations veh_1 drv_1 trp_1", "suspend_outdoor_operations veh_2 drv_2 trp_2",
	}
	if got := b.actions(); !slices.Equal(got, want) {
		t.Errorf("emergency_action events %v, want %v", got, want)
	}
	for _, r := range al.AutomatedActionsExecuted {
		var n *int
		switch r.Action {
		case "route_vehicles_to_shelter":
			n = r.AffectedVehicles
		case "enable_emergency_tracking":
			n = r.TrackingEnabledFor
		case "suspend_outdoor_operations":
			n = r.AffectedOperations
		}
		if r.Status != emergency.ActionRequested || r.Action != "play_emergency_sound" && (n == nil || *n != 2) {
			t.Errorf("%s: %+v, want requested of the 2 vehicles whose request was published", r.Action, r)
		}
	}

	b = &bus{}
	al, err = emergency.NewAlerts(emergency.AlertsConfig{}, st, st, nil, nil, b).Create(t.Context(), store.Scope{Org: "org-a", Env: "test"},
		actionBody(10.0, 10.0, "show_safe_route"))
	if err != nil {
		t.Fatal(err)
	}
	if r := al.AutomatedActionsExecuted[0]; r.Status != emergency.ActionSkipped || r.AffectedVehicles == nil || *r.AffectedVehicles != 0 || len(b.actions()) != 0 {
		t.Errorf("an area without vehicles: %+v, events %v; want skipped, 0 vehicles, no event", r, b.actions())
	}
}

// TestInAppAlertWithoutBusNamesTheBus: without an event bus an
// in_app_alert delivery fails saying the bus is missing, not the
// notification gateway, which in_app_alert does not use.
func TestInAppAlertWithoutBusNamesTheBus(t *testing.T) {
	st := testdb.SQLite(t)
	addTrip(t, st, "trp_1", "veh_1", "drv_1", 40.0, -83.0)
	al, err := emergency.NewAlerts(emergency.AlertsConfig{}, st, st, nil, nil, nil).Create(t.Context(), store.Scope{Org: "org-a", Env: "test"},
		actionBody(40.0, -83.0))
	if err != nil {
		t.Fatal(err)
	}
	if len(al.Recipients) != 1 || len(al.Recipients[0].Deliveries) != 1 {
		t.Fatalf("recipients %+v, want drv_1 with one delivery", al.Recipients)
	}
	d := al.Recipients[0].Deliveries[0]
	if d.Channel != "in_app_alert" || d.Status != "failed" || d.Reason != emergency.ErrNoBus.Error() {
		t.Errorf("in_app_alert without a bus: %+v, want failed with %q", d, emergency.ErrNoBus)
	}
}
