package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/hashicorp/golang-lru/v2/expirable"
)

// TripLister finds trips (the store's Trips listing).
type TripLister interface {
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
}

// Namer names the nearest known address of a point (reverse geocoding).
type Namer interface {
	Nearest(lat, lon, maxM float64) (string, bool)
}

// StoreEnricher answers driver_info and vehicle_details from the trips of
// the store, cached for a few seconds per vehicle and driver, and
// location_names from the nearest indexed address within 250 m (when the
// server loaded address data). A trip's own events (trip_lifecycle) read
// the store afresh: each tells of a change of the trip it describes, and
// the cached answer would describe the trip as it was before (or the
// vehicle's trip before it). When the store cannot be read the item is
// left out (and logged), never answered as an unknown driver or vehicle.
type StoreEnricher struct {
	trips TripLister
	names Namer
	log   *slog.Logger
	cache *expirable.LRU[string, map[string]any]
}

// NewStoreEnricher makes an enricher; names may be nil.
func NewStoreEnricher(trips TripLister, names Namer, log *slog.Logger) *StoreEnricher {
	return &StoreEnricher{trips: trips, names: names, log: log, cache: expirable.NewLRU[string, map[string]any](50_000, nil, 5*time.Second)}
}

// Enrich implements Enricher.
func (s *StoreEnricher) Enrich(ctx context.Context, org, env string, ev *event.Event, what []string) map[string]any {
	out := map[string]any{}
	fresh := ev.Category == event.CategoryTripLifecycle
	for _, w := range what {
		switch w {
		case "vehicle_details":
			if v := ev.Source.VehicleID; v != "" {
				if info, ok := s.lookup(ctx, org, env, "vehicle", v, fresh); ok {
					out["vehicle_details"] = info
				}
			}
		case "location_names":
			if s.names != nil && ev.Location != nil {
				if name, ok := s.names.Nearest(ev.Location.Latitude, ev.Location.Longitude, 250); ok {
					out["location_name"] = name
				}
			}
		case "driver_info":
			if d := ev.Source.DriverID; d != "" {
				if info, ok := s.lookup(ctx, org, env, "driver", d, fresh); ok {
					out["driver_info"] = info
				}
			}
		}
	}
	return out
}

// lookup answers what the store knows of a vehicle's or driver's last
// trip, from the cache unless fresh; false when the store could not be
// read.
func (s *StoreEnricher) lookup(ctx context.Context, org, env, kind, id string, fresh bool) (map[string]any, bool) {
	key := org + "|" + env + "|" + kind + "|" + id
	if !fresh {
		if v, ok := s.cache.Get(key); ok {
			return v, true
		}
	}
	f := store.TripFilter{Scope: store.Scope{Org: org, Env: env}, Sort: "start_time", Desc: true, Limit: 1}
	if kind == "vehicle" {
		f.VehicleID = id
	} else {
		f.DriverID = id
	}
	trips, err := s.trips.ListTrips(ctx, f)
	if err != nil {
		s.log.Warn("enrichment: the last trip could not be read; the event goes without it", "kind", kind, "id", id, "err", err)
		return nil, false
	}
	info := map[string]any{kind + "_id": id, "known": false}
	if len(trips) > 0 {
		t := trips[0]
		info["known"] = true
		info["last_trip_id"] = t.ID
		info["last_trip_status"] = t.Status
		info["last_trip_started_at"] = t.StartTime
		if kind == "vehicle" {
			info["driver_id"] = t.DriverID
		} else {
			info["vehicle_id"] = t.VehicleID
		}
		if t.Totals.LocationsCount > 0 {
			info["last_trip_safety_score"] = t.Totals.SafetyScore
		} else {
			info["last_trip_safety_score"] = nil // nothing driven, nothing scored
		}
	}
	s.cache.Add(key, info)
	return info, true
}
