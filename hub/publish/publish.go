// Package publish puts the events the hub's own services raise (trip
// lifecycle and safety events, route assignments, emergency alerts and
// incidents, geofence entries and exits) and the location points trips
// accept on the bus, one way for all of them: each event of an
// organization and environment becomes a message of the events topic,
// keyed like an ingested event (its vehicle, else its driver, else its
// trip, else its correlation id), so one source's events keep their
// order; a batch of points is one message of the locations topic keyed by
// its vehicle. An event that cannot be encoded is an error returned to the
// caller, never dropped.
//
// A Publisher made with NewWithFleets stamps each event whose source names
// a vehicle and no fleet with the vehicle's fleet (source.fleet_id), on a
// copy: the caller's event is not changed. Event streams scoped to a fleet
// take only events of their fleet; when the fleet cannot be read the call
// publishes nothing and fails.
//
// A Publisher is safe for concurrent use; it holds nothing but its bus
// and its fleets.
package publish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// Bus is where the messages go (a hub.Bus).
type Bus interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}

// Fleets tells the fleet a vehicle belongs to (the vehicle profiles): ""
// and no error for a vehicle of no known fleet.
type Fleets interface {
	Fleet(ctx context.Context, org, env, vehicleID string) (string, error)
}

// Publisher publishes events of a scope.
type Publisher struct {
	bus    Bus
	fleets Fleets // nil: events keep the fleet they carry
	now    func() time.Time
}

// New makes a publisher on bus.
func New(bus Bus) *Publisher { return &Publisher{bus: bus, now: time.Now} }

// NewWithFleets makes a publisher on bus that stamps events with their
// vehicle's fleet from fleets.
func NewWithFleets(bus Bus, fleets Fleets) *Publisher {
	return &Publisher{bus: bus, fleets: fleets, now: time.Now}
}

// stamped is ev with its vehicle's fleet (see Stamped).
func (p *Publisher) stamped(ctx context.Context, org, env string, ev *event.Event) (*event.Event, error) {
	return Stamped(ctx, p.fleets, org, env, ev)
}

// Stamped is ev, an event of org and env, with its vehicle's fleet from
// fleets as source.fleet_id: a copy when it gets one, else ev itself (an
// event with a fleet, without a vehicle, of a vehicle of no fleet, or
// fleets nil). For the services that encode their events themselves
// (Message).
func Stamped(ctx context.Context, fleets Fleets, org, env string, ev *event.Event) (*event.Event, error) {
	if fleets == nil || ev.Source.FleetID != "" || ev.Source.VehicleID == "" {
		return ev, nil
	}
	fleet, err := fleets.Fleet(ctx, org, env, ev.Source.VehicleID)
	if err != nil {
		return nil, fmt.Errorf("publish: fleet of vehicle %s for event %s (%s): %w", ev.Source.VehicleID, ev.EventID, ev.EventType, err)
	}
	if fleet == "" {
		return ev, nil
	}
	c := *ev
	c.Source.FleetID = fleet
	return &c, nil
}

// ErrNoSource is returned for an event with neither a source nor a
// correlation id: it would have no partition key.
var ErrNoSource = errors.New("publish: event has no source and no correlation id")

// Key is the partition key of an event: its vehicle, else its driver,
// else its trip, else its correlation id.
func Key(ev *event.Event) string {
	for _, k := range []string{ev.Source.VehicleID, ev.Source.DriverID, ev.Source.TripID, ev.Metadata.CorrelationID} {
		if k != "" {
			return k
		}
	}
	return ""
}

// Message encodes one event of org and env, ingested at at, as a message
// of the events topic.
func Message(org, env string, ev *event.Event, at time.Time) (hub.Message, error) {
	key := Key(ev)
	if key == "" {
		return hub.Message{}, fmt.Errorf("event %s (%s): %w", ev.EventID, ev.EventType, ErrNoSource)
	}
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: at})
	if err != nil {
		return hub.Message{}, fmt.Errorf("publish: encode event %s (%s): %w", ev.EventID, ev.EventType, err)
	}
	return hub.Message{Topic: hub.TopicEvents, Key: []byte(key), Value: b}, nil
}

// Publish puts events of org and env on the bus in one call: all of them
// or, when one cannot be encoded or the bus refuses, none and an error.
func (p *Publisher) Publish(ctx context.Context, org, env string, evs ...*event.Event) error {
	if len(evs) == 0 {
		return nil
	}
	at := p.now().UTC()
	msgs := make([]hub.Message, len(evs))
	for i, ev := range evs {
		ev, err := p.stamped(ctx, org, env, ev)
		if err != nil {
			return err
		}
		m, err := Message(org, env, ev, at)
		if err != nil {
			return err
		}
		msgs[i] = m
	}
	if err := p.bus.Publish(ctx, msgs...); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// ErrNoVehicle is returned for points without a vehicle or trip id.
var ErrNoVehicle = errors.New("publish: points have no vehicle and no trip id")

// Points encodes location points of org and env, ingested at at, as one
// message of the locations topic keyed by the first point's vehicle (else
// its trip).
func Points(org, env string, pts []event.Point, at time.Time) (hub.Message, error) {
	key := pts[0].VehicleID
	if key == "" {
		key = pts[0].TripID
	}
	if key == "" {
		return hub.Message{}, ErrNoVehicle
	}
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindPoints, Points: pts, IngestedAt: at})
	if err != nil {
		return hub.Message{}, fmt.Errorf("publish: encode %d points of %s: %w", len(pts), key, err)
	}
	return hub.Message{Topic: hub.TopicLocations, Key: []byte(key), Value: b}, nil
}

// PublishPoints puts one source's accepted points and the events they
// raised on the bus in one call: all of them or, when one cannot be
// encoded or the bus refuses, none and an error.
func (p *Publisher) PublishPoints(ctx context.Context, org, env string, pts []event.Point, evs ...*event.Event) error {
	if len(pts) == 0 {
		return p.Publish(ctx, org, env, evs...)
	}
	at := p.now().UTC()
	msgs := make([]hub.Message, 0, 1+len(evs))
	m, err := Points(org, env, pts, at)
	if err != nil {
		return err
	}
	msgs = append(msgs, m)
	for _, ev := range evs {
		ev, err := p.stamped(ctx, org, env, ev)
		if err != nil {
			return err
		}
		m, err := Message(org, env, ev, at)
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	if err := p.bus.Publish(ctx, msgs...); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}
