package feed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// streamRead is how many entries of a registered stream one read takes.
const streamRead = 256

// statePoll is how often a waiting registered stream's event stream
// looks at its state (paused, stopped) when no entry comes.
const statePoll = time.Second

func (h *Handlers) sseRoute() *api.Route {
	return &api.Route{Method: "GET", Path: "/api/v1/streaming/sse", Tag: "streaming", Permission: "streams:read", TokenScope: "streams:read",
		Summary: "A registered stream's messages as Server-Sent Events: id is the offset, data the websocket's {stream_id, offset, message}; resume with Last-Event-ID; opened with a browser token it ends with event: error token_expired or token_revoked when the token does (see docs/streaming.md#server-sent-events-of-a-registered-stream)",
		Raw:     "text/event-stream", Errors: []int{404, 501}, NoHead: true,
		Params: []api.Param{{Name: "stream_id", In: "query", Type: "string", Required: true, Description: "one stream (a comma-separated list, which the websocket takes, is refused)"},
			{Name: "last_offset", In: "query", Type: "integer", Description: "resume after this offset (Last-Event-ID wins); absent: only new messages"},
			{Name: "epoch", In: "query", Type: "string", Description: "the epoch of the offset (from the subscribed event), 1-64 characters of A-Z a-z 0-9 _ -, only with last_offset or Last-Event-ID; another epoch answers history_lost and delivery restarts at first_available"},
			{Name: "Last-Event-ID", In: "header", Type: "string", Description: "the offset to resume after (a browser's EventSource sends it on reconnect)"},
			{Name: "token", In: "query", Type: "string", Description: "a browser token with the streams:read scope (for this stream) in place of a key; see docs/security.md#browser-tokens"}},
		Handler: h.serveStream}
}

// streamStart is where a registered stream's event stream begins.
type streamStart struct {
	id    string
	next  int64
	epoch string
	lost  bool
}

// streamQuery decodes the registered stream's parameters.
func (h *Handlers) streamQuery(c *api.Ctx) (hub.StreamInfo, *int64, string, error) {
	bad := map[string]string{}
	args := map[string][]string{}
	for k, v := range c.QueryArgs().All() {
		args[string(k)] = append(args[string(k)], string(v))
	}
	for k, vs := range args {
		switch k {
		case "stream_id", "last_offset", "epoch":
			if len(vs) > 1 {
				bad[k] = "must be given once"
			}
		case "token": // a browser token, read by the server's authentication
		default:
			bad[jsonpath.Param(k)] = "unknown parameter"
		}
	}
	id := c.QueryArgs().Peek("stream_id")
	switch {
	case jsonpath.IsBlank(id): // only white space names no stream: missing, as ""
		bad["stream_id"] = "is required"
	case len(id) > 200:
		bad["stream_id"] = "must be at most 200 characters"
	case bytes.IndexByte(id, ',') >= 0:
		bad["stream_id"] = "must name one stream: an event stream follows one (the websocket follows several)"
	}
	var last *int64
	param, raw := "last_offset", string(c.QueryArgs().Peek("last_offset"))
	if v := lastEventID(c); v != "" {
		param, raw = "Last-Event-ID", v
	}
	if raw != "" {
		i, ok := api.DecimalInt(raw)
		n := int64(i)
		if !ok {
			bad[param] = "must be an offset (an integer >= 0)"
		}
		last = &n
	}
	epoch := string(c.QueryArgs().Peek("epoch"))
	switch {
	case !c.QueryArgs().Has("epoch"):
	case !hub.ValidEpoch(epoch):
		bad["epoch"] = hub.EpochRefusal
	case raw == "":
		// as the websocket: an epoch is the history of an offset, and
		// alone it would void a live start (history_lost, a replay)
		bad["epoch"] = "is the history of last_offset (or Last-Event-ID): give both or neither"
	}
	if len(bad) > 0 {
		return hub.StreamInfo{}, nil, "", api.Validation("invalid_request", bad)
	}
	if err := api.CheckStream(c.Principal, string(id)); err != nil {
		return hub.StreamInfo{}, nil, "", err
	}
	org, env := c.Scope()
	info, ok := h.streams.Stream(org, env, string(id))
	if !ok {
		return info, nil, "", api.Errf("stream_not_found", "stream not found")
	}
	if info.Delivery == "webhook" {
		return info, nil, "", api.Validation("invalid_request", map[string]string{"stream_id": "is a webhook stream: its messages go to its webhook_url"})
	}
	return info, last, epoch, nil
}

// serveStream serves a registered stream as an event stream.
func (h *Handlers) serveStream(c *api.Ctx) error {
	if h.streams == nil || h.log == nil {
		return api.NotImplemented("server-sent events of registered streams")
	}
	info, last, epoch, err := h.streamQuery(c)
	if err != nil {
		return err
	}
	st, err := h.streamPosition(c.Context(), info.ID, last, epoch)
	if err != nil {
		return api.Internal(err)
	}
	org, env := c.Scope()
	return h.start(c, func(ctx context.Context, s *eventStream) error {
		if h.counter != nil {
			h.counter.Connected(st.id, 1)
			defer h.counter.Connected(st.id, -1)
		}
		return h.follow(ctx, s, org, env, st)
	})
}

