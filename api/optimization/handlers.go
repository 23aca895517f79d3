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
	"math"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Place is a location.
type Place struct {
	Latitude  *float64 `json:"latitude" required:"true"`
	Longitude *float64 `json:"longitude" required:"true"`
	Address   string   `json:"address,omitempty"`
}

// Capacity of a vehicle; missing fields are unconstrained.
type Capacity struct {
	Weight   *float64 `json:"weight,omitempty"`
	Volume   *float64 `json:"volume,omitempty"`
	Packages *float64 `json:"packages,omitempty"`
}

// Vehicle of the request.
type Vehicle struct {
	VehicleID     string    `json:"vehicle_id" required:"true"`
	Capacity      *Capacity `json:"capacity,omitempty"`
	StartLocation *Place    `json:"start_location" required:"true"`
	EndLocation   *Place    `json:"end_location,omitempty"`
	DriverID      string    `json:"driver_id,omitempty"`
	ShiftStart    string    `json:"shift_start,omitempty" doc:"HH:MM, default 08:00"`
	ShiftEnd      string    `json:"shift_end,omitempty" doc:"HH:MM, default 18:00"`
	VehicleType   string    `json:"vehicle_type,omitempty"`
	Restrictions  []string  `json:"restrictions,omitempty"`
}

// Requirements of a delivery.
type Requirements struct {
	Weight          float64  `json:"weight,omitempty"`
	Volume          float64  `json:"volume,omitempty"`
	Packages        float64  `json:"packages,omitempty"`
	SpecialHandling []string `json:"special_handling,omitempty"`
}

// Window is a time window.
type Window struct {
	Earliest        string  `json:"earliest,omitempty" doc:"HH:MM"`
	Latest          string  `json:"latest,omitempty" doc:"HH:MM"`
	ServiceDuration float64 `json:"service_duration,omitempty" doc:"minutes, default 5"`
}

// Destination of the request.
type Destination struct {
	DestinationID        string        `json:"destination_id" required:"true"`
	Location             *Place        `json:"location" required:"true"`
	DeliveryRequirements *Requirements `json:"delivery_requirements,omitempty"`
	TimeWindow           *Window       `json:"time_window,omitempty"`
	Priority             string        `json:"priority,omitempty" enum:"low,normal,high,urgent"`
	CustomerID           string        `json:"customer_id,omitempty"`
	DeliveryNotes        string        `json:"delivery_notes,omitempty"`
}

// Constraints of the request.
type Constraints struct {
	MaxRouteDuration        float64         `json:"max_route_duration,omitempty" doc:"minutes"`
	MaxRouteDistance        float64         `json:"max_route_distance,omitempty" doc:"kilometers"`
	DriverBreakRequirements bool            `json:"driver_break_requirements,omitempty"`
	VehicleCapacityStrict   bool            `json:"vehicle_capacity_strict,omitempty"`
	TimeWindowViolations    string          `json:"time_window_violations,omitempty" enum:"none,allow" doc:"allow: a late arrival is counted, not refused"`
	TrafficRestrictions     map[string]bool `json:"traffic_restrictions,omitempty"`
	FuelEfficiencyPriority  float64         `json:"fuel_efficiency_priority,omitempty"`
	DeliveryTimePriority    float64         `json:"delivery_time_priority,omitempty"`
	CostPriority            float64         `json:"cost_priority,omitempty"`
}

// Request is POST /api/v1/fleet/optimization/routes.
type Request struct {
	FleetID           string        `json:"fleet_id" required:"true"`
	Vehicles          []Vehicle     `json:"vehicles" required:"true"`
	Destinations      []Destination `json:"destinations" required:"true"`
	Constraints       *Constraints  `json:"constraints,omitempty"`
	OptimizationGoals []string      `json:"optimization_goals,omitempty"`
	TimeWindows       *bool         `json:"time_windows,omitempty"`
	RealTimeTraffic   *bool         `json:"real_time_traffic,omitempty"`
	DriverPreferences bool          `json:"driver_preferences,omitempty"`
}

var goals = []string{"minimize_time", "minimize_distance", "minimize_fuel", "minimize_cost", "maximize_efficiency", "balance_workload", "maximize_service_quality"}

