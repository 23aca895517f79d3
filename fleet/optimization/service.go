// Package optimization is the route optimizer's service: it validates a
// plan request into an internal/vrp Problem, prices travel (the caller's
// matrix, the road graph or great-circle distance), solves it within a
// time budget, stores the answer and applies it (one route_assigned event
// per vehicle, through hub/publish). The solver, its road and cost models
// and the timing of a plan are in internal/vrp; api/optimization serves
// this over HTTP.
//
// A Service is safe for concurrent use: each request builds and solves its
// own problem, and what is shared (the store, the publisher, the road
// graph) is safe for concurrent use itself.
package optimization

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/roadspeed"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/vrp"

	"github.com/fleethub/fleethub/internal/cputime"
)

// Config tunes a Service; zero fields take defaults.
type Config struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Work, when not 0, is each search's budget in work units
	// (vrp.Options.Work) instead of one set by the request's time limit:
	// the same request then gives the same plan on any machine.
	Work int64
	// WorkPerSecond, when not 0, is each search's work per second of the
	// time limit, in place of the default (vrp.WorkPerSecond) until
	// Calibrate measures this machine.
	WorkPerSecond int64
	// CalibrateAt is when RunCalibration measures the machine, from its
	// start; default CalibrateAt().
	CalibrateAt []time.Duration
	// Traffic is the speeds the fleets were observed driving on the
	// roads (real_time_traffic); nil refuses real_time_traffic.
	Traffic Traffic
}

// Service runs, stores and applies optimizations.
type Service struct {
	cfg   Config
	st    store.Optimizations
	pub   Publisher
	roads Roads
	// rate is each search's work per second of the time limit:
	// vrp.WorkPerSecond until Calibrate has measured this machine
	rate atomic.Int64
	// measured is the highest rate Calibrate has measured (the least
	// disturbed), in units per core-second; searching counts the
	// searches running, which a later calibration waits out
	measured  atomic.Int64
	searching atomic.Int32
	// quiet is the share of a core under which the process counts as
	// quiet (QuietShare)
	quiet float64
}

// RateShare is the share of a core's measured work rate (Calibrate) a
// search is given per second of its time limit, so that its work ends
// within the limit with room for the road matrices and a busy moment.
const RateShare = 0.87

// Calibrate measures the solver's work rate on this machine
// (vrp.MeasureRate, about half a second of one core) and sets each
// search's work per second of the time limit to RateShare of it; it
// returns the measured rate, 0 where it cannot be measured (the default,
// vrp.WorkPerSecond, then stays). Requests before it returns use the
// default.
//
// Calibrate may run again: a measurement lower than an earlier one (a
// busy moment, when other work shared the core's caches or the VM's host
// its time) leaves the rate as it was, so that the rate is the highest
// measured, that of the machine when quiet. A search that then meets a
// busy moment ends on its time limit, as it would anyway.
func (s *Service) Calibrate() (measured float64, perSecond int64) {
	measured = vrp.MeasureRate(vrp.RateWork)
	if m := int64(measured); m > 0 {
		for {
			old := s.measured.Load()
			if m <= old {
				break
			}
			if s.measured.CompareAndSwap(old, m) {
				s.rate.Store(int64(measured * RateShare))
				break
			}
		}
	}
	return measured, s.rate.Load()
}

// CalibrateAt is when RunCalibration measures the machine by default,
// from its start: at once, for the first requests, then a few times over
// the first minutes, since a server's start is itself a busy moment.
func CalibrateAt() []time.Duration {
	return []time.Duration{0, 10 * time.Second, time.Minute, 5 * time.Minute}
}

// QuietShare is the share of one core below which the server counts as
// quiet: a measurement after the first waits for a second in which the
// whole process used less than this and no search ran.
const QuietShare = 0.10

