package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// Fleets tells the fleet a vehicle belongs to (the vehicle profiles):
// "" and no error for a vehicle of no known fleet.
type Fleets interface {
	Fleet(ctx context.Context, org, env, vehicleID string) (string, error)
}

// ErrFleetsUnavailable is returned when the fleet of an event's vehicle
// could not be read: nothing of the request was accepted and the caller
// should retry.
var ErrFleetsUnavailable = errors.New("telemetry: vehicle fleets unavailable")

// eventMessage stamps an event's fleet and encodes it as a message of the
// events topic keyed by key. An event keeps the source.fleet_id its sender
// gave; one without gets its vehicle's fleet when Config.Fleets knows it,
// so that fleet-scoped streams find it.
func (s *Service) eventMessage(ctx context.Context, org, env, key string, ev *event.Event, now time.Time) (hub.Message, error) {
	if f := s.cfg.Fleets; f != nil && ev.Source.FleetID == "" && ev.Source.VehicleID != "" {
		fleet, err := f.Fleet(ctx, org, env, ev.Source.VehicleID)
		if err != nil {
			return hub.Message{}, fmt.Errorf("%w: vehicle %s: %w", ErrFleetsUnavailable, ev.Source.VehicleID, err)
		}
		ev.Source.FleetID = fleet
	}
	return s.message(s.cfg.EventsTopic, key, &event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: now})
}
