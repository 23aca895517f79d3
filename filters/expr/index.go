package expr

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fleethub/fleethub/hub/event"
)

// Index holds many Programs by id and finds those matching a message
// without scanning them all. Each program sits in the buckets of its most
// selective key (see IndexKeys): one bucket per vehicle id if it names
// vehicles, else one per category (events) or data type (telemetry), else
// the wildcard bucket of its kind. A message reads one vehicle bucket, one
// category or data-type bucket and the wildcard bucket, and runs the full
// Match on each candidate only; since a program sits in one dimension and
// a message has one value per dimension, no candidate is seen twice.
//
// Match takes no lock: it reads an immutable snapshot through an
// atomic.Pointer. Add and Remove serialize on a mutex and publish a new
// snapshot that shares every untouched part with the old one (vehicle
// buckets are split in 256 shards, so an Add copies a few small maps, not
// the whole index). The zero Index is empty and ready to use.
type Index[K comparable] struct {
	snap atomic.Pointer[snapshot[K]]

	mu    sync.Mutex     // serializes Add and Remove
	progs map[K]*Program // every program by id; mu must be held
}

// vehicleShards is the number of vehicle bucket maps: an Add copies only
// the shards of the program's vehicles.
const vehicleShards = 256

// Dimensions of a program's placement.
const (
	dimVehicle = iota
	dimSecond
	dimWildcard
	dimNone // never matches: not stored in buckets
)

type entry[K comparable] struct {
	id K
	p  *Program
}

// snapshot is immutable once published.
type snapshot[K comparable] struct {
	kinds [2]kindIndex[K] // by kindEvent-1, kindTelemetry-1
}

type kindIndex[K comparable] struct {
	vehicles [vehicleShards]map[string][]entry[K]
	second   map[string][]entry[K] // category or data type
	wildcard []entry[K]
}

// Add adds p under id, replacing a program already there. p must not be
// nil.
func (ix *Index[K]) Add(id K, p *Program) {
	if p == nil {
		panic("expr: Index.Add with a nil Program")
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	s := ix.clone()
	if old, ok := ix.progs[id]; ok {
		s.remove(id, old)
	}
	if ix.progs == nil {
		ix.progs = make(map[K]*Program)
	}
	ix.progs[id] = p
	s.add(id, p)
	ix.snap.Store(s)
}

// Remove removes the program under id and reports whether there was one.
func (ix *Index[K]) Remove(id K) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old, ok := ix.progs[id]
	if !ok {
		return false
	}
	delete(ix.progs, id)
	s := ix.clone()
	s.remove(id, old)
	ix.snap.Store(s)
	return true
}

// Len returns the number of programs.
func (ix *Index[K]) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.progs)
}

// Match appends to out the ids of the programs matching env and returns
// the extended slice, in no particular order. It takes no lock and, given
// an out with room, does not allocate.
func (ix *Index[K]) Match(env *event.Envelope, out []K) []K {
	s := ix.snap.Load()
	if s == nil || env == nil {
		return out
	}
	if ev := env.Event; ev != nil {
		out = s.kinds[kindEvent-1].match(env, ev.Source.VehicleID, ev.Category, out)
	}
	if t := env.Telemetry; t != nil {
		out = s.kinds[kindTelemetry-1].match(env, t.VehicleID, t.DataType, out)
	}
	return out
}

func (k *kindIndex[K]) match(env *event.Envelope, vehicle, second string, out []K) []K {
	if shard := k.vehicles[shardOf(vehicle)]; shard != nil {
		out = matchBucket(shard[vehicle], env, out)
	}
	out = matchBucket(k.second[second], env, out)
	return matchBucket(k.wildcard, env, out)
}

func matchBucket[K comparable](b []entry[K], env *event.Envelope, out []K) []K {
	for i := range b {
		if b[i].p.Match(env) {
			out = append(out, b[i].id)
		}
	}
	return out
}

// clone returns a shallow copy of the current snapshot, to be modified
// copy-on-write; ix.mu must be held.
func (ix *Index[K]) clone() *snapshot[K] {
	s := new(snapshot[K])
	if cur := ix.snap.Load(); cur != nil {
		*s = *cur
	}
	return s
}

// placement returns where p is stored: its dimension and bucket keys.
func placement(p *Program) (dim int, keys []string) {
	switch {
	case p.never || p.kind == 0:
		return dimNone, nil
	case len(p.keys.VehicleIDs) > 0:
		return dimVehicle, p.keys.VehicleIDs
	case p.kind == kindEvent && len(p.keys.Categories) > 0:
		return dimSecond, p.keys.Categories
	case p.kind == kindTelemetry && len(p.keys.DataTypes) > 0:
		return dimSecond, p.keys.DataTypes
	}
	return dimWildcard, nil
}

// add and remove change s copy-on-write: every map or slice they change is
// a new one, since the old ones are shared with published snapshots.
func (s *snapshot[K]) add(id K, p *Program) {
	dim, keys := placement(p)
	if dim == dimNone {
		return
	}
	k := &s.kinds[p.kind-1]
	e := entry[K]{id: id, p: p}
	switch dim {
	case dimVehicle:
		cloned := [vehicleShards]bool{}
		for _, key := range keys {
			i := shardOf(key)
			if !cloned[i] {
				k.vehicles[i], cloned[i] = cloneMap(k.vehicles[i]), true
			}
			k.vehicles[i][key] = append(slices.Clip(k.vehicles[i][key]), e)
		}
	case dimSecond:
		k.second = cloneMap(k.second)
		for _, key := range keys {
			k.second[key] = append(slices.Clip(k.second[key]), e)
		}
	case dimWildcard:
		k.wildcard = append(slices.Clip(k.wildcard), e)
	}
}

func (s *snapshot[K]) remove(id K, p *Program) {
	dim, keys := placement(p)
	if dim == dimNone {
		return
	}
	k := &s.kinds[p.kind-1]
	switch dim {
	case dimVehicle:
		cloned := [vehicleShards]bool{}
		for _, key := range keys {
			i := shardOf(key)
			if !cloned[i] {
				k.vehicles[i], cloned[i] = cloneMap(k.vehicles[i]), true
			}
			setBucket(k.vehicles[i], key, without(k.vehicles[i][key], id))
		}
	case dimSecond:
		k.second = cloneMap(k.second)
		for _, key := range keys {
			setBucket(k.second, key, without(k.second[key], id))
		}
	case dimWildcard:
		k.wildcard = without(k.wildcard, id)
	}
}

func cloneMap[K comparable](m map[string][]entry[K]) map[string][]entry[K] {
	if m == nil {
		return make(map[string][]entry[K])
	}
	return maps.Clone(m)
}

func setBucket[K comparable](m map[string][]entry[K], key string, b []entry[K]) {
	if len(b) == 0 {
		delete(m, key)
		return
	}
	m[key] = b
}

// without returns a new slice of b without id's entry.
func without[K comparable](b []entry[K], id K) []entry[K] {
	out := make([]entry[K], 0, len(b))
	for _, e := range b {
		if e.id != id {
			out = append(out, e)
		}
	}
	return out
}

// shardOf hashes a vehicle id to its shard (FNV-1a; the shard's map is
// hashed again with Go's seeded hash).
func shardOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % vehicleShards)
}
