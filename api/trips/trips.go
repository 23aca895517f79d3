// Package trips serves the trip and location upload endpoints over the
// trip domain service (fleet/trips).
package trips

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/ratelimit"
	gojson "github.com/goccy/go-json"
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
	switch {
	case err == nil:
		return nil
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
		return api.Errf("payload_too_large", "metadata must be under 64 KB")
	case errors.Is(err, domain.ErrBadCursor):
		return api.Errf("invalid_request", "cursor is not valid for this listing").WithDetails(map[string]string{"cursor": "invalid"})
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
		{Method: "GET", Path: "/v1/trips", Tag: "trips", Summary: "List trips (keyset cursors)", Permission: "trips:read",
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
				{Name: "status", In: "query", Type: "string", Enum: []string{"completed", "cancelled", "recording", "paused"}}},
			Response: HistoryResponse{}, Handler: h.history},
		{Method: "GET", Path: "/v1/trips/{trip_id}/route", Tag: "trips", Summary: "Route data of a trip: geometry, analytics, waypoints, traffic", Permission: "trips:read",
			Params: append(tripParam(), api.Param{Name: "include_waypoints", In: "query", Type: "boolean"}, api.Param{Name: "include_traffic_data", In: "query", Type: "boolean"},
				api.Param{Name: "include_alternatives", In: "query", Type: "boolean"}, api.Param{Name: "simplify_geometry", In: "query", Type: "boolean"},
				api.Param{Name: "geometry_precision", In: "query", Type: "integer", Description: "1-8, default 6"}),
			Response: domain.Route{}, Handler: h.route},
		{Method: "GET", Path: "/v1/analytics/safety-score/{trip_id}", Tag: "analytics", Summary: "Safety score analysis of a trip (at least 50 points and 10 minutes)",
			Permission: "analytics:read", Params: append(tripParam(), api.Param{Name: "include_breakdown", In: "query", Type: "boolean"},
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
	{Name: "start_date", In: "query", Type: "string", Description: "trips starting after this ISO 8601 time"},
	{Name: "end_date", In: "query", Type: "string", Description: "trips starting before this ISO 8601 time"},
	{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
	{Name: "cursor", In: "query", Type: "string"},
	{Name: "sort", In: "query", Type: "string", Enum: []string{"start_time", "end_time", "distance", "duration", "safety_score"}},
	{Name: "order", In: "query", Type: "string", Enum: []string{"asc", "desc"}},
	{Name: "include_analytics", In: "query", Type: "boolean"},
}

// HistoryResponse is the organization history answer.
type HistoryResponse struct {
	Success bool               `json:"success"`
	Data    domain.HistoryData `json:"data"`
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
		return api.Errf("payload_too_large", "metadata must be under 64 KB")
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

func (h *Handlers) history(c *api.Ctx) error {
	status := string(c.QueryArgs().Peek("status"))
	if status == "" {
		status = "completed"
	}
	if _, ok := domain.HistoryStatuses[status]; !ok {
		return &api.Error{Status: 400, Code: "invalid_request", Message: "status must be completed, cancelled, recording or paused"}
	}
	org, env := c.Scope()
	data, err := h.svc.History(c.Context(), org, env, c.PathParam("org_id"), status)
	if err != nil {
		return &api.Error{Status: 500, Code: "internal_error", Message: "Failed to fetch trip history", Cause: err}
	}
	return c.JSON(200, HistoryResponse{Success: true, Data: data})
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	q := domain.ListQuery{Limit: 50, Sort: "start_time", Order: "desc", IncludeAnalytics: true,
		OrganizationID: string(a.Peek("organization_id")), VehicleID: string(a.Peek("vehicle_id")), DriverID: string(a.Peek("driver_id")),
		Status: string(a.Peek("status")), Cursor: string(a.Peek("cursor"))}
	bad := map[string]string{}
	switch q.Status {
	case "", "active", "paused", "completed", "cancelled", "interrupted":
	default:
		bad["status"] = "must be active, paused, completed, cancelled or interrupted"
	}
	if v := a.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		q.Limit = n
	}
	if v := string(a.Peek("sort")); v != "" {
		switch v {
		case "start_time", "end_time", "distance", "duration", "safety_score":
			q.Sort = v
		default:
			bad["sort"] = "must be start_time, end_time, distance, duration or safety_score"
		}
	}
	if v := string(a.Peek("order")); v != "" {
		if v != "asc" && v != "desc" {
			bad["order"] = "must be asc or desc"
		}
		q.Order = v
	}
	if v := string(a.Peek("include_analytics")); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad["include_analytics"] = "must be true or false"
		}
		q.IncludeAnalytics = b
	}
	for _, d := range []struct {
		name string
		dst  **time.Time
	}{{"start_date", &q.StartDate}, {"end_date", &q.EndDate}} {
		if v := string(a.Peek(d.name)); v != "" {
			t, err := parseDate(v)
			if err != nil {
				bad[d.name] = "must be an ISO 8601 date or date-time"
				continue
			}
			*d.dst = &t
		}
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	if q.StartDate != nil && q.EndDate != nil && !q.StartDate.Before(*q.EndDate) {
		return api.Errf("invalid_date_range", "start_date must be before end_date").
			WithDetails(map[string]string{"start_date": q.StartDate.Format(time.RFC3339), "end_date": q.EndDate.Format(time.RFC3339)})
	}
	org, env := c.Scope()
	res, err := h.svc.List(c.Context(), org, env, q)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func parseDate(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02", v)
	return t.UTC(), err
}

// decodeFast decodes an upload body with goccy/go-json (about six times
// faster than encoding/json on 1,000-point batches, see
// docs/performance.md); on error it decodes again with encoding/json for
// the precise message.
func decodeFast(c *api.Ctx, v any) error {
	return decodeUpload(c.Request.Header.ContentType(), c.PostBody(), v)
}

// decodeUpload is decodeFast over the Content-Type and body. A body that
// is not a JSON object goes to api.DecodeJSON, which refuses it as every
// other route does: goccy/go-json, like encoding/json, takes null as {}.
func decodeUpload(contentType, body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return api.Errf("invalid_request", "request body is required")
	}
	if !api.IsJSON(contentType) {
		return api.Errf("unsupported_media_type", "Content-Type must be application/json")
	}
	if !isObject(body) {
		return api.DecodeJSON(body, v)
	}
	if err := gojson.Unmarshal(body, v); err != nil {
		return api.DecodeJSON(body, v)
	}
	return nil
}

// isObject reports whether body, past leading JSON whitespace, opens an
// object: the rule of api.DecodeJSON.
func isObject(body []byte) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func (h *Handlers) batch(c *api.Ctx) error {
	var r domain.BatchRequest
	if err := decodeFast(c, &r); err != nil {
		return err
	}
	if len(r.Locations) > domain.MaxBatch {
		return api.Errf("batch_too_large", "a batch carries at most %d points, got %d", domain.MaxBatch, len(r.Locations)).
			WithDetails(map[string]string{"locations": "at most 1000 points"})
	}
	org, env := c.Scope()
	res, err := h.svc.UploadBatch(c.Context(), org, env, &r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

func (h *Handlers) single(c *api.Ctx) error {
	var r domain.SingleRequest
	if err := decodeFast(c, &r); err != nil {
		return err
	}
	if r.TripID != "" && h.limiter != nil {
		res, err := h.limiter.Allow(c.Context(), "single:"+c.Principal.Org+":"+r.TripID, ratelimit.Limit{Rate: h.singleRate, Burst: h.singleRate, Window: time.Second})
		if err == nil && !res.Allowed {
			e := api.Errf("rate_limit_exceeded", "at most %d single uploads per second per trip", h.singleRate)
			e.RetryAfter = 1
			return e
		}
	}
	org, env := c.Scope()
	res, err := h.svc.UploadSingle(c.Context(), org, env, &r)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

// boolParam reads an optional boolean query parameter.
func boolParam(c *api.Ctx, name string, def bool, bad map[string]string) bool {
	v := string(c.QueryArgs().Peek(name))
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		bad[name] = "must be true or false"
	}
	return b
}

func (h *Handlers) route(c *api.Ctx) error {
	bad := map[string]string{}
	q := domain.RouteQuery{IncludeWaypoints: boolParam(c, "include_waypoints", true, bad), IncludeTrafficData: boolParam(c, "include_traffic_data", false, bad),
		IncludeAlternatives: boolParam(c, "include_alternatives", false, bad), SimplifyGeometry: boolParam(c, "simplify_geometry", true, bad), Precision: 6}
	if v := c.QueryArgs().Peek("geometry_precision"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 8 {
			bad["geometry_precision"] = "must be an integer from 1 to 8"
		}
		q.Precision = n
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	org, env := c.Scope()
	r, err := h.svc.Route(c.Context(), org, env, c.PathParam("trip_id"), q)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, r)
}

func (h *Handlers) safety(c *api.Ctx) error {
	bad := map[string]string{}
	br, bm := boolParam(c, "include_breakdown", true, bad), boolParam(c, "include_benchmarks", true, bad)
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	org, env := c.Scope()
	r, err := h.svc.SafetyScore(c.Context(), org, env, c.PathParam("trip_id"), br, bm)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, r)
}
