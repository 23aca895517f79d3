// Package webhooks serves the webhook delivery log of streams: the
// deliveries of a stream with their attempts, answers and errors (dead
// letters among them), and replay. It reads the delivery store and the
// stream registry through the small interfaces below; the stream's
// endpoint state (circuit, disabled) comes from the dispatcher.
//
// Handlers hold the delivery store, the stream registry, the dispatcher's
// endpoint states and a clock, set by New and only read afterwards; each
// is safe for concurrent use, so the handlers serve any number of
// requests at once.
package webhooks

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
)

// Limits of the endpoints.
const (
	DefaultLimit  = 50
	MaxLimit      = 200
	MaxReplayIDs  = 1000
	MaxReplaySpan = 31 * 24 * time.Hour
)

// Store is what the handlers need of the delivery store.
type Store interface {
	ListDeliveries(ctx context.Context, sc store.Scope, streamID string, q store.DeliveryQuery) ([]store.Delivery, int64, error)
	RequeueDeliveries(ctx context.Context, sc store.Scope, streamID string, r store.DeliveryRequeue) (store.DeliveryRequeued, error)
	ListParkedDeliveries(ctx context.Context, sc store.Scope, streamID string, before int64, limit int) ([]store.Delivery, int64, error)
	CountDeliveries(ctx context.Context, sc store.Scope, streamID string) (map[string]int64, error)
}

// Endpoints reports a stream's endpoint state (the webhook dispatcher).
type Endpoints interface {
	EndpointState(streamID string) (circuit string)
}

// Handlers serves the delivery routes.
type Handlers struct {
	st      Store
	streams hub.Streams
	eps     Endpoints
	now     func() time.Time
}

// New makes the handlers. streams resolves a caller's stream (another
// organization's is missing); eps may be nil (the circuit then reads
// closed).
func New(st Store, streams hub.Streams, eps Endpoints) *Handlers {
	return &Handlers{st: st, streams: streams, eps: eps, now: time.Now}
}

// DeliveryView is one delivery as the API shows it.
type DeliveryView struct {
	ID             string          `json:"id" doc:"the webhook-id sent with it; stable across retries and replays"`
	StreamID       string          `json:"stream_id"`
	Offset         int64           `json:"offset" doc:"the message's offset in the stream"`
	Status         string          `json:"status" enum:"pending,failed,delivered,dead_lettered,disabled" doc:"failed: the last attempt failed and another is scheduled at next_attempt_at; disabled: left by an earlier version that disabled an endpoint on 410 Gone, made pending again within a second"`
	Parked         bool            `json:"parked" doc:"true for a pending delivery parked until its endpoint can take anything (circuit open, or a receiver that takes nothing or far less than comes): never attempted, next_attempt_at null; it goes out, in order and under this id, once the endpoint can take it"`
	Attempts       int             `json:"attempts" doc:"attempts since the delivery was queued or last replayed (a replay sets it to 0)"`
	LastStatusCode *int            `json:"last_status_code" doc:"HTTP status of the last answer; null when there was none (no attempt yet, a timeout, a connection error). A replay keeps it, and last_error, until the next attempt"`
	LastError      string          `json:"last_error,omitempty"`
	LastLatencyMS  *int64          `json:"last_latency_ms" doc:"duration of the last attempt since the delivery was queued or last replayed; null while attempts is 0"`
	NextAttemptAt  *time.Time      `json:"next_attempt_at" doc:"pending and failed deliveries only; null for a parked one (it waits for its endpoint, not for a time)"`
	CreatedAt      time.Time       `json:"created_at"`
	DeliveredAt    *time.Time      `json:"delivered_at"`
	Payload        json.RawMessage `json:"payload" doc:"the body sent: {stream_id, offset, message}"`
}

// EndpointStatus is the delivery state of a stream's endpoint.
type EndpointStatus struct {
	Circuit  string           `json:"circuit" enum:"closed,open,half_open" doc:"on the answering node"`
	Disabled bool             `json:"disabled" doc:"always false: no answer disables an endpoint, every failed attempt is retried until the retry window ends"`
	Counts   map[string]int64 `json:"counts" doc:"deliveries per status: pending, failed, delivered, dead_lettered, disabled (all nodes)"`
}

