// Package geofences serves circle and polygon geofences of an
// organization over the geofence service (fleet/geofences): create,
// list, get, replace, delete. Vehicles entering and leaving them produce
// geofence_events (fleet/geofences/crossings).
//
// Handlers hold nothing but the service, set by New and only read
// afterwards; the service is safe for concurrent use, so the handlers
// serve any number of requests at once.
package geofences

import (
	"errors"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/geofences"
	"github.com/fleethub/fleethub/internal/store"
)

// ListView lists geofences.
type ListView struct {
	Geofences  []domain.View `json:"geofences"`
	Count      int           `json:"count" doc:"geofences on this page"`
	Pagination Pagination    `json:"pagination"`
}

// Pagination continues the listing, as the vehicle and contact
// listings do: NextCursor is null on the last page.
type Pagination struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more" doc:"true exactly when next_cursor is not null"`
	NextCursor *string `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
}

// Deleted answers a delete.
type Deleted struct {
	Success    bool   `json:"success"`
	GeofenceID string `json:"geofence_id"`
}

// Handlers serves geofences.
type Handlers struct {
	svc *domain.Service
}

// New makes the handlers.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the geofence routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "geofence_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/v1/geofences", Tag: "geofences", Summary: "Create a circle or polygon geofence", Permission: "fleet:write",
			Request: domain.Body{}, Response: domain.View{}, Status: 201, Handler: h.create},
		{Method: "GET", Path: "/v1/geofences", Tag: "geofences", Summary: "List geofences, oldest first (keyset cursors)", Permission: "fleet:read",
			Params: []api.Param{{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
				{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page"}},
			Response: ListView{}, Handler: h.list},
		{Method: "GET", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Get a geofence", Permission: "fleet:read", Params: id,
			Response: domain.View{}, Handler: h.get},
		{Method: "PUT", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Replace a geofence", Permission: "fleet:write", Params: id,
			Request: domain.Body{}, Response: domain.View{}, Handler: h.put},
		{Method: "DELETE", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Delete a geofence", Permission: "fleet:write", Params: id,
			Response: Deleted{}, Handler: h.delete},
	}
}

// mapErr turns the service's errors into API errors.
func mapErr(err error) error {
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("geofence_not_found", "geofence not found")
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	case errors.Is(err, domain.ErrMetadataTooLarge):
		return api.Errf("payload_too_large", "metadata must be at most 64 KB (65,536 bytes as JSON)").
			WithDetails(map[string]string{"metadata": "must be at most 64 KB (65,536 bytes as JSON)"})
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	}
	return err
}

func scope(c *api.Ctx) store.Scope {
	org, env := c.Scope()
	return store.Scope{Org: org, Env: env}
}

func bind(c *api.Ctx) (domain.Body, error) {
	var b domain.Body
	err := c.Bind(&b, false)
	return b, err
}

func (h *Handlers) create(c *api.Ctx) error {
	b, err := bind(c)
	if err != nil {
		return err
	}
	v, err := h.svc.Create(c.Context(), scope(c), b)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(201, v)
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	limit := 50
	if v := a.Peek("limit"); len(v) > 0 {
		l, ok := api.DecimalInt(v)
		if !ok || l < 1 || l > 200 {
			return api.Validation("invalid_request", map[string]string{"limit": "must be an integer from 1 to 200"})
		}
		limit = l
	}
	p, err := h.svc.ListPage(c.Context(), scope(c), string(a.Peek("cursor")), limit)
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, ListView{Geofences: p.Geofences, Count: len(p.Geofences),
		Pagination: Pagination{Limit: limit, HasMore: p.Next != nil, NextCursor: p.Next}})
}

func (h *Handlers) get(c *api.Ctx) error {
	v, err := h.svc.Get(c.Context(), scope(c), c.PathParam("geofence_id"))
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, v)
}

func (h *Handlers) put(c *api.Ctx) error {
	v, err := h.svc.Replace(c.Context(), scope(c), c.PathParam("geofence_id"), func() (domain.Body, error) { return bind(c) })
	if err != nil {
		return mapErr(err)
	}
	return c.JSON(200, v)
}

func (h *Handlers) delete(c *api.Ctx) error {
	id := c.PathParam("geofence_id")
	if err := h.svc.Delete(c.Context(), scope(c), id); err != nil {
		return mapErr(err)
	}
	return c.JSON(200, Deleted{Success: true, GeofenceID: id})
}