// RunCalibration calls Calibrate at the times of Config.CalibrateAt until
// ctx ends, reporting each measurement. None runs while a search does,
// and every measurement after the first also waits for a quiet second: one with no search running and the process
// using less than QuietShare of a core. A measurement while a search runs
// would take a core from it, and one while the server is busy (a load
// test, a burst of uploads) would take half a second of a core from that
// traffic and come out low, when only the highest measured counts.
func (s *Service) RunCalibration(ctx context.Context, report func(measured float64, perSecond int64)) {
	at := s.cfg.CalibrateAt
	if at == nil {
		at = CalibrateAt()
	}
	start := time.Now()
	for i, at := range at {
		t := time.NewTimer(time.Until(start.Add(at)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		for i == 0 && s.searching.Load() > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		if i > 0 && !s.waitQuiet(ctx) {
			return
		}
		report(s.Calibrate())
	}
}

// waitQuiet returns once a second has passed with no search running and
// the process using less than QuietShare of a core (where the process's
// CPU time cannot be read, a second with no search), false when ctx ends
// first.
func (s *Service) waitQuiet(ctx context.Context) bool {
	for {
		c0, ok := cputime.Process()
		busy := s.searching.Load() > 0
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
		if busy || s.searching.Load() > 0 {
			continue
		}
		if c1, _ := cputime.Process(); ok && (c1-c0).Seconds() >= s.quiet*time.Since(t0).Seconds() {
			continue
		}
		return true
	}
}

// Publisher puts events of a scope on the bus (hub/publish).
type Publisher interface {
	Publish(ctx context.Context, org, env string, evs ...*event.Event) error
}

// New makes the service; pub may be nil, and so may roads, when the
// server has no road graph (travel is then great-circle).
func New(cfg Config, st store.Optimizations, pub Publisher, roads Roads) *Service {
	if g, ok := roads.(*routing.Graph); ok && g == nil {
		roads = nil
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{cfg: cfg, st: st, pub: pub, roads: roads, quiet: QuietShare}
	s.rate.Store(vrp.WorkPerSecond)
	if cfg.WorkPerSecond > 0 {
		s.rate.Store(cfg.WorkPerSecond)
	}
	return s
}

// ValidationError is a request refused, naming each bad field.
type ValidationError struct{ Fields map[string]string }

func (e *ValidationError) Error() string {
	return fmt.Sprintf("optimization: %d invalid field(s)", len(e.Fields))
}

// ErrNotFound is an optimization the scope does not hold.
var ErrNotFound = errors.New("optimization: not found")

// StateError is an optimization that cannot be applied as it stands:
// Status is what it is, or "" when it changed while being applied.
type StateError struct{ Status string }

func (e *StateError) Error() string {
	if e.Status == "" {
		return "optimization: changed meanwhile"
	}
	return "optimization: an optimization that is " + e.Status + " cannot be applied"
}

// costs settles where travel costs come from: the caller's matrix, the
// road graph (leaving out b.avoid), or great-circle distance; missing
// counts the pairs the road graph could not route.
func (s *Service) costs(ctx context.Context, sc store.Scope, r *Request, b *built) (source string, missing int, note string) {
	switch {
	case b.pr.Matrix != nil:
		return SourceMatrix, 0, ""
	case s.roads != nil && b.traffic && s.observing():
		cars := false
		for _, v := range r.Vehicles {
			cars = cars || costing(v) == routing.Auto
		}
		if !cars {
			return SourceRoads, roadMatrix(s.roads, b.pr, r.Vehicles, b.avoid, nil),
				"real_time_traffic: only cars (the auto costing) are timed at the speeds observed, and this fleet has none: free-flow travel times"
		}
		hours, when := s.shiftHours(b.pr)
		sp := s.cfg.Traffic.Observed(ctx, sc.Org, hours)
		if sp.Edges == 0 {
			return SourceRoads, roadMatrix(s.roads, b.pr, r.Vehicles, b.avoid, nil),
				"real_time_traffic: no speeds observed on the roads in the fleet's trips of the last 28 days, " + when + ": free-flow travel times"
		}
		missing = roadMatrix(s.roads, b.pr, r.Vehicles, b.avoid, sp.Speed)
		return SourceRoadsTraffic, missing, fmt.Sprintf("real_time_traffic: cars' travel timed at the speeds observed on %d road segment(s) and direction(s) in the fleet's trips of the last 28 days, %s; free-flow elsewhere and for other vehicle types", sp.Edges, when)
	case s.roads != nil:
		if b.traffic {
			note = "real_time_traffic: this server keeps no observed speeds: free-flow travel times"
		}
		return SourceRoads, roadMatrix(s.roads, b.pr, r.Vehicles, b.avoid, nil), note
	}
	if b.traffic {
		note = "real_time_traffic: no road network on this server (it runs without --osm): great-circle travel times, no observed speeds"
	}
	if mixedSpeeds(r.Vehicles) {
		// bicycles and pedestrians travel at their own speeds: a matrix
		// per costing, as on the road network
		roadMatrix(greatCircle{}, b.pr, r.Vehicles, 0, nil)
	}
	return SourceGreatCircle, 0, note
}

// observing reports whether the server can time roads at the speeds
// observed: a road network that takes them, and the speeds kept.
func (s *Service) observing() bool {
	_, can := s.roads.(ObservingRoads)
	return s.roads != nil && can && s.cfg.Traffic != nil
}

// shiftHours are the hours of the week (roadspeed.HourOfWeek) that the
// vehicles' shifts span today (UTC), and those hours in words.
func (s *Service) shiftHours(pr *vrp.Problem) ([]int, string) {
	now := s.cfg.Now().UTC()
	from, to := 24*60.0, 0.0
	for _, v := range pr.Vehicles {
		from, to = math.Min(from, v.ShiftStart), math.Max(to, v.ShiftEnd)
	}
	first, last := int(from/60), int(math.Ceil(to/60))-1
	first, last = max(0, min(first, 23)), max(0, min(last, 23))
	last = max(last, first)
	day := roadspeed.HourOfWeek(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC))
	var hours []int
	for h := first; h <= last; h++ {
		hours = append(hours, day+h)
	}
	return hours, fmt.Sprintf("%s %02d:00–%02d:00 UTC", now.Weekday(), first, last+1)
}

// trafficable refuses real_time_traffic sent true where the travel costs
// cannot honour it: the request's matrix is the caller's own, and
// without the road network there are no roads to time. Absent, it is
// not refused: costs plans on what there is.
func (s *Service) trafficable(bad map[string]string, b *built) {
	switch {
	case b.pr.Matrix != nil:
		bad["real_time_traffic"] = "the request's matrix sets the travel costs: send true only without a matrix"
	case !s.observing():
		bad["real_time_traffic"] = "needs the road network (the server runs without --osm), whose matched trips give the speeds observed"
	}
}

// avoidable refuses, by name, each traffic restriction set true that the
// travel costs cannot honour: the request's matrix is the caller's own,
// and great-circle travel knows no roads; only a road network that can
// leave roads out honours them.
func (s *Service) avoidable(bad map[string]string, r *Request, b *built) {
	why := ""
	_, can := s.roads.(AvoidingRoads)
	switch {
	case b.pr.Matrix != nil:
		why = "the request's matrix sets the travel costs: leave those roads out of the matrix sent"
	case s.roads == nil:
		why = "needs the road network (the server runs without --osm): great-circle travel knows no roads"
	case !can:
		why = "the road network cannot leave roads out"
	default:
		return
	}
	for k, on := range r.Constraints.TrafficRestrictions {
		if on {
			bad["constraints.traffic_restrictions."+k] = why
		}
	}
}

// minSearch is the share of the time limit the search gets at least
// (1/minSearch), when the road matrices took the rest or more.
const minSearch = 20

// solve runs the search of b, counted as running while it does.
func (s *Service) solve(b *built, spent time.Duration) vrp.Solution {
	s.searching.Add(1)
	defer s.searching.Add(-1)
	return b.pr.Solve(s.searchOptions(b, spent))
}

// searchOptions bounds the search of b once spent (validation, road
// matrices) has gone: its deadline is what is left of the time limit, at
// least a minSearch-th of it, so that the answer comes within the limit
// plus that share. Its work is the whole limit's (the calibrated rate per
// second of it, Calibrate), the same for the same request however long
// the matrices took, so that a seed repeats on this server; when the
// deadline comes first the solution is cut and says so.
func (s *Service) searchOptions(b *built, spent time.Duration) vrp.Options {
	o := vrp.Options{TimeLimit: max(b.timeLimit-spent, b.timeLimit/minSearch), Seed: b.seed, Work: s.cfg.Work, Alternatives: b.alts}
	if o.Work == 0 {
		o.Work = int64(b.timeLimit.Seconds() * float64(s.rate.Load()))
	}
	return o
}

// Optimize validates r, solves it and stores the answer, its time limit
// counted from now.
func (s *Service) Optimize(ctx context.Context, sc store.Scope, r *Request) (Result, error) {
	return s.OptimizeAfter(ctx, sc, r, 0)
}

// OptimizeAfter is Optimize for a request that arrived waited ago (read,
// then decoded): its time limit counts from its arrival, so that the
// decoding of a large matrix, tens of milliseconds on a busy machine,
// comes out of the search's time and not after the limit.
func (s *Service) OptimizeAfter(ctx context.Context, sc store.Scope, r *Request, waited time.Duration) (Result, error) {
	start := s.cfg.Now().Add(-max(waited, 0))
	b, bad := build(r)
	if len(bad) > 0 {
		return Result{}, &ValidationError{Fields: bad}
	}
	if b.avoid != 0 {
		s.avoidable(bad, r, b)
		if len(bad) > 0 {
			return Result{}, &ValidationError{Fields: bad}
		}
	}
	if b.asked {
		s.trafficable(bad, b)
		if len(bad) > 0 {
			return Result{}, &ValidationError{Fields: bad}
		}
	}
	source, missing, note := s.costs(ctx, sc, r, b)
	sol := s.solve(b, s.cfg.Now().Sub(start))
	took := s.cfg.Now().Sub(start)
	res := assemble(r, b.pr, sol, took, source)
	if missing > 0 {
		res.OptimizationInsights.Bottlenecks = append(res.OptimizationInsights.Bottlenecks,
			fmt.Sprintf("%d location pair(s) have no road route; they are priced great-circle", missing))
		if b.avoid != 0 {
			res.OptimizationInsights.Bottlenecks = append(res.OptimizationInsights.Bottlenecks,
				"those legs are not held to traffic_restrictions: their roads are unknown")
		}
	}
	if note != "" {
		res.OptimizationInsights.Recommendations = append(res.OptimizationInsights.Recommendations, note)
	}
	if b.avoid != 0 {
		for i := range res.OptimizedRoutes {
			d := &res.OptimizedRoutes[i].RouteOptimizationDetails
			d.OptimizationFactors = append(d.OptimizationFactors, Factor{"traffic_restrictions", nil, "road network without " + b.avoid.String()})
		}
	}
	var idb [10]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Result{}, fmt.Errorf("optimization: id: %w", err)
	}
	res.OptimizationID = "opt_" + hex.EncodeToString(idb[:])
	res.Status = "completed"
	now := apitime.Of(s.cfg.Now())
	res.CreatedAt = now
	doc, err := json.Marshal(res)
	if err != nil {
		return Result{}, fmt.Errorf("optimization: encode %s: %w", res.OptimizationID, err)
	}
	if err := s.st.CreateOptimization(ctx, store.Optimization{ID: res.OptimizationID, Org: sc.Org, Env: sc.Env, Status: res.Status, Doc: doc, Version: 1,
		CreatedAt: now, UpdatedAt: now}); err != nil {
		return Result{}, fmt.Errorf("optimization: store %s: %w", res.OptimizationID, err)
	}
	return res, nil
}

// Get returns a stored optimization.
func (s *Service) Get(ctx context.Context, sc store.Scope, id string) (Result, error) {
	r, _, err := s.load(ctx, sc, id)
	return r, err
}

func (s *Service) load(ctx context.Context, sc store.Scope, id string) (Result, int64, error) {
	o, err := s.st.GetOptimization(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return Result{}, 0, ErrNotFound
	}
	if err != nil {
		return Result{}, 0, fmt.Errorf("optimization: load %s: %w", id, err)
	}
	var r Result
	if err := json.Unmarshal(o.Doc, &r); err != nil {
		return Result{}, 0, fmt.Errorf("optimization: decode %s: %w", id, err)
	}
	// optimizations stored before driver_id was null without a driver
	// hold "" for none
	for i := range r.OptimizedRoutes {
		r.OptimizedRoutes[i].DriverID = nonEmpty(r.OptimizedRoutes[i].DriverID)
	}
	for i := range r.AlternativePlans {
		for j := range r.AlternativePlans[i].Routes {
			r.AlternativePlans[i].Routes[j].DriverID = nonEmpty(r.AlternativePlans[i].Routes[j].DriverID)
		}
	}
	return r, o.Version, nil
}

// nonEmpty is id, nil when it is "".
func nonEmpty(id *string) *string {
	if id == nil || *id == "" {
		return nil
	}
	return id
}

// deref is *id, "" when id is nil.
func deref(id *string) string {
	if id == nil {
		return ""
	}
	return *id
}

// Apply marks a completed optimization applied and publishes one
// route_assigned event per route.
func (s *Service) Apply(ctx context.Context, sc store.Scope, id string, a ApplyRequest) (Result, error) {
	r, ver, err := s.load(ctx, sc, id)
	if err != nil {
		return Result{}, err
	}
	if r.Status != "completed" {
		return Result{}, &StateError{Status: r.Status}
	}
	if a.Plan != nil && (*a.Plan < 0 || *a.Plan > len(r.AlternativePlans)) {
		msg := fmt.Sprintf("must be 0 (the chosen plan) or a runner-up plan of this optimization, 1 to %d", len(r.AlternativePlans))
		if len(r.AlternativePlans) == 0 {
			msg = "must be 0 (the chosen plan): this optimization has no runner-up plans (options.alternatives asks for them)"
		}
		return Result{}, &ValidationError{Fields: map[string]string{"plan": msg}}
	}
	before, err := json.Marshal(r)
	if err != nil {
		return Result{}, fmt.Errorf("optimization: encode %s: %w", id, err)
	}
	now := apitime.Of(s.cfg.Now())
	r.Status, r.AppliedAt = "applied", &now
	if a.Plan != nil && *a.Plan > 0 {
		r.AppliedPlan = a.Plan
	}
	doc, err := json.Marshal(r)
	if err != nil {
		return Result{}, fmt.Errorf("optimization: encode %s: %w", id, err)
	}
	if err := s.st.UpdateOptimization(ctx, store.Optimization{ID: r.OptimizationID, Org: sc.Org, Env: sc.Env, Status: r.Status, Doc: doc, Version: ver + 1,
		CreatedAt: r.CreatedAt, UpdatedAt: now}, ver); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Result{}, &StateError{}
		}
		return Result{}, fmt.Errorf("optimization: store %s: %w", id, err)
	}
	if s.pub == nil {
		return r, nil
	}
	if err := s.pub.Publish(ctx, sc.Org, sc.Env, assignments(&r, now)...); err != nil {
		// none of the events went out: the optimization is completed
		// again, so that the apply can be retried
		err = fmt.Errorf("optimization: publish the assignments of %s: %w", id, err)
		if rerr := s.st.UpdateOptimization(context.WithoutCancel(ctx), store.Optimization{ID: r.OptimizationID, Org: sc.Org, Env: sc.Env, Status: "completed", Doc: before,
			Version: ver + 2, CreatedAt: r.CreatedAt, UpdatedAt: now}, ver+1); rerr != nil {
			return Result{}, errors.Join(err, fmt.Errorf("optimization: %s stays applied without its assignments: %w", id, rerr))
		}
		return Result{}, err
	}
	return r, nil
}

