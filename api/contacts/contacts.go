// Package contacts serves the people directory (fleet/contacts): the
// handlers decode a request, call the directory and encode its answer or
// map its error.
//
// Handlers hold nothing but the directory, set by New and only read
// afterwards; the Directory is safe for concurrent use, so the handlers
// serve any number of requests at once.
package contacts

import (
	"errors"
	"slices"
	"strings"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/internal/store"
)

// Handlers serves contacts.
type Handlers struct {
	dir *domain.Directory
}

// New makes the handlers.
func New(dir *domain.Directory) *Handlers { return &Handlers{dir: dir} }

func contactErr(err error) error {
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("not_found", "contact not found")
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	}
	return err
}

// Routes returns the contact routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "contact_id", In: "path", Type: "string", Required: true}}
	q := []api.Param{{Name: "role", In: "query", Type: "string", Enum: domain.Roles},
		{Name: "driver_id", In: "query", Type: "string", Description: "contacts linked to this driver"},
		{Name: "vehicle_id", In: "query", Type: "string", Description: "contacts linked to this vehicle"},
		{Name: "emergency_contact_for", In: "query", Type: "string", Description: "the emergency contacts of this driver"},
		{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
		{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page, with the same filters; a cursor given with other filters is refused naming cursor"}}
	return []*api.Route{
		{Method: "POST", Path: "/v1/contacts", Tag: "contacts", Summary: "Add a person to the directory", Permission: "fleet:write",
			Request: domain.Body{}, Response: domain.Contact{}, Status: 201, Handler: h.create},
		{Method: "GET", Path: "/v1/contacts", Tag: "contacts", Summary: "List the directory, oldest first (keyset cursors)", Permission: "fleet:read",
			Params: q, Response: domain.List{}, Handler: h.list},
		{Method: "GET", Path: "/v1/contacts/{contact_id}", Tag: "contacts", Summary: "Get a contact", Permission: "fleet:read",
			Params: id, Response: domain.Contact{}, Handler: h.get},
		{Method: "PUT", Path: "/v1/contacts/{contact_id}", Tag: "contacts", Summary: "Replace a contact", Permission: "fleet:write",
			Params: id, Request: domain.Body{}, Response: domain.Contact{}, Handler: h.replace},
		{Method: "DELETE", Path: "/v1/contacts/{contact_id}", Tag: "contacts", Summary: "Delete a contact", Permission: "fleet:write",
			Params: id, Response: domain.Deleted{}, Handler: h.delete},
		{Method: "PUT", Path: "/v1/contacts/{contact_id}/location", Tag: "contacts", Summary: "Report a contact's current location", Permission: "fleet:write",
			Params: id, Request: domain.Location{}, Response: domain.Contact{}, Handler: h.location},
	}
}

func scope(c *api.Ctx) store.Scope {
	org, env := c.Scope()
	return store.Scope{Org: org, Env: env}
}

func (h *Handlers) create(c *api.Ctx) error {
	var b domain.Body
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	out, err := h.dir.Create(c.Context(), scope(c), b)
	if err != nil {
		return contactErr(err)
	}
	return c.JSON(201, out)
}

func (h *Handlers) get(c *api.Ctx) error {
	out, err := h.dir.Get(c.Context(), scope(c), c.PathParam("contact_id"))
	if err != nil {
		return contactErr(err)
	}
	return c.JSON(200, out)
}

func (h *Handlers) replace(c *api.Ctx) error {
	var b domain.Body
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	out, err := h.dir.Replace(c.Context(), scope(c), c.PathParam("contact_id"), b)
	if err != nil {
		return contactErr(err)
	}
	return c.JSON(200, out)
}

func (h *Handlers) location(c *api.Ctx) error {
	var l domain.Location
	if err := c.Bind(&l, false); err != nil {
		return err
	}
	out, err := h.dir.SetLocation(c.Context(), scope(c), c.PathParam("contact_id"), l)
	if err != nil {
		return contactErr(err)
	}
	return c.JSON(200, out)
}

func (h *Handlers) delete(c *api.Ctx) error {
	id := c.PathParam("contact_id")
	if err := h.dir.Delete(c.Context(), scope(c), id); err != nil {
		return contactErr(err)
	}
	return c.JSON(200, domain.Deleted{Success: true, ContactID: id})
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	q := domain.Query{Role: string(a.Peek("role")), DriverID: string(a.Peek("driver_id")), VehicleID: string(a.Peek("vehicle_id")),
		EmergencyContactFor: string(a.Peek("emergency_contact_for")), Cursor: string(a.Peek("cursor")), Limit: 50}
	bad := map[string]string{}
	if q.Role != "" && !slices.Contains(domain.Roles, q.Role) {
		bad["role"] = "must be one of " + strings.Join(domain.Roles, ", ")
	}
	var given []string
	for _, f := range []struct{ name, v string }{{"driver_id", q.DriverID}, {"vehicle_id", q.VehicleID}, {"emergency_contact_for", q.EmergencyContactFor}} {
		if f.v != "" {
			given = append(given, f.name)
		}
	}
	if len(given) > 1 {
		// each one given is named: none of them alone is at fault
		for _, name := range given {
			bad[name] = "give at most one of driver_id, vehicle_id and emergency_contact_for"
		}
	}
	if v := a.Peek("limit"); len(v) > 0 {
		l, ok := api.DecimalInt(v)
		if !ok || l < 1 || l > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		q.Limit = l
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	out, err := h.dir.List(c.Context(), scope(c), q)
	if err != nil {
		return contactErr(err)
	}
	return c.JSON(200, out)
}
