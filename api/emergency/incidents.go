// Package emergency serves emergency incidents and alerts over the
// emergency domain service (fleet/emergency): the handlers decode a
// request, call the service and encode its answer or map its error.
//
// Handlers, Alerts and Gateway hold nothing but what New gives them (the
// incidents or alerts service; the secret store and the gateway URL),
// only read afterwards; the services and the store are safe for
// concurrent use, so the handlers serve any number of requests at once.
package emergency

import (
	"errors"
	"slices"
	"strings"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/store"
)

// Handlers serves incidents.
type Handlers struct {
	svc *domain.Incidents
}

// New makes the handlers.
func New(svc *domain.Incidents) *Handlers { return &Handlers{svc: svc} }

// incidentErr turns the service's errors into API errors.
func incidentErr(err error) error {
	var te *domain.TransitionError
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, domain.ErrIncidentNotFound):
		return api.Errf("incident_not_found", "incident not found")
	case errors.Is(err, domain.ErrIncidentChanged):
		return api.Errf("invalid_state_transition", "the incident kept changing under this request; read it and send the change again")
	case errors.As(err, &te):
		return api.Errf("invalid_state_transition", "an incident that is %s cannot become %s", te.From, te.To).
			WithDetails(map[string]string{"status": te.From})
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	}
	return err
}

