// Package optimization serves the route optimizer (fleet/optimization)
// over HTTP: the handlers decode a request, call one service method and
// encode its answer; errors map to the API's error codes here.
//
// Handlers hold nothing but the service, set by New and only read
// afterwards; the service is safe for concurrent use (each request solves
// its own problem), so the handlers serve any number of requests at once.
package optimization

import (
	"errors"
	"time"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/optimization"
	"github.com/fleethub/fleethub/internal/store"
)

// Handlers serve one optimization service.
type Handlers struct{ svc *domain.Service }

// New serves svc.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Response is the answer envelope.
type Response struct {
	Success bool          `json:"success"`
	Data    domain.Result `json:"data"`
}

// MaxRequestBytes is the largest optimization request: 1,000
// destinations and 250 vehicles with their two 1,001 × 1,001 matrices of
// numbers written to full precision (up to 25 bytes each with the comma:
// about 50 MB), above the server's limit for other routes.
const MaxRequestBytes = 64 << 20

// Routes returns the optimization routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "optimization_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/api/v1/fleet/optimization/routes", Tag: "optimization", Summary: "Plan multi-vehicle routes (capacities, time windows, shifts; the caller's own matrix or road costs)",
			Permission: "fleet:write", Request: domain.Request{}, Response: Response{}, MaxBodyBytes: MaxRequestBytes, Handler: h.optimize},
		{Method: "GET", Path: "/api/v1/fleet/optimization/{optimization_id}", Tag: "optimization", Summary: "A stored optimization", Permission: "fleet:read",
			Params: id, Response: Response{}, Handler: h.get},
		{Method: "PUT", Path: "/api/v1/fleet/optimization/{optimization_id}/apply", Tag: "optimization", Summary: "Apply an optimization (its chosen plan, or a runner-up plan by number): marks it applied and emits route assignments",
			Permission: "fleet:write", Params: id, Request: domain.ApplyRequest{}, Response: Response{}, Errors: []int{409}, Handler: h.apply},
	}
}

func scope(c *api.Ctx) store.Scope {
	org, env := c.Scope()
	return store.Scope{Org: org, Env: env}
}

// answer encodes r, or maps err to the API's errors.
func answer(c *api.Ctx, r domain.Result, err error) error {
	var ve *domain.ValidationError
	var se *domain.StateError
	switch {
	case err == nil:
		return c.JSON(200, Response{Success: true, Data: r})
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("optimization_not_found", "optimization not found")
	case errors.As(err, &se) && se.Status == "":
		return api.Errf("invalid_state_transition", "the optimization changed meanwhile")
	case errors.As(err, &se):
		return api.Errf("invalid_state_transition", "an optimization that is %s cannot be applied", se.Status).WithDetails(map[string]string{"status": se.Status})
	}
	return err
}

func (h *Handlers) optimize(c *api.Ctx) error {
	var r domain.Request
	empty, err := c.BindValues(&r, false)
	if err != nil {
		return err
	}
	if empty != nil {
		return api.Refused(empty, r.Check())
	}
	// The time limit counts from the request's arrival (read, before the
	// body is decoded).
	res, err := h.svc.OptimizeAfter(c.Context(), scope(c), &r, time.Since(c.Time()))
	return answer(c, res, err)
}

func (h *Handlers) get(c *api.Ctx) error {
	res, err := h.svc.Get(c.Context(), scope(c), c.PathParam("optimization_id"))
	return answer(c, res, err)
}

func (h *Handlers) apply(c *api.Ctx) error {
	var a domain.ApplyRequest
	if err := c.Bind(&a, true); err != nil {
		return err
	}
	res, err := h.svc.Apply(c.Context(), scope(c), c.PathParam("optimization_id"), a)
	return answer(c, res, err)
}
