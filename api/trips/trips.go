// Package trips serves the trip and location upload endpoints over the
// trip domain service (fleet/trips).
//
// Handlers hold the trip service and the limiter of single uploads, set
// by New and only read afterwards; both are safe for concurrent use (the
// service itself serializes the uploads and transitions of one trip), so
// the handlers serve any number of requests at once.
package trips

import (
	"context"
	"errors"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// Limiter limits single uploads per trip.
type Limiter interface {
	Allow(ctx context.Context, key string, lim ratelimit.Limit) (ratelimit.Result, error)
}

// Handlers serves the trip routes.
type Handlers struct {
	svc     *domain.Service
	limiter Limiter
	// SingleRate is the per-trip single upload limit per second (10).
	singleRate int
}

// New makes the handlers.
func New(svc *domain.Service, limiter Limiter) *Handlers {
	return &Handlers{svc: svc, limiter: limiter, singleRate: 10}
}

// mapErr turns domain errors into API errors.
func mapErr(err error) error {
	var te *domain.TransitionError
	var ve *domain.ValidationError
	var se *domain.ShortDataError
	var ae *domain.AlreadyActiveError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae):
		return api.Errf("trip_already_active", "this vehicle already has an open trip, %s (%s): stop it before starting another", ae.TripID, ae.Status).
			WithDetails(map[string]string{"vehicle_id": ae.VehicleID, "trip_id": ae.TripID, "status": ae.Status})
	case errors.As(err, &se):
		return api.Errf("trip_not_found", "%s", se.Message).WithDetails(se.Fields)
	case errors.Is(err, domain.ErrInsufficientData):
		return api.Errf("trip_not_found", "trip not found or without enough location data")
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("trip_not_found", "trip not found")
	case errors.Is(err, domain.ErrAlreadyActive):
		return api.Errf("trip_already_active", "this vehicle already has an active or paused trip")
	case errors.As(err, &te):
		return api.Errf("invalid_state_transition", "cannot %s a trip that is %s", te.Action, te.From).
			WithDetails(map[string]string{"status": te.From})
	case errors.As(err, &ve):
		return api.Validation(ve.Code, ve.Fields)
	case errors.Is(err, domain.ErrMetadataTooLarge):
		return api.Errf("payload_too_large", "metadata must be at most 64 KB (65,536 bytes as JSON)").
			WithDetails(map[string]string{"metadata": "must be at most 64 KB (65,536 bytes as JSON)"})
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	}
	return err
}

func tripParam() []api.Param {
	return []api.Param{{Name: "trip_id", In: "path", Type: "string", Required: true}}
}

// Routes returns the trip and upload routes.
func (h *Handlers) Routes() []*api.Route {
	conflict := []int{404, 409}
	return []*api.Route{
		{Method: "POST", Path: "/v1/trips", Tag: "trips", Summary: "Start a trip", Permission: "trips:write",
			Request: domain.StartRequest{}, Response: domain.Trip{}, Status: 201, Errors: []int{409}, Handler: h.start},
		{Method: "GET", Path: "/v1/trips", Tag: "trips", Summary: "List trips (keyset cursors)", Permission: "trips:read", TokenScope: api.ConsoleReadScope,
			Params: listParams, Response: domain.ListResult{}, Handler: h.list},
		{Method: "GET", Path: "/v1/trips/{trip_id}", Tag: "trips", Summary: "Get a trip with full analytics and metadata", Permission: "trips:read",
			Params: tripParam(), Response: domain.Trip{}, Handler: h.get},
		{Method: "POST", Path: "/v1/trips/{trip_id}/pause", Tag: "trips", Summary: "Pause an active trip", Permission: "trips:write",
			Params: tripParam(), Request: domain.PauseRequest{}, Response: domain.PauseResult{}, Errors: conflict, Handler: h.pause},
		{Method: "POST", Path: "/v1/trips/{trip_id}/resume", Tag: "trips", Summary: "Resume a paused trip", Permission: "trips:write",
			Params: tripParam(), Request: domain.ResumeRequest{}, Response: domain.ResumeResult{}, Errors: conflict, Handler: h.resume},
		{Method: "POST", Path: "/v1/trips/{trip_id}/stop", Tag: "trips", Summary: "Stop a trip and finalize its analytics", Permission: "trips:write",
			Params: tripParam(), Request: domain.StopRequest{}, Response: domain.StopResult{}, Errors: conflict, Handler: h.stop},
		{Method: "PUT", Path: "/v1/trips/{trip_id}/metadata", Tag: "trips", Summary: "Merge or replace trip metadata", Permission: "trips:write",
			Params: tripParam(), Request: domain.MetadataRequest{}, Response: domain.MetadataResult{}, Handler: h.metadata},
		{Method: "GET", Path: "/v1/organizations/{org_id}/trips/history", Tag: "trips", Summary: "Organization trip history (at most 100, newest first)",
			Permission: "trips:read", Auth: api.AuthKeyPlain,
			Params: []api.Param{{Name: "org_id", In: "path", Type: "string", Required: true},
				{Name: "status", In: "query", Type: "string", Enum: []string{"completed", "cancelled", "interrupted", "recording", "paused"},
					Description: "default completed; recording: active trips; interrupted is beyond the interface's values, so that interrupted trips can be found"}},
			Response: HistoryResponse{}, Handler: h.history},
		{Method: "GET", Path: "/v1/trips/{trip_id}/route", Tag: "trips", Summary: "Route data of a trip: geometry, analytics, waypoints, traffic", Permission: "trips:read", TokenScope: api.ConsoleReadScope,
			Params: append(tripParam(), api.Param{Name: "include_waypoints", In: "query", Type: "boolean"}, api.Param{Name: "include_traffic_data", In: "query", Type: "boolean"},
				api.Param{Name: "include_alternatives", In: "query", Type: "boolean"}, api.Param{Name: "simplify_geometry", In: "query", Type: "boolean"},
				api.Param{Name: "geometry_precision", In: "query", Type: "integer", Description: "1-8, default 6"}),
			Response: domain.Route{}, Handler: h.route},
		{Method: "GET", Path: "/v1/analytics/safety-score/{trip_id}", Tag: "analytics", Summary: "Safety score analysis of a trip (at least 50 points and 10 minutes)",
			Permission: "analytics:read", TokenScope: api.ConsoleReadScope, Params: append(tripParam(), api.Param{Name: "include_breakdown", In: "query", Type: "boolean"},
				api.Param{Name: "include_benchmarks", In: "query", Type: "boolean"}),
			Response: domain.SafetyAnalysis{}, Handler: h.safety},
		{Method: "POST", Path: "/v1/locations/batch", Tag: "locations", Summary: "Upload up to 1,000 points to an active trip", Permission: "locations:write",
			Request: domain.BatchRequest{}, Response: domain.BatchResult{}, Errors: conflict, Handler: h.batch},
		{Method: "POST", Path: "/v1/locations/single", Tag: "locations", Summary: "Upload one point (at most 10 per second per trip)", Permission: "locations:write",
			Request: domain.SingleRequest{}, Response: domain.SingleResult{}, Errors: conflict, Handler: h.single},
	}
}