// streamPosition is where delivery starts, by the websocket's rules
// (hub.Resume): after the given offset of the stream's current epoch,
// else (another epoch) at the oldest retained offset with history_lost,
// else live.
func (h *Handlers) streamPosition(ctx context.Context, id string, last *int64, epoch string) (streamStart, error) {
	p, err := hub.Resume(ctx, h.log, id, last, epoch)
	if err != nil {
		return streamStart{}, fmt.Errorf("feed: %w", err)
	}
	return streamStart{id: id, next: p.Next, epoch: p.Epoch, lost: p.Lost}, nil
}

// notice is a control event of a registered stream's event stream, in
// the websocket's shape.
type notice struct {
	Type           string `json:"type"`
	Code           string `json:"code,omitempty"`
	StreamID       string `json:"stream_id"`
	Offset         int64  `json:"offset,omitempty"`
	Epoch          string `json:"epoch,omitempty"`
	FirstAvailable int64  `json:"first_available,omitempty"`
	Message        string `json:"message,omitempty"`
}

func historyLost(id, epoch string, first int64) notice {
	return notice{Type: "error", Code: "history_lost", StreamID: id, Epoch: epoch, FirstAvailable: first,
		Message: hub.HistoryLostMessage}
}

// follow writes a registered stream's entries from st on: a subscribed
// event first (the epoch), then one default event per entry (id: its
// offset), errors as error events, a heartbeat comment when idle.
func (h *Handlers) follow(ctx context.Context, s *eventStream, org, env string, st streamStart) error {
	if err := s.event("", "subscribed", notice{Type: "subscribed", StreamID: st.id, Offset: st.next, Epoch: st.epoch}); err != nil {
		return err
	}
	if st.lost {
		if err := s.event("", "error", historyLost(st.id, st.epoch, st.next)); err != nil {
			return err
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	idle := time.Now()
	var cache hub.StreamCache
	for {
		info, ok := cache.Stream(h.streams, org, env, st.id)
		if !ok || info.State == hub.StateStopped || info.Delivery == "webhook" {
			n := notice{Type: "error", Code: "stream_stopped", StreamID: st.id, Message: "the stream was stopped"}
			if ok && info.State != hub.StateStopped {
				// configured to deliver by webhook: this response no
				// longer receives its messages, as a new one could not
				n = notice{Type: "error", Code: "webhook_delivery", StreamID: st.id, Message: "the stream was configured to deliver by webhook: its messages go to its webhook_url"}
			}
			if err := s.event("", "error", n); err != nil {
				return err
			}
			return s.flush()
		}
		var es []hub.Entry
		if info.State != hub.StatePaused {
			var err error
			if es, err = h.log.Read(ctx, st.id, st.next, streamRead); err != nil {
				return err
			}
			lost, err := h.checkEpoch(ctx, s, &st)
			if err != nil {
				return err
			}
			if lost {
				continue // what was read belongs to the new history: read it from its start
			}
		}
		if len(es) > 0 {
			if err := h.writeEntries(s, &st, es); err != nil {
				return err
			}
			idle = time.Now()
			continue
		}
		if time.Since(idle) >= h.cfg.Heartbeat {
			s.w.WriteString(": heartbeat\n\n")
			if err := s.flush(); err != nil {
				return err
			}
			idle = time.Now()
		}
		wait := min(statePoll, h.cfg.Heartbeat)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-h.log.Wait(st.id, st.next):
		case <-t.C:
		}
		t.Stop()
	}
}

// checkEpoch sends history_lost and restarts at the oldest retained
// offset when the stream's epoch changed since st's.
func (h *Handlers) checkEpoch(ctx context.Context, s *eventStream, st *streamStart) (lost bool, err error) {
	cur, err := h.log.Epoch(ctx, st.id)
	if err != nil || cur == st.epoch {
		return false, err
	}
	first, err := hub.FirstAvailable(ctx, h.log, st.id)
	if err != nil {
		return false, err
	}
	st.epoch, st.next = cur, first
	if err := s.event("", "error", historyLost(st.id, cur, first)); err != nil {
		return true, err
	}
	return true, s.flush()
}

// writeEntries writes entries as events: an offset past retention is
// told with offsets_expired (never skipped silently).
func (h *Handlers) writeEntries(s *eventStream, st *streamStart, es []hub.Entry) error {
	if es[0].Offset > st.next {
		if err := s.event("", "error", notice{Type: "error", Code: "offsets_expired", StreamID: st.id, FirstAvailable: es[0].Offset,
			Message: "offsets before first_available are past retention"}); err != nil {
			return err
		}
	}
	for _, e := range es {
		data := struct {
			StreamID string          `json:"stream_id"`
			Offset   int64           `json:"offset"`
			Message  json.RawMessage `json:"message"`
		}{st.id, e.Offset, e.Data}
		if err := s.event(strconv.FormatInt(e.Offset, 10), "", data); err != nil {
			return err
		}
		st.next = e.Offset + 1
	}
	if err := s.flush(); err != nil {
		return err
	}
	if h.counter != nil {
		h.counter.Count(st.id, "delivered", int64(len(es)))
	}
	return nil
}