// Routes returns the incident routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "incident_id", In: "path", Type: "string", Required: true}}
	q := []api.Param{{Name: "status", In: "query", Type: "string", Enum: domain.Statuses}, {Name: "severity", In: "query", Type: "string", Enum: domain.Severities},
		{Name: "event_type", In: "query", Type: "string", Enum: domain.EventTypes}, {Name: "fleet_id", In: "query", Type: "string"}, {Name: "driver_id", In: "query", Type: "string"},
		{Name: "date_from", In: "query", Type: "string", Format: "date-time", Description: "incidents created at or after this ISO 8601 date-time, or a date alone (its midnight UTC)"}, {Name: "date_to", In: "query", Type: "string", Format: "date-time", Description: "incidents created at or before this ISO 8601 date-time, or a date alone (the whole of that day UTC)"},
		{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"}, {Name: "offset", In: "query", Type: "integer"}}
	return []*api.Route{
		{Method: "GET", Path: "/v1/emergency/incidents", Tag: "emergency", Summary: "List incidents, newest first", Permission: "emergency:read", TokenScope: api.ConsoleReadScope,
			Params: q, Response: domain.ListResponse{}, Handler: h.list},
		{Method: "POST", Path: "/v1/emergency/incidents", Tag: "emergency", Summary: "Report an incident (panic button, manual report)", Permission: "emergency:write",
			Request: domain.ReportBody{}, Response: domain.Incident{}, Status: 201, Handler: h.report},
		{Method: "GET", Path: "/v1/emergency/incidents/{incident_id}", Tag: "emergency", Summary: "Get an incident", Permission: "emergency:read",
			Params: id, Response: domain.Incident{}, Handler: h.get},
		{Method: "PUT", Path: "/v1/emergency/incidents/{incident_id}/status", Tag: "emergency", Summary: "Change an incident's status",
			Permission: "emergency:write", Params: id, Request: domain.StatusBody{}, Response: domain.Incident{}, Errors: []int{409}, Handler: h.status},
		{Method: "GET", Path: "/v1/share/incidents/{token}", Tag: "emergency", Summary: "An incident's share link (live_tracking.share_location_url): its place, state and vehicle's last position, read-only, no key, until it expires",
			Auth: api.AuthNone, Params: []api.Param{{Name: "token", In: "path", Type: "string", Required: true}}, Response: domain.SharedIncident{}, Errors: []int{404, 410}, Handler: h.shared},
	}
}

func (h *Handlers) shared(c *api.Ctx) error {
	v, err := h.svc.Shared(c.Context(), c.PathParam("token"))
	switch {
	case errors.Is(err, domain.ErrShareNotFound):
		return api.Errf("share_link_not_found", "share link not found")
	case errors.Is(err, domain.ErrShareExpired):
		return api.Errf("share_link_expired", "this share link has expired")
	case err != nil:
		return err
	}
	c.Response.Header.Set("Cache-Control", "no-store")
	return c.JSON(200, v)
}

// shareURL makes an incident's share link an absolute address on the
// host the client reached (https behind TLS or a proxy that says so), as
// a tile archive's url and a stream's websocket_url are: the incident
// keeps the link's path, which any host of the service serves.
func shareURL(c *api.Ctx, in *domain.Incident) {
	if u := in.LiveTracking.ShareLocationURL; u != nil && strings.HasPrefix(*u, "/") {
		abs := c.AbsoluteURL(*u)
		in.LiveTracking.ShareLocationURL = &abs
	}
}

func scope(c *api.Ctx) store.Scope {
	org, env := c.Scope()
	return store.Scope{Org: org, Env: env}
}

func (h *Handlers) report(c *api.Ctx) error {
	var b domain.ReportBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	in, err := h.svc.Report(c.Context(), scope(c), c.Principal.KeyID, b)
	if err != nil {
		return incidentErr(err)
	}
	shareURL(c, &in)
	return c.JSON(201, in)
}

func (h *Handlers) get(c *api.Ctx) error {
	in, err := h.svc.Get(c.Context(), scope(c), c.PathParam("incident_id"))
	if err != nil {
		return incidentErr(err)
	}
	shareURL(c, &in)
	return c.JSON(200, in)
}

func (h *Handlers) status(c *api.Ctx) error {
	var b domain.StatusBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	in, err := h.svc.SetStatus(c.Context(), scope(c), c.PathParam("incident_id"), c.Principal.KeyID, b)
	if err != nil {
		return incidentErr(err)
	}
	shareURL(c, &in)
	return c.JSON(200, in)
}

func (h *Handlers) list(c *api.Ctx) error {
	f, err := listFilter(c)
	if err != nil {
		return err
	}
	out, err := h.svc.List(c.Context(), f)
	if err != nil {
		return err
	}
	for i := range out.Incidents {
		shareURL(c, &out.Incidents[i])
	}
	return c.JSON(200, out)
}

// listFilter decodes the listing's query; every bad parameter is named.
func listFilter(c *api.Ctx) (store.IncidentFilter, error) {
	a := c.QueryArgs()
	f := store.IncidentFilter{Status: string(a.Peek("status")), Severity: string(a.Peek("severity")), EventType: string(a.Peek("event_type")),
		FleetID: string(a.Peek("fleet_id")), DriverID: string(a.Peek("driver_id")), Limit: 50}
	bad := map[string]string{}
	if f.Status != "" && !slices.Contains(domain.Statuses, f.Status) {
		bad["status"] = enum.Refusal(domain.Statuses...)
	}
	if f.Severity != "" && !slices.Contains(domain.Severities, f.Severity) {
		bad["severity"] = enum.Refusal(domain.Severities...)
	}
	if f.EventType != "" && !slices.Contains(domain.EventTypes, f.EventType) {
		bad["event_type"] = enum.Refusal(domain.EventTypes...)
	}
	if t, ok := api.DateQuery(c, "date_from", bad); ok {
		f.From = t
	}
	if t, ok := api.DateQueryEnd(c, "date_to", bad); ok {
		f.To = t
	}
	if v := a.Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		f.Limit = n
	}
	if v := a.Peek("offset"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 0 {
			bad["offset"] = "must be an integer of 0 or more"
		}
		f.Offset = n
	}
	if len(bad) > 0 {
		return f, api.Validation("invalid_request", bad)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, api.DateRange("date_from", f.From, "date_to", f.To)
	}
	f.Scope = scope(c)
	return f, nil
}