// ApplyRequest is the optional body of PUT …/apply.
type ApplyRequest struct {
	Plan *int `json:"plan,omitempty" doc:"0 or absent: the chosen plan; 1 to N: that runner-up plan of alternative_plans"`
}

// assignments are the route_assigned events of an applied plan: the
// chosen plan's routes, or the runner-up plan's that was applied.
func assignments(r *Result, now time.Time) []*event.Event {
	type assigned struct {
		vehicle, driver string
		stops           []string
		km              float64
	}
	var routes []assigned
	if r.AppliedPlan != nil {
		for _, rt := range r.AlternativePlans[*r.AppliedPlan-1].Routes {
			routes = append(routes, assigned{rt.VehicleID, deref(rt.DriverID), rt.DestinationIDs, rt.DistanceKm})
		}
	} else {
		for _, rt := range r.OptimizedRoutes {
			stops := make([]string, 0, len(rt.RouteSequence))
			for _, st := range rt.RouteSequence {
				if st.ActivityType == "delivery" {
					stops = append(stops, st.DestinationID)
				}
			}
			routes = append(routes, assigned{rt.VehicleID, deref(rt.DriverID), stops, rt.RouteSummary.TotalDistance})
		}
	}
	evs := make([]*event.Event, 0, len(routes))
	for _, rt := range routes {
		data := map[string]any{"optimization_id": r.OptimizationID, "fleet_id": r.FleetID, "stops": rt.stops, "total_distance_km": rt.km}
		if r.AppliedPlan != nil {
			data["plan"] = *r.AppliedPlan
		}
		evs = append(evs, &event.Event{EventID: "evt_" + r.OptimizationID + "_" + rt.vehicle, EventType: "route_assigned", Category: event.CategoryOperational,
			Timestamp: now, Severity: "low", Priority: "normal", Source: event.Source{VehicleID: rt.vehicle, DriverID: rt.driver},
			EventData: data,
			Metadata:  event.Metadata{CorrelationID: r.OptimizationID, ProcessingTime: apitime.Format(now), SourceSystem: "fleethub.optimization"}})
	}
	return evs
}
