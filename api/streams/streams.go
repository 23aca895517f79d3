// Package streams serves the /api/v1/streaming endpoints and the
// websocket upgrade over the stream service (hub/streams) and a
// websocket sink declared here.
//
// Handlers hold the stream service, the websocket sink and the webhook
// delivery status, set by New and only read afterwards; each is safe for
// concurrent use, so the handlers serve any number of requests at once.
// An upgraded connection is the websocket sink's (delivery/ws), which
// runs it on goroutines of its own.
package streams

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/api"
	apiwebhooks "github.com/fleethub/fleethub/api/webhooks"
	"github.com/fleethub/fleethub/hub"
	domain "github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/valyala/fasthttp"
)

// Websocket serves an authenticated upgrade request.
type Websocket interface {
	Serve(rc *fasthttp.RequestCtx, org, env, keyID string) error
	// ServeLimited serves a connection opened with a browser token: it
	// follows only the streams allows takes, the feed only when feed is
	// set, and closes when life ends (the token expired or was revoked).
	ServeLimited(rc *fasthttp.RequestCtx, org, env, keyID string, allows func(streamID string) bool, feed bool, life context.Context) error
}

// DeliveryStatus reports a webhook stream's endpoint and delivery counts.
type DeliveryStatus interface {
	Status(ctx context.Context, org, env, streamID string) (apiwebhooks.EndpointStatus, error)
}

// Handlers serves the streaming routes.
type Handlers struct {
	svc     *domain.Service
	ws      Websocket
	hooks   DeliveryStatus
	overlap time.Duration
}

// New makes the handlers; ws may be nil (the upgrade answers 501), hooks
// too (status shows no webhook block).
func New(svc *domain.Service, ws Websocket, hooks DeliveryStatus) *Handlers {
	return &Handlers{svc: svc, ws: ws, hooks: hooks, overlap: 24 * time.Hour}
}

// StopBody is the stop request.
type StopBody struct {
	StreamID string `json:"stream_id" required:"true"`
}

// StartTelemetryBody documents the telemetry start body.
type StartTelemetryBody = domain.TelemetryConfig

// StartEventsBody documents the event start body.
type StartEventsBody = domain.EventsConfig

// ConfigureTelemetryBody documents configure: any start field plus state
// and rotate_secret.
type ConfigureTelemetryBody struct {
	domain.TelemetryConfig
	State        string `json:"state,omitempty" enum:"active,paused"`
	RotateSecret bool   `json:"rotate_secret,omitempty" doc:"webhook streams: issue a new secret; the old one stays valid for 24 hours"`
}

// ConfigureEventsBody documents configure for event streams.
type ConfigureEventsBody struct {
	domain.EventsConfig
	State        string `json:"state,omitempty" enum:"active,paused"`
	RotateSecret bool   `json:"rotate_secret,omitempty" doc:"webhook streams: issue a new secret; the old one stays valid for 24 hours"`
}

func mapErr(err error) error {
	var fe *domain.FieldError
	var te *domain.TransitionError
	var tye *domain.TypeError
	var many domain.FieldErrors
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tye): // a wrong JSON type: invalid_request, as on every route
		return api.Validation("invalid_request", map[string]string{tye.Field: tye.Message})
	case errors.Is(err, domain.ErrNotFound):
		return api.Errf("stream_not_found", "stream not found")
	case errors.Is(err, domain.ErrBadCursor):
		return api.BadCursor()
	case errors.As(err, &many): // every problem of the body, in one answer
		fields := make(map[string]string, len(many))
		for _, fe := range many {
			fields[fe.Field] = fe.Message
		}
		return api.Validation("validation_failed", fields)
	case errors.As(err, &fe):
		return api.Validation("validation_failed", map[string]string{fe.Field: fe.Message})
	case errors.As(err, &te):
		return api.Errf("invalid_state_transition", "%s", transitionMessage(te)).WithDetails(map[string]string{"status": te.From})
	}
	return err
}

// blanks are the identifiers of the request's body sent blank and its
// optional fields of a fixed set sent as "" (jsonpath.Blank), which the
// route's type tells: the service names them beside its own refusals, in
// one answer, and changes nothing.
func blanks(c *api.Ctx) []*domain.FieldError {
	bad := jsonpath.Blank(c.PostBody(), reflect.TypeOf(c.Route.Request))
	out := make([]*domain.FieldError, 0, len(bad))
	for _, f := range slices.Sorted(maps.Keys(bad)) {
		out = append(out, &domain.FieldError{Field: f, Message: bad[f]})
	}
	return out
}

