package telemetry_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fleethub/fleethub/ingest/telemetry"
)

// fleets answers vehicles' fleets from a map, or fails.
type fleets struct {
	of   map[string]string
	fail error
}

func (f *fleets) Fleet(ctx context.Context, org, env, vehicleID string) (string, error) {
	if f.fail != nil {
		return "", f.fail
	}
	return f.of[org+"/"+env+"/"+vehicleID], nil
}

// TestEventFleets: an event keeps the fleet its sender gave; one without
// gets its vehicle's fleet; a vehicle of no fleet leaves it empty; when
// the fleets cannot be read nothing of the request is published.
func TestEventFleets(t *testing.T) {
	fl := &fleets{of: map[string]string{"org-a/live/veh-1": "fleet-1", "org-a/live/veh-2": "fleet-2"}}
	f := newFixture(t, telemetry.Config{Fleets: fl})
	body := `[
		{"event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"veh-1","fleet_id":"fleet-9"}},
		{"event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"veh-2"}},
		{"event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"veh-3"}},
		{"event_type":"login","category":"driver_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"driver_id":"drv-1"}}]`
	if _, err := f.svc.IngestEvents(context.Background(), "org-a", "live", objs(t, body)); err != nil {
		t.Fatal(err)
	}
	ms := all(t, f.bus.take())
	if len(ms) != 4 {
		t.Fatalf("%d messages, want 4", len(ms))
	}
	for i, want := range []string{"fleet-9", "fleet-2", "", ""} {
		if got := ms[i].env.Event.Source.FleetID; got != want {
			t.Errorf("event %d: fleet %q, want %q", i, got, want)
		}
	}
	fl.fail = errors.New("vehicles down")
	_, err := f.svc.IngestEvents(context.Background(), "org-a", "live", objs(t, body))
	if !errors.Is(err, telemetry.ErrFleetsUnavailable) {
		t.Fatalf("fleets down: %v, want ErrFleetsUnavailable", err)
	}
	if calls := f.bus.take(); len(calls) != 0 {
		t.Errorf("%d publish calls with the fleets down, want none", len(calls))
	}
	_, err = f.svc.IngestEvents(context.Background(), "org-a", "live", objs(t, `[{"event_type":"x","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v","fleet_id":7}}]`))
	var ve *telemetry.ValidationError
	if !errors.As(err, &ve) || ve.Fields["events[0].source.fleet_id"] == "" {
		t.Errorf("a fleet_id that is not a string: %v", err)
	}
}
