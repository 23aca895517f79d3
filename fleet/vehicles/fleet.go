package vehicles

import (
	"context"
	"errors"
	"fmt"
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
	if s.cfg.SoleWriter {
		s.kmu.RLock()
		if s.known != nil {
			f := s.known[k]
			s.kmu.RUnlock()
			return f, nil
		}
		s.kmu.RUnlock()
	}
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
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if fleet == nil {
		s.fleets.Remove(k)
		s.known = nil // what the store holds is not known: read it again
		return
	}
	s.fleets.Add(k, fleetEntry{fleet: *fleet, at: s.cfg.Now()})
	switch {
	case s.known == nil:
	case *fleet == "":
		delete(s.known, k)
	case len(s.known) >= s.cfg.FleetCacheSize:
		if _, ok := s.known[k]; !ok {
			s.known = nil // past the bound: the LRU answers from now on
			return
		}
		s.known[k] = *fleet
	default:
		s.known[k] = *fleet
	}
}

// Load reads, with Config.SoleWriter, the fleet of every vehicle whose
// profile names one, so that Fleet answers from memory without reading
// the store; when there are more than Config.FleetCacheSize it keeps
// none and Fleet goes on with its cache. Without SoleWriter it does
// nothing. Call it before the service takes writes (at start).
func (s *Service) Load(ctx context.Context) error {
	if !s.cfg.SoleWriter {
		return nil
	}
	s.mu.Lock() // no write is recorded meanwhile
	defer s.mu.Unlock()
	vs, err := s.st.ListVehicleFleets(ctx, s.cfg.FleetCacheSize+1)
	if err != nil {
		return fmt.Errorf("vehicles: loading fleets: %w", err)
	}
	s.kmu.Lock()
	defer s.kmu.Unlock()
	if len(vs) > s.cfg.FleetCacheSize {
		s.known = nil
		return nil
	}
	s.known = make(map[fleetKey]string, len(vs))
	for _, v := range vs {
		s.known[keyOf(v.Org, v.Env, v.ID)] = v.FleetID
	}
	return nil
}
