// Package vehicles keeps an organization's vehicle profiles, served over
// HTTP by api/vehicles: which fleet a vehicle belongs to and the fuel
// model its trips' figures use (fuel type, consumption per 100 km, tank
// capacity, odometer unit). A profile is created or replaced by PUT under
// the vehicle's own id; every field but the id is optional.
//
// Two readers beside the API:
//
//   - fleet/trips reads a vehicle's profile (Get) when a trip starts and
//     when it stops, straight from the store, for the trip's fuel model
//     and to turn fuel levels into liters.
//   - the streaming core asks which fleet a vehicle belongs to (Fleet) for
//     every event it scopes by fleet_id. Fleet answers from a bounded LRU
//     cache of (organization, environment, vehicle) → fleet id, negative
//     answers included: an entry is used for Config.FleetTTL (5 s by
//     default) after it was read from the store, then read again. A PUT or
//     DELETE on this node replaces its entry at once; another node sharing
//     the store (PostgreSQL) sees the change within FleetTTL. On the
//     embedded store (Config.SoleWriter: one process owns it, so every
//     write goes through this Service) an entry stays until a write
//     replaces it or the LRU drops it; and Load reads at start every
//     profile that names a fleet (up to FleetCacheSize of them), after
//     which Fleet answers every vehicle from memory and never reads the
//     store, its own writes keeping the map right.
//
// A Service is safe for concurrent use. A cache hit takes only the LRU's
// own lock (BenchmarkFleetHit: no allocation). A miss reads the store
// without any lock held; a generation counter, bumped under Service.mu by
// every write on this node once the store answered, keeps a read that
// raced a write from putting the old fleet back in the cache.
package vehicles