// bodyErr is mapErr for the error of a start or configure body. The
// service names a value of the wrong type or an unknown field one at a
// time; the body's other problems the route's type tells (the other
// unknown fields, a wrong type beside them: jsonpath.Check; the other
// values of a wrong type: jsonpath.WrongTypes) are named
// with it, in one answer, as api.DecodeJSON names them on every route.
func bodyErr(c *api.Ctx, err error) error {
	var fe *domain.FieldError
	var tye *domain.TypeError
	if !errors.As(err, &fe) || !errors.As(err, &tye) && fe.Message != jsonpath.UnknownRefusal {
		return mapErr(err)
	}
	t := reflect.TypeOf(c.Route.Request)
	more := jsonpath.Check(c.PostBody(), t)
	if tye != nil { // the other values of a wrong type, past the one decoding stopped at
		for k, m := range jsonpath.WrongTypes(c.PostBody(), t) {
			if more == nil {
				more = map[string]string{}
			}
			more[k] = m
		}
	}
	delete(more, fe.Field)
	if len(more) == 0 {
		return mapErr(err)
	}
	fields := map[string]string{fe.Field: fe.Message}
	for k, m := range more {
		if len(fields) < jsonpath.MaxNamed {
			fields[k] = m
		}
	}
	return api.Validation("validation_failed", fields)
}

// transitionMessage says why a state change was refused, in the words of
// the API (the stream's status, what was asked).
func transitionMessage(te *domain.TransitionError) string {
	switch {
	case te.From == te.To:
		return "the stream is " + te.From + " already"
	case te.To == "configured":
		return "the stream is " + te.From + ": a " + te.From + " stream cannot be configured"
	}
	return "the stream is " + te.From + ": it cannot become " + te.To
}

