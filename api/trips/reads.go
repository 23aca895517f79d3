package trips

import (
	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
)

// HistoryResponse is the organization history answer.
type HistoryResponse struct {
	Success bool               `json:"success"`
	Data    domain.HistoryData `json:"data"`
}

func (h *Handlers) history(c *api.Ctx) error {
	status := string(c.QueryArgs().Peek("status"))
	if status == "" {
		status = "completed"
	}
	if _, ok := domain.HistoryStatuses[status]; !ok {
		return &api.Error{Status: 400, Code: "invalid_request", Message: "status must be completed, cancelled, interrupted, recording or paused"}
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
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 200 {
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
	q.IncludeAnalytics = boolParam(c, "include_analytics", true, bad)
	if t, ok := api.DateQuery(c, "start_date", bad); ok {
		q.StartDate = &t
	}
	if t, ok := api.DateQueryEnd(c, "end_date", bad); ok {
		q.EndDate = &t
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	if q.StartDate != nil && q.EndDate != nil && !q.StartDate.Before(*q.EndDate) {
		return api.DateRange("start_date", *q.StartDate, "end_date", *q.EndDate)
	}
	org, env := c.Scope()
	res, err := h.svc.List(c.Context(), org, env, q)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, res)
}

// boolParam reads an optional boolean query parameter: true or false,
// as the OpenAPI document's boolean is written in a query (1, t or TRUE
// are refused, never guessed at).
func boolParam(c *api.Ctx, name string, def bool, bad map[string]string) bool {
	switch v := string(c.QueryArgs().Peek(name)); v {
	case "":
		return def
	case "true":
		return true
	case "false":
		return false
	}
	bad[name] = "must be true or false"
	return def
}

func (h *Handlers) route(c *api.Ctx) error {
	bad := map[string]string{}
	q := domain.RouteQuery{IncludeWaypoints: boolParam(c, "include_waypoints", true, bad), IncludeTrafficData: boolParam(c, "include_traffic_data", false, bad),
		IncludeAlternatives: boolParam(c, "include_alternatives", false, bad), SimplifyGeometry: boolParam(c, "simplify_geometry", true, bad), Precision: 6}
	if v := c.QueryArgs().Peek("geometry_precision"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 8 {
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