func hhmm(s string, def float64) (float64, bool) {
	if s == "" {
		return def, true
	}
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, false
	}
	return float64(t.Hour()*60 + t.Minute()), true
}

func clock(m float64) string {
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return ""
	}
	mm := int(math.Round(m))
	return fmt.Sprintf("%02d:%02d", (mm/60)%24, mm%60)
}

func place(bad map[string]string, field string, p *Place) (float64, float64) {
	if p == nil || p.Latitude == nil || p.Longitude == nil {
		bad[field] = "latitude and longitude are required"
		return 0, 0
	}
	if *p.Latitude < -90 || *p.Latitude > 90 || *p.Longitude < -180 || *p.Longitude > 180 || math.IsNaN(*p.Latitude) || math.IsNaN(*p.Longitude) {
		bad[field] = "latitude -90..90, longitude -180..180"
	}
	return *p.Latitude, *p.Longitude
}

func capOf(v *float64) float64 {
	if v == nil {
		return math.Inf(1)
	}
	return *v
}

var prio = map[string]int{"low": 0, "": 1, "normal": 1, "high": 2, "urgent": 3}

// build validates a request into a problem.
func build(r *Request) (*vrp.Problem, map[string]string) {
	bad := map[string]string{}
	if strings.TrimSpace(r.FleetID) == "" {
		bad["fleet_id"] = "is required"
	}
	if len(r.Vehicles) == 0 || len(r.Vehicles) > 200 {
		bad["vehicles"] = "1 to 200 vehicles are required"
	}
	if len(r.Destinations) == 0 || len(r.Destinations) > 1000 {
		bad["destinations"] = "1 to 1000 destinations are required"
	}
	for i, g := range r.OptimizationGoals {
		if !contains(goals, g) {
			bad[fmt.Sprintf("optimization_goals[%d]", i)] = "must be one of " + strings.Join(goals, ", ")
		}
	}
	pr := &vrp.Problem{}
	c := r.Constraints
	if c != nil {
		switch c.TimeWindowViolations {
		case "", "none":
		case "allow":
			pr.AllowLate = true
		default:
			bad["constraints.time_window_violations"] = "must be none or allow"
		}
		if c.MaxRouteDuration < 0 || c.MaxRouteDistance < 0 {
			bad["constraints"] = "max_route_duration and max_route_distance must not be negative"
		}
	}
	seen := map[string]bool{}
	for i, v := range r.Vehicles {
		f := fmt.Sprintf("vehicles[%d]", i)
		if v.VehicleID == "" || seen["v"+v.VehicleID] {
			bad[f+".vehicle_id"] = "is required and unique"
		}
		seen["v"+v.VehicleID] = true
		fv := vrp.Vehicle{CapWeight: math.Inf(1), CapVolume: math.Inf(1), CapPackages: math.Inf(1), MaxMinutes: math.Inf(1), MaxKm: math.Inf(1)}
		fv.StartLat, fv.StartLon = place(bad, f+".start_location", v.StartLocation)
		fv.EndLat, fv.EndLon = fv.StartLat, fv.StartLon
		if v.EndLocation != nil {
			fv.EndLat, fv.EndLon = place(bad, f+".end_location", v.EndLocation)
		}
		if v.Capacity != nil {
			fv.CapWeight, fv.CapVolume, fv.CapPackages = capOf(v.Capacity.Weight), capOf(v.Capacity.Volume), capOf(v.Capacity.Packages)
		}
		var ok1, ok2 bool
		fv.ShiftStart, ok1 = hhmm(v.ShiftStart, 8*60)
		fv.ShiftEnd, ok2 = hhmm(v.ShiftEnd, 18*60)
		if !ok1 || !ok2 || fv.ShiftEnd <= fv.ShiftStart {
			bad[f+".shift_start"] = "shift_start and shift_end are HH:MM with start before end"
		}
		if c != nil && c.MaxRouteDuration > 0 {
			fv.MaxMinutes = c.MaxRouteDuration
		}
		if c != nil && c.MaxRouteDistance > 0 {
			fv.MaxKm = c.MaxRouteDistance
		}
		pr.Vehicles = append(pr.Vehicles, fv)
	}
	useWindows := r.TimeWindows == nil || *r.TimeWindows
	for i, d := range r.Destinations {
		f := fmt.Sprintf("destinations[%d]", i)
		if d.DestinationID == "" || seen["d"+d.DestinationID] {
			bad[f+".destination_id"] = "is required and unique"
		}
		seen["d"+d.DestinationID] = true
		st := vrp.Stop{Early: 0, Late: math.Inf(1), Service: 5}
		st.Lat, st.Lon = place(bad, f+".location", d.Location)
		if q := d.DeliveryRequirements; q != nil {
			if q.Weight < 0 || q.Volume < 0 || q.Packages < 0 {
				bad[f+".delivery_requirements"] = "must not be negative"
			}
			st.Weight, st.Volume, st.Packages = q.Weight, q.Volume, q.Packages
		}
		if tw := d.TimeWindow; tw != nil {
			e, ok1 := hhmm(tw.Earliest, 0)
			l, ok2 := hhmm(tw.Latest, math.Inf(1))
			if !ok1 || !ok2 || l < e || tw.ServiceDuration < 0 {
				bad[f+".time_window"] = "earliest and latest are HH:MM, earliest not after latest, service_duration not negative"
			}
			if useWindows {
				st.Early, st.Late = e, l
			}
			if tw.ServiceDuration > 0 {
				st.Service = tw.ServiceDuration
			}
		}
		p, ok := prio[d.Priority]
		if !ok {
			bad[f+".priority"] = "must be low, normal, high or urgent"
		}
		st.Priority = p
		pr.Stops = append(pr.Stops, st)
	}
	return pr, bad
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Service runs and stores optimizations.
type Service struct {
	st  store.Optimizations
	pub interface {
		Publish(ctx context.Context, msgs ...hub.Message) error
	}
	now    func() time.Time
	budget time.Duration
}

// New makes the service; pub may be nil.
func New(st store.Optimizations, pub interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}) *Service {
	return &Service{st: st, pub: pub, now: time.Now, budget: 2 * time.Second}
}

