// Package vehicles serves vehicle profiles (fleet/vehicles): fleet
// membership and the fuel model of a vehicle's trips. The handlers decode
// a request, call the service and encode its answer or map its error.
//
// Handlers hold nothing but the service, set by New and only read
// afterwards; the service is safe for concurrent use, so the handlers
// serve any number of requests at once.
package vehicles

import (
	"errors"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/internal/store"
)

// Deleted answers a delete.
type Deleted struct {
	Success   bool   `json:"success"`
	VehicleID string `json:"vehicle_id"`
}

// Handlers serves vehicle profiles.
type Handlers struct {
	svc *domain.Service
}

// New makes the handlers.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the vehicle routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "vehicle_id", In: "path", Type: "string", Required: true, MaxLength: 200, Description: "the vehicle id trips and events carry, 1 to 200 characters"}}
	q := []api.Param{{Name: "fleet_id", In: "query", Type: "string", Description: "the vehicles of this fleet"},
		{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
		{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page, with the same filters; a cursor given with other filters is refused naming cursor"}}
	return []*api.Route{
		{Method: "PUT", Path: "/v1/vehicles/{vehicle_id}", Tag: "vehicles", Summary: "Create or replace a vehicle's profile (fleet, fuel model)", Permission: "fleet:write",
			Params: id, Request: domain.Body{}, Response: domain.Profile{}, Handler: h.put},
		{Method: "GET", Path: "/v1/vehicles/{vehicle_id}", Tag: "vehicles", Summary: "Get a vehicle's profile", Permission: "fleet:read",
			Params: id, Response: domain.Profile{}, Handler: h.get},
		{Method: "GET", Path: "/v1/vehicles", Tag: "vehicles", Summary: "List vehicle profiles in vehicle id order (keyset cursors)", Permission: "fleet:read",
			Params: q, Response: domain.List{}, Handler: h.list},
		{Method: "DELETE", Path: "/v1/vehicles/{vehicle_id}", Tag: "vehicles", Summary: "Delete a vehicle's profile", Permission: "fleet:write",
			Params: id, Response: Deleted{}, Handler: h.delete},
	}
}

// mapErr turns the service's errors into API errors.
func mapErr(err error) error {
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("vehicle_not_found", "vehicle not found")
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	}
	return err
}

func scope(c *api.Ctx) store.Scope {
	org, env := c.Scope()
	return store.Scope{Org: org, Env: env}
}

func (h *Handlers) put(c *api.Ctx) error {
	var b domain.Body
	empty, err := c.BindValues(&b, false)
	if err != nil {
		return err
	}
	if empty != nil {
		return api.Refused(empty, b.Check(c.PathParam("vehicle_id")))
	}
	p, err := h.svc.Put(c.Context(), scope(c), c.PathParam("vehicle_id"), b)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, p)
}

func (h *Handlers) get(c *api.Ctx) error {
	p, err := h.svc.Get(c.Context(), scope(c), c.PathParam("vehicle_id"))
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, p)
}

func (h *Handlers) delete(c *api.Ctx) error {
	id := c.PathParam("vehicle_id")
	if err := h.svc.Delete(c.Context(), scope(c), id); err != nil {
		return mapErr(err)
	}
	return c.JSON(200, Deleted{Success: true, VehicleID: id})
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	q := domain.Query{FleetID: string(a.Peek("fleet_id")), Cursor: string(a.Peek("cursor")), Limit: 50}
	if v := a.Peek("limit"); len(v) > 0 {
		l, ok := api.DecimalInt(v)
		if !ok || l < 1 || l > 200 {
			return api.Validation("invalid_request", map[string]string{"limit": "must be an integer from 1 to 200"})
		}
		q.Limit = l
	}
	out, err := h.svc.List(c.Context(), scope(c), q)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, out)
}
