package pipeline

import (
	"context"
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
// server loaded address data).
type StoreEnricher struct {
	trips TripLister
	names Namer
	cache *expirable.LRU[string, map[string]any]
}

// NewStoreEnricher makes an enricher; names may be nil.
func NewStoreEnricher(trips TripLister, names Namer) *StoreEnricher {
	return &StoreEnricher{trips: trips, names: names, cache: expirable.NewLRU[string, map[string]any](50_000, nil, 5*time.Second)}
}

// Enrich implements Enricher.
func (s *StoreEnricher) Enrich(ctx context.Context, org, env string, ev *event.Event, what []string) map[string]any {
	out := map[string]any{}
	for _, w := range what {
		switch w {
		case "vehicle_details":
			if v := ev.Source.VehicleID; v != "" {
				out["vehicle_details"] = s.lookup(ctx, org, env, "vehicle", v)
			}
		case "location_names":
			if s.names != nil && ev.Location != nil {
				if name, ok := s.names.Nearest(ev.Location.Latitude, ev.Location.Longitude, 250); ok {
					out["location_name"] = name
				}
			}
		case "driver_info":
			if d := ev.Source.DriverID; d != "" {
				out["driver_info"] = s.lookup(ctx, org, env, "driver", d)
			}
		}
	}
	return out
}

func (s *StoreEnricher) lookup(ctx context.Context, org, env, kind, id string) map[string]any {
	key := org + "|" + env + "|" + kind + "|" + id
	if v, ok := s.cache.Get(key); ok {
		return v
	}
	f := store.TripFilter{Scope: store.Scope{Org: org, Env: env}, Sort: "start_time", Desc: true, Limit: 1}
	if kind == "vehicle" {
		f.VehicleID = id
	} else {
		f.DriverID = id
	}
	info := map[string]any{kind + "_id": id, "known": false}
	if trips, err := s.trips.ListTrips(ctx, f); err == nil && len(trips) > 0 {
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
		info["last_trip_safety_score"] = t.Totals.SafetyScore
	}
	s.cache.Add(key, info)
	return info
}
