package publish_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/publish"
)

// TestPublishedEventsReachTheBusKeyedBySource: a published event is read
// back from a real bus with its scope, on the events topic, keyed by its
// source; an event with no source and no correlation id is refused and
// nothing of its call is published.
func TestPublishedEventsReachTheBusKeyedBySource(t *testing.T) {
	bus := embedbus.New(embedbus.Config{Partitions: 1})
	defer bus.Close(context.Background())
	p := publish.New(bus)
	ctx := t.Context()
	evs := []*event.Event{
		{EventID: "e1", EventType: "route_assigned", Category: event.CategoryOperational, Source: event.Source{VehicleID: "veh-1", DriverID: "drv-1"}},
		{EventID: "e2", EventType: "emergency_action", Category: event.CategoryEmergency, Metadata: event.Metadata{CorrelationID: "alert-9"}},
	}
	if err := p.Publish(ctx, "org-a", "live", evs...); err != nil {
		t.Fatal(err)
	}
	err := p.Publish(ctx, "org-a", "live", &event.Event{EventID: "e3"}, &event.Event{EventID: "e4", Source: event.Source{TripID: "t"}})
	if !errors.Is(err, publish.ErrNoSource) {
		t.Fatalf("an event without source = %v, want ErrNoSource", err)
	}
	msgs, err := bus.Range(ctx, hub.TopicEvents, 0, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages on the bus, want 2 (the refused call publishes nothing)", len(msgs))
	}
	for i, want := range []string{"veh-1", "alert-9"} {
		if string(msgs[i].Key) != want {
			t.Errorf("message %d keyed %q, want %q", i, msgs[i].Key, want)
		}
		env, err := event.Unmarshal(msgs[i].Value)
		if err != nil {
			t.Fatal(err)
		}
		if env.Org != "org-a" || env.Env != "live" || env.Kind != event.KindEvent || env.Event.EventID != evs[i].EventID || env.IngestedAt.IsZero() {
			t.Errorf("message %d: %+v", i, env)
		}
	}
}

// fleets answers vehicles' fleets from a map, or fails.
type fleets struct {
	of   map[string]string
	fail error
}

func (f fleets) Fleet(ctx context.Context, org, env, vehicleID string) (string, error) {
	return f.of[vehicleID], f.fail
}

// TestPublishStampsFleets: an event of a vehicle gets the vehicle's fleet
// on the bus, the caller's event is left as it was, a given fleet is
// kept; when the fleets cannot be read nothing is published.
func TestPublishStampsFleets(t *testing.T) {
	bus := embedbus.New(embedbus.Config{Partitions: 1})
	defer bus.Close(context.Background())
	ctx := t.Context()
	evs := []*event.Event{
		{EventID: "e1", EventType: "trip_started", Source: event.Source{VehicleID: "veh-1"}},
		{EventID: "e2", EventType: "trip_started", Source: event.Source{VehicleID: "veh-1", FleetID: "fleet-given"}},
		{EventID: "e3", EventType: "trip_started", Source: event.Source{VehicleID: "veh-none"}},
	}
	if err := publish.NewWithFleets(bus, fleets{of: map[string]string{"veh-1": "fleet-1"}}).Publish(ctx, "org-a", "live", evs...); err != nil {
		t.Fatal(err)
	}
	if evs[0].Source.FleetID != "" {
		t.Error("the caller's event was changed")
	}
	down := publish.NewWithFleets(bus, fleets{fail: errors.New("vehicles down")})
	if err := down.Publish(ctx, "org-a", "live", &event.Event{EventID: "e4", Source: event.Source{VehicleID: "veh-1"}}); err == nil {
		t.Error("published with the fleets down")
	}
	msgs, err := bus.Range(ctx, hub.TopicEvents, 0, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("%d messages on the bus, want 3", len(msgs))
	}
	for i, want := range []string{"fleet-1", "fleet-given", ""} {
		env, err := event.Unmarshal(msgs[i].Value)
		if err != nil {
			t.Fatal(err)
		}
		if got := env.Event.Source.FleetID; got != want {
			t.Errorf("event %d: fleet %q, want %q", i, got, want)
		}
	}
}
