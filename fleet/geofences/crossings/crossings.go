// Package crossings turns accepted location points into geofence_events:
// it consumes the locations topic in its own consumer group, keeps a
// tracker of each tenant's geofences (reloaded from the store at most
// every Refresh, and rebuilt only when they changed) and publishes
// geofence_entry and geofence_exit events on the events topic, where
// streams match them like any other event.
//
// A vehicle's first point after a start reports no transition
// (fleet/geofences/fence), so a restart does not announce every vehicle
// standing in a depot again; nor does its first point after a geofence is
// created, for that geofence. When the tenant's geofences change, the new
// tracker carries over each vehicle's side of the geofences that remain
// (fence.Tracker.Carry): a vehicle inside one that was renamed, resized or
// moved, or beside another that was created or deleted, still produces
// its exit.
//
// A Watcher is safe for concurrent use: the bus calls its handler from
// one goroutine per partition of the locations topic, and the tenants'
// trackers and the entry times are guarded by one mutex, which is held
// neither across a store read nor across a publish; each tenant's
// fence.Tracker is safe for concurrent use itself. Run is the one
// goroutine the watcher needs; it returns when its context ends.
package crossings

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/publish"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// Store lists a tenant's geofences.
type Store interface {
	ListGeofences(ctx context.Context, s store.Scope) ([]store.Geofence, error)
}

// Fleets tells the fleet a vehicle belongs to (the vehicle profiles).
type Fleets interface {
	Fleet(ctx context.Context, org, env, vehicleID string) (string, error)
}

// Config of the watcher.
type Config struct {
	Group   string        // default fleethub-geofencing
	Refresh time.Duration // default 2s
	// Fleets stamps each event with its vehicle's fleet (source.fleet_id);
	// nil: events carry none. When the fleet cannot be read the event is
	// published without it (and logged): a geofence transition is not
	// seen twice, so it is not held back.
	Fleets Fleets
}

// Watcher publishes geofence events.
type Watcher struct {
	cfg   Config
	bus   hub.Bus
	st    Store
	log   *slog.Logger
	now   func() time.Time
	mu    sync.Mutex // guards scopes and entered
	scope map[store.Scope]*tenant
	// entered remembers entry times for duration_inside.
	entered map[string]time.Time
}

type tenant struct {
	tracker *fence.Tracker
	names   map[string]string
	sig     string
	loaded  time.Time
}

// New makes a watcher.
func New(cfg Config, bus hub.Bus, st Store, log *slog.Logger) *Watcher {
	if cfg.Group == "" {
		cfg.Group = "fleethub-geofencing"
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = 2 * time.Second
	}
	return &Watcher{cfg: cfg, bus: bus, st: st, log: log, now: time.Now, scope: map[store.Scope]*tenant{}, entered: map[string]time.Time{}}
}

// Run consumes until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	return w.bus.Subscribe(ctx, hub.Subscription{Topic: hub.TopicLocations, Group: w.cfg.Group, Start: hub.StartLatest}, w.handle)
}

type shape struct {
	Center *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"center"`
	RadiusM *float64 `json:"radius_m"`
	Polygon []struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"polygon"`
}

// tracker returns the tenant's tracker, reloading its geofences when due.
func (w *Watcher) tracker(ctx context.Context, sc store.Scope) *tenant {
	now := w.now()
	w.mu.Lock()
	t := w.scope[sc]
	fresh := t != nil && now.Sub(t.loaded) < w.cfg.Refresh // loaded is written under mu
	w.mu.Unlock()
	if fresh {
		return t
	}
	gs, err := w.st.ListGeofences(ctx, sc)
	if err != nil {
		w.log.Warn("geofences not loaded", "org", sc.Org, "error", err)
		return t
	}
	var sig strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&sig, "%s@%d;", g.ID, g.UpdatedAt.UnixMilli())
	}
	if t != nil && t.sig == sig.String() {
		w.mu.Lock()
		t.loaded = now
		w.mu.Unlock()
		return t
	}
	areas := make([]fence.Area, 0, len(gs))
	names := map[string]string{}
	for _, g := range gs {
		var s shape
		if json.Unmarshal(g.Area, &s) != nil {
			continue
		}
		a := fence.Area{ID: g.ID}
		if s.Center != nil && s.RadiusM != nil {
			a.Center, a.Radius = fence.Point{Lat: s.Center.Latitude, Lon: s.Center.Longitude}, *s.RadiusM
		}
		for _, p := range s.Polygon {
			a.Polygon = append(a.Polygon, fence.Point{Lat: p.Latitude, Lon: p.Longitude})
		}
		if a.Validate() != nil {
			continue
		}
		areas = append(areas, a)
		names[g.ID] = g.Name
	}
	tr, err := fence.NewTracker(areas)
	if err != nil {
		w.log.Warn("geofence tracker not built", "org", sc.Org, "error", err)
		return t
	}
	if t != nil {
		// the vehicles keep their side of the geofences that stay
		tr.Carry(t.tracker)
	}
	nt := &tenant{tracker: tr, names: names, sig: sig.String(), loaded: now}
	w.mu.Lock()
	w.scope[sc] = nt
	w.mu.Unlock()
	return nt
}