// Routes returns the optimization routes.
func (s *Service) Routes() []*api.Route {
	id := []api.Param{{Name: "optimization_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/api/v1/fleet/optimization/routes", Tag: "optimization", Summary: "Plan multi-vehicle routes (capacities, time windows, shifts)",
			Permission: "fleet:write", Request: Request{}, Response: Response{}, Handler: s.optimize},
		{Method: "GET", Path: "/api/v1/fleet/optimization/{optimization_id}", Tag: "optimization", Summary: "A stored optimization", Permission: "fleet:read",
			Params: id, Response: Response{}, Handler: s.get},
		{Method: "PUT", Path: "/api/v1/fleet/optimization/{optimization_id}/apply", Tag: "optimization", Summary: "Apply an optimization: marks it applied and emits route assignments",
			Permission: "fleet:write", Params: id, Response: Response{}, Errors: []int{409}, Handler: s.apply},
	}
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
	pr, bad := build(&r)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	start := time.Now()
	sol := pr.Solve(vrp.Options{TimeLimit: s.budget})
	took := time.Since(start)
	res := assemble(&r, pr, pr.Plan(sol), took)
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
		var msgs []hub.Message
		for _, rt := range r.OptimizedRoutes {
			stops := make([]string, 0, len(rt.RouteSequence))
			for _, st := range rt.RouteSequence {
				stops = append(stops, st.DestinationID)
			}
			ev := &event.Event{EventID: "evt_" + r.OptimizationID + "_" + rt.VehicleID, EventType: "route_assigned", Category: event.CategoryOperational,
				Timestamp: now, Severity: "low", Priority: "normal", Source: event.Source{VehicleID: rt.VehicleID, DriverID: rt.DriverID},
				EventData: map[string]any{"optimization_id": r.OptimizationID, "fleet_id": r.FleetID, "stops": stops, "total_distance_km": rt.RouteSummary.TotalDistance},
				Metadata:  event.Metadata{CorrelationID: r.OptimizationID, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.optimization"}}
			if b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: now}); err == nil {
				msgs = append(msgs, hub.Message{Topic: hub.TopicEvents, Key: []byte(rt.VehicleID), Value: b})
			}
		}
		if len(msgs) > 0 {
			if err := s.pub.Publish(c.Context(), msgs...); err != nil {
				return api.Internal(err)
			}
		}
	}
	return c.JSON(200, Response{Success: true, Data: r})
}
