// Package ingestapi serves the ingest endpoints POST /v1/telemetry and
// POST /v1/events over the intake service (ingest/telemetry).
//
// A request is answered 202 only after its messages are on the bus
// (write before acknowledge); when the bus refuses them the answer is 503
// service_unavailable with Retry-After, and nothing was accepted.
//
// Handlers hold nothing but the intake service, set by New and only read
// afterwards; the service is safe for concurrent use, so the handlers
// serve any number of requests at once, each decoding its own body.
package ingestapi

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/jsonw"
	gojson "github.com/goccy/go-json"
)

// Service is what the handlers need of the intake.
type Service interface {
	IngestTelemetry(ctx context.Context, org, env string, msgs []map[string]any) (telemetry.Result, error)
	IngestEvents(ctx context.Context, org, env string, evs []map[string]any) (telemetry.Result, error)
}

// jsonIngester is the optional ability of a Service to ingest the body
// of POST /v1/telemetry or POST /v1/events as sent, reading and checking
// it in one pass. It declines (taken false, nothing done) any body it
// does not read, invalid ones among them; the handler then decodes the
// body and calls IngestTelemetry or IngestEvents, so every error keeps
// its wording and field path.
type jsonIngester interface {
	IngestTelemetryJSON(ctx context.Context, org, env string, body []byte) (res telemetry.Result, taken bool, err error)
	IngestEventsJSON(ctx context.Context, org, env string, body []byte) (res telemetry.Result, taken bool, err error)
}

var (
	_ Service      = (*telemetry.Service)(nil)
	_ jsonIngester = (*telemetry.Service)(nil)
)

// Handlers serves the ingest routes.
type Handlers struct {
	svc Service
}

// New makes the handlers.
func New(svc Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the ingest routes.
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{
		{Method: "POST", Path: "/v1/telemetry", Tag: "ingest", Summary: "Ingest up to 1,000 telemetry messages",
			Permission: "telemetry:write", Request: TelemetryRequest{}, Response: TelemetryAccepted{}, Status: 202,
			Errors: []int{503}, Handler: h.telemetry},
		{Method: "POST", Path: "/v1/events", Tag: "ingest", Summary: "Ingest up to 1,000 fleet events from external systems",
			Permission: "events:write", Request: EventsRequest{}, Response: EventsAccepted{}, Status: 202,
			Errors: []int{503}, Handler: h.events},
	}
}

// TelemetryAccepted is the answer to POST /v1/telemetry.
type TelemetryAccepted struct {
	Accepted int     `json:"accepted" doc:"messages accepted (all of the request)"`
	Sequence []int64 `json:"sequence" doc:"the sequence of each accepted message, in request order"`
	// GeneratedEventIDs lists the maintenance events the rules raised.
	GeneratedEventIDs []string  `json:"generated_event_ids,omitempty" doc:"ids of the maintenance_events the rules raised from these messages"`
	IngestedAt        time.Time `json:"ingested_at"`
}

// EventsAccepted is the answer to POST /v1/events.
type EventsAccepted struct {
	Accepted int      `json:"accepted" doc:"events accepted and published (all of the request, repeats included)"`
	EventIDs []string `json:"event_ids" doc:"the event_id of each accepted event (assigned when absent), in request order"`
	// Duplicates and DuplicateEventIDs report event_ids repeated within
	// the request: the repeats are accepted and published too, and the
	// streams that deduplicate drop them.
	Duplicates        int       `json:"duplicates" doc:"how many events of this request repeat an event_id that an earlier event of the same request carries (0 when none); they are accepted and published all the same, and streams with deduplication deliver only the first"`
	DuplicateEventIDs []string  `json:"duplicate_event_ids,omitempty" doc:"the repeated event_ids, each once, in the order of their first repeat; absent when duplicates is 0"`
	IngestedAt        time.Time `json:"ingested_at"`
}

// The bodies as decoded: the lists stay generic so that every type
// mistake is reported under its own field path.
type telemetryBody struct {
	Messages []any `json:"messages"`
}

type eventsBody struct {
	Events []any `json:"events"`
}

// body returns the request body once it is known to be JSON.
func body(c *api.Ctx) ([]byte, error) {
	raw := c.PostBody()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, api.Errf("invalid_request", "request body is required")
	}
	if err := api.CheckJSON(c.Request.Header.ContentType()); err != nil {
		return nil, err
	}
	return raw, nil
}

// decodeBody decodes raw into v with numbers as json.Number. goccy/go-json
// decodes a 1,000-message telemetry body in 4.3 ms with 2.8 MB against
// 5.2 ms and 3.8 MB for encoding/json (BenchmarkDecode, best of 6 on a
// shared 2-core EPYC), as the trip uploads do; on error encoding/json
// decodes it again for the precise message (naming every field the body
// does not declare and every member repeated in its object, which
// goccy/go-json would read as the last). A body that is not a JSON object goes to
// api.DecodeJSON, which refuses it as every other route does: goccy/go-json
// takes null as {}. The telemetry fast path declines such bodies, so they
// end here too.
func decodeBody[T any](raw []byte, v *T) error {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return api.DecodeJSON(raw, v)
	}
	dec := gojson.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || api.TrailingData(raw, dec.InputOffset()) || jsonpath.HasRepeated(raw, true) {
		var zero T
		*v = zero
		return api.DecodeJSON(raw, v)
	}
	return nil
}