func (w *Watcher) handle(ctx context.Context, msgs []hub.Message) error {
	var out []hub.Message
	for _, m := range msgs {
		env, err := event.Unmarshal(m.Value)
		if err != nil || env.Kind != event.KindPoints {
			continue
		}
		t := w.tracker(ctx, store.Scope{Org: env.Org, Env: env.Env})
		if t == nil || len(t.names) == 0 {
			continue
		}
		for i := range env.Points {
			p := &env.Points[i]
			for _, tr := range t.tracker.Update(p.VehicleID, fence.Point{Lat: p.Latitude, Lon: p.Longitude}, p.Timestamp) {
				msg, err := publish.Message(env.Org, env.Env, w.stamped(ctx, env, w.event(env, p, tr, t.names[tr.AreaID])), w.now().UTC())
				if err != nil {
					w.log.Error("geofence event not published", "vehicle_id", p.VehicleID, "geofence_id", tr.AreaID, "error", err)
					continue
				}
				out = append(out, msg)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return w.bus.Publish(ctx, out...)
}

// stamped is ev with its vehicle's fleet, or ev itself when the fleet
// cannot be read (logged).
func (w *Watcher) stamped(ctx context.Context, env *event.Envelope, ev *event.Event) *event.Event {
	if w.cfg.Fleets == nil {
		return ev
	}
	s, err := publish.Stamped(ctx, w.cfg.Fleets, env.Org, env.Env, ev)
	if err != nil {
		w.log.Warn("geofence event published without its fleet", "vehicle_id", ev.Source.VehicleID, "event_id", ev.EventID, "error", err)
		return ev
	}
	return s
}

func (w *Watcher) event(env *event.Envelope, p *event.Point, tr fence.Transition, name string) *event.Event {
	typ := "geofence_entry"
	key := env.Org + "|" + env.Env + "|" + p.VehicleID + "|" + tr.AreaID
	data := map[string]any{"geofence_id": tr.AreaID, "geofence_name": name}
	w.mu.Lock()
	if tr.Change == fence.Enter {
		w.entered[key] = tr.At
		data["entry_time"] = tr.At.UTC()
	} else {
		typ = "geofence_exit"
		if at, ok := w.entered[key]; ok {
			data["entry_time"] = at.UTC()
			data["duration_inside"] = tr.At.Sub(at).Seconds()
			delete(w.entered, key)
		}
		data["exit_time"] = tr.At.UTC()
	}
	w.mu.Unlock()
	h := sha1.Sum([]byte(key + "|" + typ + "|" + tr.At.UTC().Format(time.RFC3339Nano)))
	ev := &event.Event{EventID: "evt_" + hex.EncodeToString(h[:10]), EventType: typ, Category: event.CategoryGeofence, Timestamp: tr.At.UTC(),
		Severity: "low", Priority: "normal", Source: event.Source{VehicleID: p.VehicleID, DriverID: p.DriverID, TripID: p.TripID},
		Location:  &event.Location{Latitude: tr.Point.Lat, Longitude: tr.Point.Lon, Geofence: tr.AreaID},
		EventData: data, Metadata: event.Metadata{CorrelationID: p.TripID, ProcessingTime: apitime.Format(w.now()), SourceSystem: "fleethub.geofencing"},
		// nothing measures departures against a schedule, a visit's
		// efficiency or a customer's satisfaction: null
		PerformanceMetrics: map[string]any{"on_time_departure": nil, "service_efficiency": nil, "customer_satisfaction": nil}}
	return ev
}
