// Package devices serves device settings over the device settings service
// (fleet/devices): PUT merges and validates a device's settings and
// answers the applied record, GET reads it back.
//
// Handlers hold nothing but the service, set by New and only read
// afterwards; the service is safe for concurrent use, so the handlers
// serve any number of requests at once.
package devices

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/internal/store"
)

// Handlers serves the device routes.
type Handlers struct {
	svc *domain.Service
}

// New makes the handlers.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the device routes.
func (h *Handlers) Routes() []*api.Route {
	p := []api.Param{{Name: "device_id", In: "path", Type: "string", Required: true, MaxLength: 200}}
	return []*api.Route{
		{Method: "PUT", Path: "/v1/devices/{device_id}/settings", Tag: "devices", Summary: "Apply device settings (merged into the current ones as a JSON merge patch: null clears a setting or a group)", Permission: "devices:manage",
			Params: p, Request: domain.Settings{}, Response: domain.Applied{}, Handler: h.put},
		{Method: "GET", Path: "/v1/devices/{device_id}/settings", Tag: "devices", Summary: "The applied settings record, current version", Permission: "devices:manage",
			Params: p, Response: domain.Applied{}, Handler: h.get},
	}
}

// decode reads the settings strictly: an unknown setting or a value of
// the wrong type is named. cleared are the settings and groups sent as
// null, by dotted path: a null clears what it names (JSON merge patch).
func decode(c *api.Ctx) (body domain.Settings, cleared []string, err error) {
	if body, err = decodeSettings(c.Request.Header.ContentType(), c.PostBody()); err != nil {
		return body, nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(c.PostBody(), &raw); err != nil {
		return body, nil, api.Internal(fmt.Errorf("devices: settings decoded once but not twice: %w", err))
	}
	return body, nullPaths("", raw, nil), nil
}

// nullPaths appends the dotted paths of m's null values, below prefix.
func nullPaths(prefix string, m map[string]any, out []string) []string {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			out = append(out, prefix+k)
		case map[string]any:
			out = nullPaths(prefix+k+".", v, out)
		}
	}
	return out
}

// decodeSettings is decode over the Content-Type and body, by the API's
// one decoder: an unknown setting is refused by its full path
// (validation_failed), a value of the wrong type too (invalid_request),
// and a body that is not a JSON object as on every other route.
func decodeSettings(contentType, raw []byte) (domain.Settings, error) {
	var body domain.Settings
	if err := api.CheckJSON(contentType); err != nil {
		return body, err
	}
	return body, api.DecodeJSON(raw, &body)
}

func (h *Handlers) put(c *api.Ctx) error {
	// device_id is 1 to 200 characters: the server refuses any other
	// before the handler runs (Param.MaxLength)
	id := c.PathParam("device_id")
	body, cleared, err := decode(c)
	if err != nil {
		return err
	}
	org, env := c.Scope()
	a, err := h.svc.Apply(c.Context(), store.Scope{Org: org, Env: env}, id, body, cleared...)
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return api.Validation("validation_failed", ve.Fields)
	}
	if err != nil {
		return err
	}
	return c.JSON(200, a)
}

func (h *Handlers) get(c *api.Ctx) error {
	id := c.PathParam("device_id")
	org, env := c.Scope()
	rec, err := h.svc.Get(c.Context(), store.Scope{Org: org, Env: env}, id)
	if errors.Is(err, domain.ErrNotFound) {
		return api.Errf("not_found", "device %s has no applied settings", id)
	}
	if err != nil {
		return err
	}
	c.SetContentType("application/json")
	c.SetStatusCode(200)
	c.SetBody(rec)
	return nil
}
