// Package optimization is the HTTP face of the route optimizer: it
// validates a plan request into an internal/vrp Problem, solves it within
// a time budget, stores the answer and applies it (one route_assigned
// event per vehicle). The solver, its road and cost models and the timing
// of a plan are in internal/vrp.
package optimization

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Service runs and stores optimizations.
type Service struct {
	st    store.Optimizations
	pub   Publisher
	roads Roads
	now   func() time.Time
	// work, when not 0, is each search's budget in work units
	// (vrp.Options.Work), for tests that must not depend on the clock.
	work int64
}

// Publisher puts events of a scope on the bus (hub/publish).
type Publisher interface {
	Publish(ctx context.Context, org, env string, evs ...*event.Event) error
}

// New makes the service; pub may be nil, and so may roads, when the
// server has no road graph (travel is then great-circle).
func New(st store.Optimizations, pub Publisher, roads Roads) *Service {
	if g, ok := roads.(*routing.Graph); ok && g == nil {
		roads = nil
	}
	return &Service{st: st, pub: pub, roads: roads, now: time.Now}
}

// Routes returns the optimization routes.
func (s *Service) Routes() []*api.Route {
	id := []api.Param{{Name: "optimization_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/api/v1/fleet/optimization/routes", Tag: "optimization", Summary: "Plan multi-vehicle routes (capacities, time windows, shifts; the caller's own matrix or road costs)",
			Permission: "fleet:write", Request: Request{}, Response: Response{}, Handler: s.optimize},
		{Method: "GET", Path: "/api/v1/fleet/optimization/{optimization_id}", Tag: "optimization", Summary: "A stored optimization", Permission: "fleet:read",
			Params: id, Response: Response{}, Handler: s.get},
		{Method: "PUT", Path: "/api/v1/fleet/optimization/{optimization_id}/apply", Tag: "optimization", Summary: "Apply an optimization: marks it applied and emits route assignments",
			Permission: "fleet:write", Params: id, Response: Response{}, Errors: []int{409}, Handler: s.apply},
	}
}

// costs settles where travel costs come from: the caller's matrix, the
// road graph, or great-circle distance; missing counts the pairs the
// road graph could not route.
func (s *Service) costs(r *Request, pr *vrp.Problem) (source string, missing int) {
	switch {
	case pr.Matrix != nil:
		return SourceMatrix, 0
	case s.roads != nil:
		return SourceRoads, roadMatrix(s.roads, pr, r.Vehicles)
	}
	return SourceGreatCircle, 0
}

// minSearch is the share of the time limit the search gets at least
// (1/minSearch), when the road matrices took the rest or more.
const minSearch = 20

// searchOptions bounds the search of b once spent (validation, road
// matrices) has gone: its deadline is what is left of the time limit, at
// least a minSearch-th of it, so that the answer comes within the limit
// plus that share. Its work is the whole limit's (vrp.WorkPerSecond per
// second of it), the same for the same request however long the matrices
// took, so that a seed repeats; when the deadline comes first the
// solution is cut and says so.
func (s *Service) searchOptions(b *built, spent time.Duration) vrp.Options {
	o := vrp.Options{TimeLimit: max(b.timeLimit-spent, b.timeLimit/minSearch), Seed: b.seed, Work: s.work}
	if o.Work == 0 {
		o.Work = int64(b.timeLimit.Seconds() * vrp.WorkPerSecond)
	}
	return o
}

// Response is the answer envelope.
type Response struct {
	Success bool   `json:"success"`
	Data    Result `json:"data"`
}

func (s *Service) optimize(c *api.Ctx) error {
	var r Request
	if err := c.Bind(&r, false); err != nil {
		return err
	}
	start := s.now()
	b, bad := build(&r)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	source, missing := s.costs(&r, b.pr)
	servable(bad, b.pr)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	sol := b.pr.Solve(s.searchOptions(b, s.now().Sub(start)))
	took := s.now().Sub(start)
	res := assemble(&r, b.pr, sol, took, source)
	if missing > 0 {
		res.OptimizationInsights.Bottlenecks = append(res.OptimizationInsights.Bottlenecks,
			fmt.Sprintf("%d location pair(s) have no road route; they are priced great-circle", missing))
	}
	var idb [10]byte
	_, _ = rand.Read(idb[:])
	res.OptimizationID = "opt_" + hex.EncodeToString(idb[:])
	res.Status = "completed"
	org, env := c.Scope()
	now := s.now().UTC().Truncate(time.Millisecond)
	res.CreatedAt = now
	doc, _ := json.Marshal(res)
	if err := s.st.CreateOptimization(c.Context(), store.Optimization{ID: res.OptimizationID, Org: org, Env: env, Status: res.Status, Doc: doc, Version: 1,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		return err
	}
	return c.JSON(200, Response{Success: true, Data: res})
}

func (s *Service) load(ctx context.Context, sc store.Scope, id string) (Result, int64, error) {
	o, err := s.st.GetOptimization(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return Result{}, 0, api.Errf("optimization_not_found", "optimization not found")
	}
	if err != nil {
		return Result{}, 0, err
	}
	var r Result
	return r, o.Version, json.Unmarshal(o.Doc, &r)
}

func (s *Service) get(c *api.Ctx) error {
	org, env := c.Scope()
	r, _, err := s.load(c.Context(), store.Scope{Org: org, Env: env}, c.PathParam("optimization_id"))
	if err != nil {
		return err
	}
	return c.JSON(200, Response{Success: true, Data: r})
}

func (s *Service) apply(c *api.Ctx) error {
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	r, ver, err := s.load(c.Context(), sc, c.PathParam("optimization_id"))
	if err != nil {
		return err
	}
	if r.Status != "completed" {
		return api.Errf("invalid_state_transition", "an optimization that is %s cannot be applied", r.Status).WithDetails(map[string]string{"status": r.Status})
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	r.Status, r.AppliedAt = "applied", &now
	doc, _ := json.Marshal(r)
	if err := s.st.UpdateOptimization(c.Context(), store.Optimization{ID: r.OptimizationID, Org: org, Env: env, Status: r.Status, Doc: doc, Version: ver + 1,
		CreatedAt: r.CreatedAt, UpdatedAt: now}, ver); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return api.Errf("invalid_state_transition", "the optimization changed meanwhile")
		}
		return err
	}
	if s.pub != nil {
		var evs []*event.Event
		for _, rt := range r.OptimizedRoutes {
			stops := make([]string, 0, len(rt.RouteSequence))
			for _, st := range rt.RouteSequence {
				stops = append(stops, st.DestinationID)
			}
			ev := &event.Event{EventID: "evt_" + r.OptimizationID + "_" + rt.VehicleID, EventType: "route_assigned", Category: event.CategoryOperational,
				Timestamp: now, Severity: "low", Priority: "normal", Source: event.Source{VehicleID: rt.VehicleID, DriverID: rt.DriverID},
				EventData: map[string]any{"optimization_id": r.OptimizationID, "fleet_id": r.FleetID, "stops": stops, "total_distance_km": rt.RouteSummary.TotalDistance},
				Metadata:  event.Metadata{CorrelationID: r.OptimizationID, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.optimization"}}
			evs = append(evs, ev)
		}
		if err := s.pub.Publish(c.Context(), org, env, evs...); err != nil {
			return api.Internal(err)
		}
	}
	return c.JSON(200, Response{Success: true, Data: r})
}
