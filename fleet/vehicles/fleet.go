package vehicles

import (
	"context"
	"errors"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// fleetKey names a vehicle of a scope in the fleet cache: a struct, so a
// look-up builds no string.
type fleetKey struct{ org, env, vehicle string }

func keyOf(org, env, vehicle string) fleetKey { return fleetKey{org, env, vehicle} }

// fleetEntry is a cached answer of Fleet and when it was read.
type fleetEntry struct {
	fleet string
	at    time.Time
}

// Fleet answers the fleet vehicleID of the scope (org, env) belongs to:
// "" when the vehicle has no profile or its profile names no fleet. It
// answers from the cache while the entry is younger than
// Config.FleetTTL (for as long as it is cached with Config.SoleWriter),
// else from the store; a store error is returned and nothing is cached.
func (s *Service) Fleet(ctx context.Context, org, env, vehicleID string) (fleetID string, err error) {
	k := keyOf(org, env, vehicleID)
	now := s.cfg.Now()
	if e, ok := s.fleets.Get(k); ok && (s.cfg.SoleWriter || now.Sub(e.at) < s.cfg.FleetTTL && !now.Before(e.at)) {
		return e.fleet, nil
	}
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	r, err := s.st.GetVehicle(ctx, store.Scope{Org: org, Env: env}, vehicleID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		r.FleetID = ""
	case err != nil:
		return "", err
	}
	s.mu.Lock()
	if s.gen == g { // no write on this node since the read began
		s.fleets.Add(k, fleetEntry{fleet: r.FleetID, at: now})
	}
	s.mu.Unlock()
	return r.FleetID, nil
}

// wrote records a write of vehicle id's profile on this node, after the
// store answered: fleet is the vehicle's fleet now ("" for none), or nil
// when the write's outcome is not known and the next Fleet must read the
// store.
func (s *Service) wrote(sc store.Scope, id string, fleet *string) {
	k := keyOf(sc.Org, sc.Env, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if fleet == nil {
		s.fleets.Remove(k)
		return
	}
	s.fleets.Add(k, fleetEntry{fleet: *fleet, at: s.cfg.Now()})
}