// objects turns the decoded list into objects; an element that is not an
// object becomes nil, which the service reports under its index.
func objects(list []any) []map[string]any {
	if list == nil {
		return nil
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i], _ = e.(map[string]any)
	}
	return out
}

// mapErr turns service errors into API errors.
func mapErr(err error) error {
	var ve *telemetry.ValidationError
	switch {
	case errors.As(err, &ve):
		msg := "request validation failed"
		if len(ve.Fields) == 1 && ve.More == 0 {
			for k, v := range ve.Fields {
				msg = k + ": " + v
			}
		}
		if ve.More > 0 {
			msg += " (" + strconv.Itoa(ve.More) + " more errors not listed)"
		}
		return api.Errf(api.FieldsCode(ve.Code, ve.Fields, ve.More), "%s", msg).WithDetails(ve.Fields)
	case errors.Is(err, telemetry.ErrFleetsUnavailable):
		e := api.Errf("service_unavailable", "the fleets of the events' vehicles could not be read; nothing was accepted, retry later")
		e.Cause, e.RetryAfter = err, 1
		return e
	case errors.Is(err, telemetry.ErrUnavailable):
		e := api.Errf("service_unavailable", "the message bus did not accept the request; nothing was accepted, retry later")
		e.Cause, e.RetryAfter = err, 1
		return e
	}
	return err
}

func (h *Handlers) telemetry(c *api.Ctx) error {
	raw, err := body(c)
	if err != nil {
		return err
	}
	org, env := c.Scope()
	res, taken := telemetry.Result{}, false
	if j, ok := h.svc.(jsonIngester); ok {
		res, taken, err = j.IngestTelemetryJSON(c.Context(), org, env, raw)
	}
	if !taken {
		var b telemetryBody
		if err := decodeBody(raw, &b); err != nil {
			return err
		}
		res, err = h.svc.IngestTelemetry(c.Context(), org, env, objects(b.Messages))
	}
	if err != nil {
		return mapErr(err)
	}
	return accepted(c, TelemetryAccepted{Accepted: res.Accepted, Sequence: res.Sequences, GeneratedEventIDs: res.Generated, IngestedAt: apitime.Of(res.IngestedAt)})
}

func (h *Handlers) events(c *api.Ctx) error {
	raw, err := body(c)
	if err != nil {
		return err
	}
	org, env := c.Scope()
	res, taken := telemetry.Result{}, false
	if j, ok := h.svc.(jsonIngester); ok {
		res, taken, err = j.IngestEventsJSON(c.Context(), org, env, raw)
	}
	if !taken {
		var b eventsBody
		if err := decodeBody(raw, &b); err != nil {
			return err
		}
		res, err = h.svc.IngestEvents(c.Context(), org, env, objects(b.Events))
	}
	if err != nil {
		return mapErr(err)
	}
	return accepted(c, EventsAccepted{Accepted: res.Accepted, EventIDs: res.EventIDs, Duplicates: res.Duplicates,
		DuplicateEventIDs: res.DuplicateEventIDs, IngestedAt: apitime.Of(res.IngestedAt)})
}

// jsonAppender is an answer that writes its own JSON, byte for byte what
// api.Ctx.JSON would (encoding/json without HTML escaping, a newline
// after); false when it leaves the value to encoding/json.
type jsonAppender interface {
	appendJSON(b []byte) ([]byte, bool)
}

// accepted answers 202 with v: written by v itself on the hot paths (a
// single-message publish spent 4 % of its CPU in encoding/json's
// reflection), else by c.JSON. It is generic so that the answer is not
// boxed in an interface on the hot path (one allocation per request,
// BenchmarkAccepted).
func accepted[T jsonAppender](c *api.Ctx, v T) error {
	b, ok := v.appendJSON(make([]byte, 0, 256))
	if !ok {
		return c.JSON(202, v)
	}
	c.SetStatusCode(202)
	c.SetContentType("application/json")
	c.Response.SetBodyRaw(b)
	return nil
}

func (a TelemetryAccepted) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"accepted":`...)
	b = strconv.AppendInt(b, int64(a.Accepted), 10)
	b = append(b, `,"sequence":`...)
	if a.Sequence == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, n := range a.Sequence {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, n, 10)
		}
		b = append(b, ']')
	}
	if len(a.GeneratedEventIDs) > 0 {
		b = appendStrings(append(b, `,"generated_event_ids":`...), a.GeneratedEventIDs)
	}
	return appendIngestedAt(b, a.IngestedAt)
}

func (a EventsAccepted) appendJSON(b []byte) ([]byte, bool) {
	b = append(b, `{"accepted":`...)
	b = strconv.AppendInt(b, int64(a.Accepted), 10)
	b = appendStrings(append(b, `,"event_ids":`...), a.EventIDs)
	b = append(b, `,"duplicates":`...)
	b = strconv.AppendInt(b, int64(a.Duplicates), 10)
	if len(a.DuplicateEventIDs) > 0 {
		b = appendStrings(append(b, `,"duplicate_event_ids":`...), a.DuplicateEventIDs)
	}
	return appendIngestedAt(b, a.IngestedAt)
}

// appendStrings appends ss as a JSON array (null when nil).
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, s, false)
	}
	return append(b, ']')
}

// appendIngestedAt ends an answer with its ingested_at.
func appendIngestedAt(b []byte, t time.Time) ([]byte, bool) {
	b = append(b, `,"ingested_at":`...)
	b, ok := jsonw.AppendTime(b, t)
	return append(b, "}\n"...), ok
}