var listParams = []api.Param{
	{Name: "organization_id", In: "query", Type: "string"},
	{Name: "vehicle_id", In: "query", Type: "string"},
	{Name: "driver_id", In: "query", Type: "string"},
	{Name: "status", In: "query", Type: "string", Enum: []string{"active", "paused", "completed", "cancelled", "interrupted"}},
	{Name: "start_date", In: "query", Type: "string", Format: "date-time", Description: "trips starting at or after this ISO 8601 date-time, or a date alone (its midnight UTC)"},
	{Name: "end_date", In: "query", Type: "string", Format: "date-time", Description: "trips starting at or before this ISO 8601 date-time, or a date alone (the whole of that day UTC)"},
	{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
	{Name: "cursor", In: "query", Type: "string", Description: "next_cursor or prev_cursor of a page of this listing, with the same filters, sort and order (another limit is fine); a cursor given with other filters is refused naming cursor"},
	{Name: "sort", In: "query", Type: "string", Enum: []string{"start_time", "end_time", "distance", "duration", "safety_score"}},
	{Name: "order", In: "query", Type: "string", Enum: []string{"asc", "desc"}},
	{Name: "include_analytics", In: "query", Type: "boolean"},
}

func actor(c *api.Ctx) string { return c.Principal.KeyID }

func (h *Handlers) start(c *api.Ctx) error {
	var r domain.StartRequest
	if err := c.Bind(&r, false); err != nil {
		return err
	}
	org, env := c.Scope()
	t, err := h.svc.Start(c.Context(), org, env, actor(c), r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(201, t)
}

func (h *Handlers) get(c *api.Ctx) error {
	org, env := c.Scope()
	t, err := h.svc.Get(c.Context(), org, env, c.PathParam("trip_id"))
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, t)
}

func (h *Handlers) pause(c *api.Ctx) error {
	var r domain.PauseRequest
	if err := c.Bind(&r, true); err != nil {
		return err
	}
	org, env := c.Scope()
	res, err := h.svc.Pause(c.Context(), org, env, c.PathParam("trip_id"), r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func (h *Handlers) resume(c *api.Ctx) error {
	var r domain.ResumeRequest
	if err := c.Bind(&r, true); err != nil {
		return err
	}
	org, env := c.Scope()
	res, err := h.svc.Resume(c.Context(), org, env, c.PathParam("trip_id"), r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func (h *Handlers) stop(c *api.Ctx) error {
	var r domain.StopRequest
	if err := c.Bind(&r, true); err != nil {
		return err
	}
	org, env := c.Scope()
	res, err := h.svc.Stop(c.Context(), org, env, c.PathParam("trip_id"), r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func (h *Handlers) metadata(c *api.Ctx) error {
	if len(c.PostBody()) > domain.MaxMetadataBytes+4096 {
		return api.Errf("payload_too_large", "metadata must be at most 64 KB (65,536 bytes as JSON)").
			WithDetails(map[string]string{"metadata": "must be at most 64 KB (65,536 bytes as JSON)"})
	}
	var r domain.MetadataRequest
	if err := c.Bind(&r, false); err != nil {
		return err
	}
	org, env := c.Scope()
	res, err := h.svc.UpdateMetadata(c.Context(), org, env, c.PathParam("trip_id"), actor(c), r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}