// ListResponse is the answer of the delivery listing.
type ListResponse struct {
	Success    bool            `json:"success"`
	StreamID   string          `json:"stream_id"`
	Deliveries []DeliveryView  `json:"deliveries" doc:"newest first: the parked deliveries (pending, parked true) first, as they enter the delivery log after every delivery already in it, then the log's. Every delivery endpoint.counts counts is in some page of the listing of its status"`
	NextCursor *string         `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
	Endpoint   *EndpointStatus `json:"endpoint" doc:"null for a stream that does not deliver by webhook (now): it has no endpoint, and its listing shows what it sent by webhook before"`
}

// ReplayBody selects deliveries to send again: ids, or a time range of
// creation.
type ReplayBody struct {
	DeliveryIDs []string   `json:"delivery_ids,omitempty" doc:"1 to 1,000 ids; an empty list is refused (leave it out to replay by from and to)"`
	From        *time.Time `json:"from,omitempty" doc:"RFC 3339; with to: deliveries created in [from, to), at most 31 days"`
	To          *time.Time `json:"to,omitempty"`
}

// ReplayResponse is the answer of a replay.
type ReplayResponse struct {
	Success  bool     `json:"success"`
	StreamID string   `json:"stream_id"`
	Requeued int64    `json:"requeued" doc:"deliveries made pending again (ones being sent at this moment are left alone)"`
	NotFound []string `json:"not_found,omitzero" required:"false" doc:"with delivery_ids only, then always (empty when none): the ids given that are no delivery of this stream in its delivery log (unknown, another stream's, or no longer kept), each once, in the order sent; nothing was done for them"`
	InFlight []string `json:"in_flight,omitzero" required:"false" doc:"with delivery_ids only, then always (empty when none): the ids given of deliveries a node held for sending at that moment (in its endpoint's queue or being sent), left alone (each once, in the order sent)"`
	Queued   []string `json:"queued,omitzero" required:"false" doc:"with delivery_ids only, then always (empty when none): the ids given of deliveries not sent yet, parked until the endpoint can take them (listed as pending with parked true, and counted as pending); left as they are, they go out once under the same webhook-id (each once, in the order sent)"`
}

// Routes returns the delivery routes for telemetry and event streams.
func (h *Handlers) Routes() []*api.Route {
	var out []*api.Route
	for _, kind := range []string{hub.KindTelemetry, hub.KindEvents} {
		base := "/api/v1/streaming/" + kind + "/deliveries/{stream_id}"
		id := api.Param{Name: "stream_id", In: "path", Type: "string", Required: true}
		out = append(out,
			&api.Route{Method: "GET", Path: base, Tag: "streaming", Summary: "Webhook deliveries of a " + kind + " stream: attempts, answers, errors, dead letters",
				Permission: "streams:read", TokenScope: api.ConsoleReadScope, Response: ListResponse{}, Errors: []int{400, 404},
				Params: []api.Param{id,
					{Name: "status", In: "query", Type: "string", Enum: store.DeliveryStatuses, Description: "pending lists the parked deliveries (parked true) first"},
					{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"},
					{Name: "cursor", In: "query", Type: "string", Description: "next_cursor of the previous page, with the same status; a cursor given with another status is refused naming cursor"}},
				Handler: func(c *api.Ctx) error { return h.list(c, kind) }},
			&api.Route{Method: "POST", Path: base + "/replay", Tag: "streaming", Summary: "Send webhook deliveries of a " + kind + " stream again, by ids or time range (same webhook-ids)",
				Permission: "streams:manage", TokenScope: "webhooks:replay", Params: []api.Param{id}, Request: ReplayBody{}, Response: ReplayResponse{}, Errors: []int{400, 404},
				Handler: func(c *api.Ctx) error { return h.replay(c, kind) }},
		)
	}
	return out
}

// stream resolves the caller's stream of kind or answers stream_not_found.
func (h *Handlers) stream(c *api.Ctx, kind string) (hub.StreamInfo, error) {
	org, env := c.Scope()
	info, ok := h.streams.Stream(org, env, c.PathParam("stream_id"))
	if !ok || info.Kind != kind {
		return info, api.Errf("stream_not_found", "stream not found")
	}
	return info, nil
}

// Status reports the delivery state of a stream's endpoint, for the
// stream status view.
func (h *Handlers) Status(ctx context.Context, org, env, streamID string) (EndpointStatus, error) {
	counts, err := h.st.CountDeliveries(ctx, store.Scope{Org: org, Env: env}, streamID)
	if err != nil {
		return EndpointStatus{}, err
	}
	st := EndpointStatus{Circuit: "closed", Counts: counts}
	if h.eps != nil {
		st.Circuit = h.eps.EndpointState(streamID)
	}
	return st, nil
}

func view(d store.Delivery) DeliveryView {
	v := DeliveryView{ID: d.ID, StreamID: d.StreamID, Offset: d.Offset, Status: d.Status, Parked: d.Park, Attempts: d.Attempts, LastError: d.LastError,
		CreatedAt: d.CreatedAt, Payload: json.RawMessage(d.Payload)}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		v.LastStatusCode = &code
	}
	if d.Attempts > 0 {
		lat := d.LastLatencyMS
		v.LastLatencyMS = &lat
	}
	if (d.Status == store.DeliveryPending || d.Status == store.DeliveryFailed) && !d.NextAttemptAt.IsZero() && !d.Park {
		t := d.NextAttemptAt
		v.NextAttemptAt = &t
	}
	if !d.DeliveredAt.IsZero() {
		t := d.DeliveredAt
		v.DeliveredAt = &t
	}
	if !json.Valid(v.Payload) {
		v.Payload = json.RawMessage("null")
	}
	return v
}

// A cursor is opaque to clients: "p" and a position among the parked
// deliveries (store.ListParkedDeliveries), or "d" and a Seq of the
// delivery log; base 36, sealed with the hash of the listing's stream and
// status (pagecursor), so that it continues only the listing it came from.
const (
	parkedCursor = "p"
	logCursor    = "d"
)

func encodeCursor(kind string, n int64, filters string) string {
	return pagecursor.Seal(kind+strconv.FormatInt(n, 36), filters)
}

func decodeCursor(s, filters string) (kind string, n int64, ok bool) {
	s, ok = pagecursor.Open(s, filters)
	if !ok || len(s) < 2 || (s[:1] != parkedCursor && s[:1] != logCursor) {
		return "", 0, false
	}
	n, err := strconv.ParseInt(s[1:], 36, 64)
	return s[:1], n, err == nil && n > 0
}

func (h *Handlers) list(c *api.Ctx, kind string) error {
	a := c.QueryArgs()
	q := store.DeliveryQuery{Status: string(a.Peek("status")), Limit: DefaultLimit}
	bad := map[string]string{}
	if q.Status != "" && !slices.Contains(store.DeliveryStatuses, q.Status) {
		bad["status"] = "must be " + strings.Join(store.DeliveryStatuses, ", ")
	}
	if v := a.Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > MaxLimit {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		q.Limit = n
	}
	// parked deliveries are pending: listed, first, when pending ones are
	withParked := q.Status == "" || q.Status == store.DeliveryPending
	inParked, parkedBefore := withParked, int64(0)
	hash := pagecursor.Hash("deliveries", kind, c.PathParam("stream_id"), q.Status)
	if v := string(a.Peek("cursor")); v != "" {
		ck, n, ok := decodeCursor(v, hash)
		if !ok || (ck == parkedCursor && !withParked) {
			bad["cursor"] = api.CursorRefusal
		}
		if ck == parkedCursor {
			parkedBefore = n
		} else {
			inParked, q.Before = false, n
		}
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	info, err := h.stream(c, kind)
	if err != nil {
		return err
	}
	sc := store.Scope{Org: info.Org, Env: info.Env}
	var ds []store.Delivery
	var next string
	if inParked {
		var pnext int64
		if ds, pnext, err = h.st.ListParkedDeliveries(c.Context(), sc, info.ID, parkedBefore, q.Limit); err != nil {
			return api.Internal(err)
		}
		if pnext > 0 {
			next = encodeCursor(parkedCursor, pnext, hash)
		}
	}
	switch room := q.Limit - len(ds); {
	case next != "":
	case room > 0:
		q.Limit = room
		logged, lnext, err := h.st.ListDeliveries(c.Context(), sc, info.ID, q)
		if err != nil {
			return api.Internal(err)
		}
		ds = append(ds, logged...)
		if lnext > 0 {
			next = encodeCursor(logCursor, lnext, hash)
		}
	default:
		// the parked ones filled the page: the log follows, if it has any
		q.Limit = 1
		logged, _, err := h.st.ListDeliveries(c.Context(), sc, info.ID, q)
		if err != nil {
			return api.Internal(err)
		}
		if len(logged) > 0 {
			next = encodeCursor(logCursor, logged[0].Seq+1, hash)
		}
	}
	res := ListResponse{Success: true, StreamID: info.ID, Deliveries: make([]DeliveryView, len(ds))}
	if info.Delivery == "webhook" {
		st, err := h.Status(c.Context(), info.Org, info.Env, info.ID)
		if err != nil {
			return api.Internal(err)
		}
		res.Endpoint = &st
	}
	for i, d := range ds {
		res.Deliveries[i] = view(d)
	}
	if next != "" {
		res.NextCursor = &next
	}
	return c.JSON(200, res)
}

func (h *Handlers) replay(c *api.Ctx, kind string) error {
	var b ReplayBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	byIDs, byTime := len(b.DeliveryIDs) > 0, b.From != nil || b.To != nil
	switch {
	case b.DeliveryIDs != nil && !byIDs && byTime:
		// sent as [] beside a range: a list that selects nothing is no
		// selection, and the range alone is what would be replayed
		return api.Validation("validation_failed", map[string]string{"delivery_ids": "must name at least one delivery; leave it out to replay by from and to"})
	case byIDs && byTime:
		return api.Validation("validation_failed", map[string]string{"delivery_ids": "give delivery_ids or from and to, not both"})
	case !byIDs && !byTime:
		return api.Validation("validation_failed", map[string]string{"delivery_ids": "give delivery_ids, or from and to"})
	case byIDs && len(b.DeliveryIDs) > MaxReplayIDs:
		return api.Validation("validation_failed", map[string]string{"delivery_ids": "at most 1000 ids"})
	case byTime && (b.From == nil || b.To == nil):
		f := "from"
		if b.To == nil {
			f = "to"
		}
		return api.Validation("validation_failed", map[string]string{f: "is required with a time range"})
	}
	for i, id := range b.DeliveryIDs {
		if id == "" || len(id) > 200 {
			return api.Validation("validation_failed", map[string]string{"delivery_ids[" + strconv.Itoa(i) + "]": "must be a delivery id"})
		}
	}
	if byTime {
		if !b.From.Before(*b.To) {
			return api.DateRange("from", *b.From, "to", *b.To)
		}
		if b.To.Sub(*b.From) > MaxReplaySpan {
			e := api.DateRange("from", *b.From, "to", *b.To)
			e.Message = "a replay spans at most 31 days"
			return e
		}
	}
	info, err := h.stream(c, kind)
	if err != nil {
		return err
	}
	if info.Delivery != "webhook" {
		// a delivery of a stream without a webhook is dead-lettered as
		// soon as it is due: requeued, it would go nowhere
		return api.Validation("invalid_request", map[string]string{"stream_id": "does not deliver by webhook: there is no webhook_url to send its deliveries to again"})
	}
	r := store.DeliveryRequeue{IDs: b.DeliveryIDs, Now: h.now()}
	if byTime {
		r.From, r.To = *b.From, *b.To
	}
	got, err := h.st.RequeueDeliveries(c.Context(), store.Scope{Org: info.Org, Env: info.Env}, info.ID, r)
	if err != nil {
		return api.Internal(err)
	}
	return c.JSON(200, ReplayResponse{Success: true, StreamID: info.ID, Requeued: got.Requeued, NotFound: got.NotFound, InFlight: got.InFlight, Queued: got.Queued})
}