// Routes returns the streaming routes.
func (h *Handlers) Routes() []*api.Route {
	var out []*api.Route
	for _, k := range []struct {
		kind             string
		start, configure any
	}{{hub.KindTelemetry, StartTelemetryBody{}, ConfigureTelemetryBody{}}, {hub.KindEvents, StartEventsBody{}, ConfigureEventsBody{}}} {
		kind := k.kind
		base := "/api/v1/streaming/" + kind
		idParam := []api.Param{{Name: "stream_id", In: "path", Type: "string", Required: true}}
		out = append(out,
			&api.Route{Method: "POST", Path: base + "/start", Tag: "streaming", Summary: "Start a " + kind + " stream", Permission: "streams:manage",
				Request: k.start, Response: StreamAnswer{}, Status: 201, Handler: func(c *api.Ctx) error { return h.start(c, kind) }},
			&api.Route{Method: "POST", Path: base + "/stop", Tag: "streaming", Summary: "Stop a " + kind + " stream and close its connections", Permission: "streams:manage",
				Request: StopBody{}, Response: StatusAnswer{}, Errors: []int{404, 409}, Handler: func(c *api.Ctx) error { return h.stop(c, kind) }},
			&api.Route{Method: "GET", Path: base + "/status/{stream_id}", Tag: "streaming", Summary: "Status, counters and lag of a " + kind + " stream", Permission: "streams:read", TokenScope: api.ConsoleReadScope,
				Params: idParam, Response: StatusAnswer{}, Handler: func(c *api.Ctx) error { return h.status(c, kind) }},
			&api.Route{Method: "PUT", Path: base + "/configure/{stream_id}", Tag: "streaming", Summary: "Change filters and settings, pause or resume a " + kind + " stream without reconnecting clients",
				Permission: "streams:manage", Params: idParam, Request: k.configure, Response: StatusAnswer{}, Errors: []int{409},
				Handler: func(c *api.Ctx) error { return h.configure(c, kind) }},
		)
	}
	out = append(out, &api.Route{Method: "GET", Path: "/api/v1/streaming/streams", Tag: "streaming",
		Summary: "Every stream of the organization and environment, newest first, each with its status (keyset cursors)", Permission: "streams:read", TokenScope: api.ConsoleReadScope,
		Params: []api.Param{{Name: "kind", In: "query", Type: "string", Enum: []string{hub.KindTelemetry, hub.KindEvents}},
			{Name: "status", In: "query", Type: "string", Enum: []string{hub.StateActive, hub.StatePaused, hub.StateStopped}},
			{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
			{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page, with the same filters; a cursor given with other filters is refused naming cursor"}},
		Response: ListView{}, Handler: h.list})
	out = append(out, &api.Route{Method: "GET", Path: "/api/v1/streaming/events/correlations/{stream_id}", Tag: "streaming",
		Summary: "Retained messages of an event stream sharing a correlation id (correlation_enabled tags them)", Permission: "streams:read",
		Params: []api.Param{{Name: "stream_id", In: "path", Type: "string", Required: true}, {Name: "correlation_id", In: "query", Type: "string", Required: true},
			{Name: "limit", In: "query", Type: "integer", Description: "1-1000, default 100"}},
		Response: CorrelationView{}, Handler: h.correlations})
	out = append(out, &api.Route{Method: "GET", Path: "/api/v1/streaming/ws", Tag: "streaming", Summary: "Websocket delivery of one or more streams and of the organization's feed (see docs/websocket.md)",
		Permission: "streams:read", QueryKey: true, TokenScope: "streams:read feed:read", Status: 101, Errors: []int{400, 404, 410, 501}, NoHead: true,
		Params: []api.Param{{Name: "stream_id", In: "query", Repeatable: true, Type: "string", Description: "repeatable or comma-separated; required unless feed=true"},
			{Name: "feed", In: "query", Type: "boolean", Description: "true: follow the organization's feed too, with the feed's parameters (types, after, last and the filters of GET /api/v1/streaming/feed, not limit or wait) in the same query; each entry comes as {\"feed\": {cursor, type, message}} with the cursor the pull and the event stream give it (docs/websocket.md#the-organizations-feed)"},
			{Name: "encoding", In: "query", Type: "string", Enum: []string{"json", "msgpack"}},
			{Name: "last_offset", In: "query", Type: "integer", Description: "resume after this offset"},
			{Name: "epoch", In: "query", Type: "string", Description: "the epoch of last_offset (from a subscribed frame); another epoch answers history_lost and delivery restarts at first_available"},
			{Name: "api_key", In: "query", Type: "string", Description: "the key, for clients that can set neither a header nor a subprotocol; a browser offers the subprotocols fleethub.v1 and fhk.<key> instead, which keeps the key out of the URL"},
			{Name: "token", In: "query", Type: "string", Description: "a browser token with the streams:read or feed:read scope in place of a key; the connection follows only the token's streams (streams:read) and the feed (feed:read), and closes with 4401 when the token expires or is revoked (docs/security.md#browser-tokens)"}},
		OwnQuery: true, // its feed's parameters too (delivery/ws)
		Handler:  h.websocket})
	return out
}

func (h *Handlers) start(c *api.Ctx, kind string) error {
	if err := api.CheckJSON(c.Request.Header.ContentType()); err != nil {
		return err
	}
	var probe map[string]json.RawMessage
	if err := api.DecodeJSON(c.PostBody(), &probe); err != nil {
		return err
	}
	org, env := c.Scope()
	res, err := h.svc.Start(c.Context(), org, env, kind, c.PostBody(), blanks(c)...)
	if err != nil {
		return bodyErr(c, err)
	}
	v, err := h.view(c, res.Entry)
	if err != nil {
		return err
	}
	v.WebhookSecret = res.Secret
	if k := res.Encryption; k != nil {
		v.Encryption = &EncryptionView{Algorithm: domain.EncryptionAlgorithm, KeyID: k.KeyID, Key: k.Key}
	}
	return c.JSON(201, StreamAnswer{Success: true, StreamView: v})
}

func (h *Handlers) stop(c *api.Ctx, kind string) error {
	var b StopBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	switch {
	case b.StreamID == "":
		return api.Validation("validation_failed", map[string]string{"stream_id": "is required"})
	case jsonpath.HasControl(b.StreamID):
		// no stream id holds one, as in the status and configure paths
		return api.Validation("validation_failed", map[string]string{"stream_id": jsonpath.ControlRefusal})
	}
	org, env := c.Scope()
	if _, err := h.svc.Stop(c.Context(), org, env, kind, b.StreamID); err != nil {
		return mapErr(err)
	}
	st, err := h.svc.Status(c.Context(), org, env, kind, b.StreamID)
	if err != nil {
		return mapErr(err)
	}
	v, err := h.statusView(c, st)
	if err != nil {
		return err
	}
	return c.JSON(200, StatusAnswer{Success: true, StatusView: v})
}

func (h *Handlers) status(c *api.Ctx, kind string) error {
	org, env := c.Scope()
	st, err := h.svc.Status(c.Context(), org, env, kind, c.PathParam("stream_id"))
	if err != nil {
		return mapErr(err)
	}
	v, err := h.statusView(c, st)
	if err != nil {
		return err
	}
	return c.JSON(200, StatusAnswer{Success: true, StatusView: v})
}

func (h *Handlers) configure(c *api.Ctx, kind string) error {
	if err := api.CheckJSON(c.Request.Header.ContentType()); err != nil {
		return err
	}
	var probe map[string]json.RawMessage
	if err := api.DecodeJSON(c.PostBody(), &probe); err != nil {
		return err
	}
	org, env := c.Scope()
	id := c.PathParam("stream_id")
	res, err := h.svc.Configure(c.Context(), org, env, kind, id, c.PostBody(), h.overlap, blanks(c)...)
	if err != nil {
		return bodyErr(c, err)
	}
	st, err := h.svc.Status(c.Context(), org, env, kind, id)
	if err != nil {
		return mapErr(err)
	}
	v, err := h.statusView(c, st)
	if err != nil {
		return err
	}
	v.WebhookSecret = res.Secret
	return c.JSON(200, StatusAnswer{Success: true, StatusView: v})
}

func (h *Handlers) websocket(c *api.Ctx) error {
	if h.ws == nil {
		return api.NotImplemented("websocket delivery")
	}
	p := c.Principal
	var err error
	if t := p.Token; t != nil {
		for _, v := range c.QueryArgs().PeekMulti("stream_id") {
			for id := range strings.SplitSeq(string(v), ",") {
				if id = strings.TrimSpace(id); id != "" {
					if err := api.CheckStream(p, id); err != nil {
						return err
					}
				}
			}
		}
		err = h.ws.ServeLimited(c.RequestCtx, p.Org, p.Env, p.KeyID, t.AllowsStream, t.HasScope("feed:read"), t.Life)
	} else {
		err = h.ws.Serve(c.RequestCtx, p.Org, p.Env, p.KeyID)
	}
	if err != nil {
		if c.Response.StatusCode() >= 400 {
			return nil // the sink answered the bad request itself
		}
		return err
	}
	return nil
}

func (h *Handlers) correlations(c *api.Ctx) error {
	corr := string(c.QueryArgs().Peek("correlation_id"))
	bad := map[string]string{}
	switch {
	case jsonpath.IsBlank(corr): // only white space names no correlation: missing, as ""
		bad["correlation_id"] = "is required (at most 200 characters)"
	case utf8.RuneCountInString(corr) > 200:
		bad["correlation_id"] = "must be at most 200 characters"
	}
	limit := 100
	if v := c.QueryArgs().Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 1000 {
			bad["limit"] = "must be an integer from 1 to 1000"
		}
		limit = n
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	org, env := c.Scope()
	id := c.PathParam("stream_id")
	ents, err := h.svc.Correlated(c.Context(), org, env, id, corr, limit)
	if err != nil {
		return mapErr(err)
	}
	out := CorrelationView{Success: true, StreamID: id, CorrelationID: corr, Messages: []CorrelatedMessage{}}
	for _, e := range ents {
		out.Messages = append(out.Messages, CorrelatedMessage{Offset: e.Offset, Message: json.RawMessage(e.Data)})
	}
	out.Count = len(out.Messages)
	return c.JSON(200, out)
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	q := domain.ListQuery{Kind: string(a.Peek("kind")), Status: string(a.Peek("status")), Cursor: string(a.Peek("cursor")), Limit: 50}
	bad := map[string]string{}
	switch q.Kind {
	case "", hub.KindTelemetry, hub.KindEvents:
	default:
		bad["kind"] = "must be telemetry or events"
	}
	switch q.Status {
	case "", hub.StateActive, hub.StatePaused, hub.StateStopped:
	default:
		bad["status"] = "must be active, paused or stopped"
	}
	if v := a.Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		q.Limit = n
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	org, env := c.Scope()
	page, err := h.svc.List(c.Context(), org, env, q)
	if err != nil {
		return mapErr(err)
	}
	out := ListView{Success: true, Streams: make([]StatusView, 0, len(page.Streams)), Pagination: Pagination{Limit: q.Limit}}
	for _, st := range page.Streams {
		v, err := h.statusView(c, st)
		if err != nil {
			return err
		}
		out.Streams = append(out.Streams, v)
	}
	if page.NextCursor != "" {
		out.Pagination.NextCursor, out.Pagination.HasMore = &page.NextCursor, true
	}
	return c.JSON(200, out)
}
