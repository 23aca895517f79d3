package emergency

import (
	"errors"
	"slices"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/enum"
)

// Alerts serves emergency alerts.
type Alerts struct {
	svc *domain.Alerts
}

// NewAlerts makes the alert handlers.
func NewAlerts(svc *domain.Alerts) *Alerts { return &Alerts{svc: svc} }

// alertErr turns the service's errors into API errors; changed is the
// message of domain.ErrChanged, which depends on the request.
func alertErr(err error, changed string) error {
	var te *domain.TransitionError
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, domain.ErrAlertNotFound):
		return api.Errf("alert_not_found", "alert not found")
	case errors.Is(err, domain.ErrChanged):
		return api.Errf("invalid_state_transition", "%s", changed)
	case errors.As(err, &te):
		return api.Errf("invalid_state_transition", "an alert that is %s cannot be %s", te.From, te.To).
			WithDetails(map[string]string{"status": te.From})
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	}
	return err
}

// Routes returns the alert routes.
func (a *Alerts) Routes() []*api.Route {
	id := []api.Param{{Name: "alert_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/v1/emergency/alerts", Tag: "emergency", Summary: "Broadcast an alert to an audience over several channels", Permission: "emergency:write",
			Request: domain.AlertBody{}, Response: domain.Alert{}, Status: 201, Handler: a.create},
		{Method: "GET", Path: "/v1/emergency/alerts", Tag: "emergency", Summary: "List the alerts, newest first (keyset cursors)", Permission: "emergency:read", TokenScope: api.ConsoleReadScope,
			Params: []api.Param{{Name: "status", In: "query", Type: "string", Enum: domain.AlertStatuses, Description: "active: not cancelled and not yet expired"},
				{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
				{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page, with the same filters; a cursor given with other filters is refused naming cursor"}},
			Response: domain.AlertList{}, Handler: a.list},
		{Method: "GET", Path: "/v1/emergency/alerts/{alert_id}", Tag: "emergency", Summary: "An alert with live delivery and acknowledgment status", Permission: "emergency:read", TokenScope: api.ConsoleReadScope,
			Params: id, Response: domain.Alert{}, Handler: a.get},
		{Method: "DELETE", Path: "/v1/emergency/alerts/{alert_id}", Tag: "emergency", Summary: "Cancel an alert", Permission: "emergency:write",
			Params: id, Response: domain.Alert{}, Errors: []int{409}, Handler: a.cancel},
		{Method: "POST", Path: "/v1/emergency/alerts/{alert_id}/acknowledge", Tag: "emergency", Summary: "Acknowledge an alert as a recipient", Permission: "emergency:write", TokenScope: "alerts:acknowledge",
			Params: id, Request: domain.AckBody{}, Response: domain.Alert{}, Errors: []int{409}, Handler: a.ack},
	}
}

func (a *Alerts) create(c *api.Ctx) error {
	var b domain.AlertBody
	empty, err := c.BindValues(&b, false)
	if err != nil {
		return err
	}
	if empty != nil {
		return api.Refused(empty, a.svc.Check(b))
	}
	al, err := a.svc.Create(c.Context(), scope(c), b)
	if err != nil {
		return alertErr(err, "")
	}
	return c.JSON(201, al)
}

func (a *Alerts) get(c *api.Ctx) error {
	al, err := a.svc.Get(c.Context(), scope(c), c.PathParam("alert_id"))
	if err != nil {
		return alertErr(err, "")
	}
	return c.JSON(200, al)
}

func (a *Alerts) cancel(c *api.Ctx) error {
	al, err := a.svc.Cancel(c.Context(), scope(c), c.PathParam("alert_id"))
	if err != nil {
		return alertErr(err, "the alert changed meanwhile; read it again")
	}
	return c.JSON(200, al)
}

func (a *Alerts) ack(c *api.Ctx) error {
	var b domain.AckBody
	empty, err := c.BindValues(&b, false)
	if err != nil {
		return err
	}
	if empty != nil {
		return api.Refused(empty, b.Check())
	}
	al, err := a.svc.Acknowledge(c.Context(), scope(c), c.PathParam("alert_id"), b)
	if err != nil {
		return alertErr(err, "the alert changed meanwhile; try again")
	}
	return c.JSON(200, al)
}

func (a *Alerts) list(c *api.Ctx) error {
	args := c.QueryArgs()
	q := domain.AlertQuery{Status: string(args.Peek("status")), Cursor: string(args.Peek("cursor")), Limit: 50}
	bad := map[string]string{}
	if q.Status != "" && !slices.Contains(domain.AlertStatuses, q.Status) {
		bad["status"] = enum.Refusal(domain.AlertStatuses...)
	}
	if v := args.Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		q.Limit = n
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	out, err := a.svc.List(c.Context(), scope(c), q)
	if err != nil {
		return alertErr(err, "")
	}
	return c.JSON(200, out)
}
