// Package feed serves GET /api/v1/streaming/feed, the organization's
// messages read from the durable bus log (hub/feed): a page of entries
// as JSON, or, asked with Accept: text/event-stream, the same entries
// live as Server-Sent Events; and GET /api/v1/streaming/sse, a
// registered stream's messages as Server-Sent Events.
//
// A Handlers is safe for concurrent use. The feed's event stream is
// written on the hijacked connection (the server must keep hijacked
// connections, as api.Server does): it holds no RequestCtx and no buffer
// of fasthttp's, and has a goroutine only while it writes or pulls.
// Streams of one organization, environment, types and filter that follow
// the head share one tail (tail.go), which reads, filters and encodes
// each entry once; a stream resuming from an old cursor, or one that fell
// behind its tail, pulls on its own until it reaches the head. A stream
// ends when the client goes away (a write fails; a heartbeat every
// Heartbeat finds it), when its browser token ends, when Shutdown is
// called, or when the server's context ends. A registered stream's event
// stream is written by fasthttp's body stream writer after the handler
// returned.
package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/valyala/fasthttp"
)

// Config of the handlers. Zero fields take the defaults.
type Config struct {
	// Heartbeat is the interval of the comment lines an idle event
	// stream sends (default 15 s).
	Heartbeat time.Duration
	// Retry is the reconnection delay an event stream asks of its
	// client (the retry: field; default 3 s).
	Retry time.Duration
	// WriteTimeout bounds one write of an event stream (default 30 s).
	WriteTimeout time.Duration
	// TailEntries is how many events a shared tail keeps for its clients
	// (rounded up to a power of two; default 2048): a client further
	// behind than that leaves the tail and reads on its own until it
	// catches up.
	TailEntries int
	// Logger records why an event stream ended other than by its client
	// leaving or the server stopping (default slog.Default()).
	Logger *slog.Logger
}

// Handlers serves the feed routes.
type Handlers struct {
	cfg     Config
	feed    *feed.Feed
	streams hub.Streams
	log     hub.Log
	counter hub.Counter // streams' counter when it is one: connected clients, delivered

	mu     sync.Mutex // guards closed
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup // running event streams and tails

	ctx    context.Context // ends on Shutdown: the feed's event streams and tails
	cancel context.CancelFunc
	tmu    sync.Mutex       // guards tails
	tails  map[string]*tail // by tailKey
}

// New makes the handlers over a feed (nil: the feed answers 501) and the registered streams and
// their log; streams and log may be nil (the registered streams' event
// stream answers 501).
func New(cfg Config, f *feed.Feed, streams hub.Streams, log hub.Log) *Handlers {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 15 * time.Second
	}
	if cfg.Retry <= 0 {
		cfg.Retry = 3 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.TailEntries <= 0 {
		cfg.TailEntries = 2048
	}
	h := &Handlers{cfg: cfg, feed: f, streams: streams, log: log, done: make(chan struct{}), tails: map[string]*tail{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.counter, _ = streams.(hub.Counter)
	return h
}

// Shutdown ends every event stream and waits for them until ctx ends.
func (h *Handlers) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.done)
		h.cancel()
	}
	h.mu.Unlock()
	ended := make(chan struct{})
	go func() { h.wg.Wait(); close(ended) }()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("feed: event streams still running: %w", ctx.Err())
	}
}

// begin registers an event stream; false once shut down.
func (h *Handlers) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.wg.Add(1)
	return true
}

// FeedView is a page of the feed.
type FeedView struct {
	Success    bool        `json:"success"`
	Entries    []EntryView `json:"entries"`
	NextCursor string      `json:"next_cursor" doc:"where to continue: past the last entry, or past what was looked at when nothing matched; opaque"`
}

// EntryView is one entry: the cursor just past it, its type and the
// message (an event or a telemetry message, as a stream delivers it).
type EntryView struct {
	Cursor  string          `json:"cursor" doc:"opaque; resume after this entry with after=<cursor> or Last-Event-ID"`
	Type    string          `json:"type" enum:"events,telemetry"`
	Message json.RawMessage `json:"message"`
}

// Routes returns the feed routes.
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{
		{Method: "GET", Path: "/api/v1/streaming/feed", Tag: "streaming", Permission: "streams:read", TokenScope: "feed:read",
			Summary: "The organization's events or telemetry from the durable bus log, oldest first, by cursor; with Accept: text/event-stream the same feed live as Server-Sent Events (an event stream opened with a browser token ends with event: error token_expired or token_revoked when the token does). The cursors are those of the websocket's feed subscription too (see docs/streaming.md#the-feed)",
			Params:  feedParams, Response: FeedView{}, Errors: []int{410}, Handler: h.serveFeed},
		h.sseRoute(),
	}
}

var feedParams = []api.Param{
	{Name: "token", In: "query", Type: "string", Description: "a browser token with the feed:read scope in place of a key, for clients that cannot set Authorization (EventSource); see docs/security.md#browser-tokens"},
	{Name: "types", In: "query", Repeatable: true, Type: "string", Enum: []string{"events", "telemetry"}, Description: "repeatable; default events"},
	{Name: "after", In: "query", Type: "string", Description: "a cursor (opaque): entries after it; now: only new ones; absent: from the oldest retained"},
	{Name: "limit", In: "query", Type: "integer", Description: "1-1000, default 100 (pull)"},
	{Name: "last", In: "query", Type: "integer", Description: "1-1000 (pull): the newest last entries the filters take, oldest first, instead of entries after a cursor; next_cursor continues after them. Not with after, limit or wait, nor with an event stream"},
	{Name: "wait", In: "query", Type: "integer", Description: "0-30 seconds to wait for a first entry (pull), default 0"},
	{Name: "category", In: "query", Repeatable: true, Type: "string", Description: "events; repeatable (any of them)"},
	{Name: "severity", In: "query", Repeatable: true, Type: "string", Description: "events; repeatable"},
	{Name: "priority", In: "query", Repeatable: true, Type: "string", Description: "events; repeatable"},
	{Name: "event_type", In: "query", Repeatable: true, Type: "string", Description: "events; repeatable"},
	{Name: "vehicle_id", In: "query", Repeatable: true, Type: "string", Description: "events (source.vehicle_id) and telemetry; repeatable"},
	{Name: "driver_id", In: "query", Repeatable: true, Type: "string", Description: "events; repeatable"},
	{Name: "trip_id", In: "query", Repeatable: true, Type: "string", Description: "events (source.trip_id); repeatable"},
	{Name: "data_types", In: "query", Repeatable: true, Type: "string", Description: "telemetry; repeatable"},
	{Name: "Last-Event-ID", In: "header", Type: "string", Description: "event stream: the cursor to resume after (a browser's EventSource sends it on reconnect); it wins over after"},
}

// topicOf maps the types parameter to bus topics and back.
var topicOf = map[string]string{"events": hub.TopicEvents, "telemetry": hub.TopicTelemetry}

func typeOf(topic string) string {
	if topic == hub.TopicTelemetry {
		return "telemetry"
	}
	return "events"
}

// query decodes the feed's parameters, and last (0 when not asked);
// bad ones answer invalid_request naming them.
func (h *Handlers) query(c *api.Ctx) (q feed.Query, last int, err error) {
	org, env := c.Scope()
	args := queryArgs(c)
	mode := readPull
	if wantsEvents(c) {
		mode = readEvents
	}
	return parseParams(org, env, args, mode)
}

// queryArgs are the request's query parameters but a browser token (read
// by the server's authentication).
func queryArgs(c *api.Ctx) map[string][]string {
	args := map[string][]string{}
	for k, v := range c.QueryArgs().All() {
		args[string(k)] = append(args[string(k)], string(v))
	}
	delete(args, "token")
	return args
}

// How a query reads the feed: a pull, an event stream, or a websocket
// subscription.
const (
	readPull = iota
	readEvents
	readWebsocket
)

// parseParams decodes the feed's parameters, and last (0 when not
// asked); bad ones answer invalid_request naming them.
func parseParams(org, env string, args map[string][]string, mode int) (q feed.Query, last int, err error) {
	q = feed.Query{Org: org, Env: env, Limit: 100}
	bad := map[string]string{}
	known := map[string]bool{}
	for _, p := range feedParams {
		known[p.Name] = p.In == "query" && p.Name != "token"
	}
	for k, vs := range args {
		switch {
		case !known[k]:
			bad[jsonpath.Param(k)] = "unknown parameter"
			continue
		case mode == readWebsocket && (k == "limit" || k == "wait"):
			bad[k] = "is for a pull: a websocket subscription sends entries as they come"
			continue
		}
		for _, v := range vs {
			switch {
			case strings.TrimSpace(v) == "":
				bad[k] = "must be a non-empty value of at most 200 characters"
			case k == "after":
				// a cursor holds every partition's offset: on a bus of many
				// partitions it is longer than a filter value, and
				// feed.ParseCursor bounds it
			case utf8.RuneCountInString(v) > 200:
				bad[k] = "must be a non-empty value of at most 200 characters"
			}
		}
		if len(vs) > 1 && (k == "after" || k == "limit" || k == "wait" || k == "last") {
			bad[k] = "must be given once"
		}
	}
	for _, t := range args["types"] {
		topic, ok := topicOf[t]
		if !ok {
			bad["types"] = "must be events or telemetry (repeatable)"
			continue
		}
		if !contains(q.Topics, topic) {
			q.Topics = append(q.Topics, topic)
		}
	}
	if len(q.Topics) == 0 {
		q.Topics = []string{hub.TopicEvents}
	}
	if v := args["limit"]; len(v) == 1 {
		n, ok := api.DecimalInt(v[0])
		if !ok || n < 1 || n > feed.MaxLimit {
			bad["limit"] = "must be an integer from 1 to 1000"
		}
		q.Limit = n
	}
	if v := args["wait"]; len(v) == 1 {
		n, ok := api.DecimalInt(v[0])
		if !ok || n < 0 || n > int(feed.MaxWait/time.Second) {
			bad["wait"] = "must be an integer from 0 to 30 (seconds)"
		}
		q.Wait = time.Duration(n) * time.Second
	}
	if v := args["after"]; len(v) == 1 {
		q.After = v[0]
	}
	if v := args["last"]; len(v) == 1 {
		n, ok := api.DecimalInt(v[0])
		switch {
		case !ok || n < 1 || n > feed.MaxLimit:
			bad["last"] = "must be an integer from 1 to 1000"
		case len(args["after"]) > 0 || len(args["limit"]) > 0 || len(args["wait"]) > 0:
			bad["last"] = "reads the newest entries: not with after, limit or wait"
		case mode == readEvents:
			bad["last"] = "is for a pull: an event stream starts after a cursor (pull with last, then follow from its next_cursor)"
		}
		last = n
	}
	if len(bad) > 0 {
		return q, 0, api.Validation("invalid_request", bad)
	}
	m, err := compile(q.Topics, args)
	if err != nil {
		return q, 0, err
	}
	q.Match = m
	return q, last, nil
}

// WebsocketQuery is a websocket feed subscription's query
// (delivery/ws's FeedSource.Query): the pull's parameters but limit and
// wait, each with its values (last as its decimal). A refused parameter
// is an error naming each ("types: must be events or telemetry"), whose
// RefusedParams gives them by name.
func WebsocketQuery(org, env string, params map[string][]string) (feed.Query, int, error) {
	q, last, err := parseParams(org, env, params, readWebsocket)
	var ae *api.Error
	if errors.As(err, &ae) {
		if fields, ok := ae.Details.(map[string]string); ok {
			msgs := make([]string, 0, len(fields))
			for k, v := range fields {
				msgs = append(msgs, k+": "+v)
			}
			slices.Sort(msgs)
			return q, 0, &paramsError{msg: strings.Join(msgs, "; "), fields: fields}
		}
		return q, 0, errors.New(ae.Message)
	}
	return q, last, err
}

// paramsError is a refusal of feed parameters, by name.
type paramsError struct {
	msg    string
	fields map[string]string
}

func (e *paramsError) Error() string { return e.msg }

// RefusedParams are the refused parameters and their messages.
func (e *paramsError) RefusedParams() map[string]string { return e.fields }

// EncodeEntry is an entry as the pull, the event stream and the websocket
// send it: {"cursor","type","message"} (delivery/ws's FeedSource.Encode).
func EncodeEntry(e feed.Entry) ([]byte, error) {
	v, err := entryView(e)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("feed: encode entry: %w", err)
	}
	return b, nil
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// matcher takes events by one program and telemetry by another (nil:
// every message of that kind).
type matcher struct{ events, telemetry *expr.Program }

func (m matcher) Match(env *event.Envelope) bool {
	switch {
	case env.Event != nil:
		return m.events == nil || m.events.Match(env)
	case env.Telemetry != nil:
		return m.telemetry == nil || m.telemetry.Match(env)
	}
	return false
}

// eventParams apply to events only, telemetryParams to telemetry only.
var (
	eventParams     = []string{"category", "severity", "priority", "event_type", "driver_id", "trip_id"}
	telemetryParams = []string{"data_types"}
)

// compile turns the filter parameters into the streams' filter
// programs; a parameter of a type not asked for is refused.
func compile(topics []string, args map[string][]string) (feed.Matcher, error) {
	var m matcher
	wantEvents, wantTelemetry := contains(topics, hub.TopicEvents), contains(topics, hub.TopicTelemetry)
	for _, p := range eventParams {
		if len(args[p]) > 0 && !wantEvents {
			return nil, api.Validation("invalid_request", map[string]string{p: "filters events: ask for types=events"})
		}
	}
	for _, p := range telemetryParams {
		if len(args[p]) > 0 && !wantTelemetry {
			return nil, api.Validation("invalid_request", map[string]string{p: "filters telemetry: ask for types=telemetry"})
		}
	}
	if wantEvents {
		spec := expr.Spec{Kind: expr.KindEvent, Categories: args["category"], Severities: args["severity"], Priorities: args["priority"],
			VehicleIDs: args["vehicle_id"], DriverIDs: args["driver_id"]}
		if v := args["event_type"]; len(v) > 0 {
			spec.Conditions = append(spec.Conditions, expr.Condition{Field: "event_type", Operator: "in", Value: v})
		}
		if v := args["trip_id"]; len(v) > 0 {
			spec.Conditions = append(spec.Conditions, expr.Condition{Field: "source.trip_id", Operator: "in", Value: v})
		}
		prog, err := expr.Compile(spec)
		if err != nil {
			return nil, fieldError(err, spec)
		}
		m.events = prog
	}
	if wantTelemetry {
		spec := expr.Spec{Kind: expr.KindTelemetry, VehicleIDs: args["vehicle_id"], DataTypes: args["data_types"]}
		prog, err := expr.Compile(spec)
		if err != nil {
			return nil, fieldError(err, spec)
		}
		m.telemetry = prog
	}
	return m, nil
}

// paramOf names the parameter of a filter's body path.
var paramOf = []struct{ path, param string }{
	{"event_filters.categories", "category"}, {"event_filters.severity_levels", "severity"},
	{"event_filters.priority_levels", "priority"}, {"event_filters.vehicle_ids", "vehicle_id"},
	{"vehicles", "vehicle_id"}, {"event_filters.driver_ids", "driver_id"}, {"data_types", "data_types"},
}

// fieldError names the parameter of a compilation error.
func fieldError(err error, spec expr.Spec) error {
	var fe *expr.FieldError
	if !errors.As(err, &fe) {
		return api.Internal(err)
	}
	param := "filter"
	for _, p := range paramOf {
		if strings.HasPrefix(fe.Field, p.path) {
			param = p.param
		}
	}
	if strings.Contains(fe.Field, "custom_conditions") {
		param = "event_type"
		if len(spec.Conditions) > 0 && spec.Conditions[len(spec.Conditions)-1].Field == "source.trip_id" && strings.Contains(fe.Field, fmt.Sprintf("[%d]", len(spec.Conditions)-1)) {
			param = "trip_id"
		}
	}
	return api.Validation("invalid_request", map[string]string{param: fe.Message})
}

// feedErr maps the feed's errors.
func feedErr(err error, param string) error {
	var ee *feed.ExpiredError
	switch {
	case errors.As(err, &ee):
		return api.Errf("cursor_expired", "the cursor is older than the oldest retained message; continue from first_available").
			WithDetails(map[string]string{"first_available": ee.FirstAvailable})
	case errors.Is(err, feed.ErrBadCursor):
		return api.Validation("invalid_request", map[string]string{param: "is not a cursor of this feed for these types"})
	}
	return api.Internal(err)
}

// serveFeed answers a page, or an event stream when asked for one.
func (h *Handlers) serveFeed(c *api.Ctx) error {
	if h.feed == nil {
		return api.NotImplemented("the feed over this bus")
	}
	q, last, err := h.query(c)
	if err != nil {
		return err
	}
	if wantsEvents(c) {
		return h.streamFeed(c, q)
	}
	var page feed.Page
	if last > 0 {
		page, err = h.feed.Last(c.Context(), q, last)
	} else {
		page, err = h.pull(c.Context(), q)
	}
	if err != nil {
		return feedErr(err, "after")
	}
	out := FeedView{Success: true, Entries: make([]EntryView, 0, len(page.Entries)), NextCursor: page.Next}
	for _, e := range page.Entries {
		v, err := entryView(e)
		if err != nil {
			return api.Internal(err)
		}
		out.Entries = append(out.Entries, v)
	}
	return c.JSON(200, out)
}

// pull is the feed's Pull, except that a waiting pull answers its page
// so far (empty, with the position it reached) when Shutdown is called,
// so that a long poll does not hold the server's shutdown.
func (h *Handlers) pull(ctx context.Context, q feed.Query) (feed.Page, error) {
	pos, err := h.feed.Start(ctx, &q)
	if err != nil || q.Wait <= 0 {
		if err != nil {
			return feed.Page{}, err
		}
		return h.feed.PullFrom(ctx, q, pos)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	page, err := h.feed.PullFrom(wctx, q, pos)
	select {
	case <-h.done:
		if err != nil && ctx.Err() == nil {
			return feed.Page{Entries: nil, Next: pos.Cursor(q.Topics)}, nil
		}
	default:
	}
	return page, err
}

func entryView(e feed.Entry) (EntryView, error) {
	b, err := e.MessageJSON()
	if err != nil {
		return EntryView{}, fmt.Errorf("feed: encode entry: %w", err)
	}
	return EntryView{Cursor: e.Cursor, Type: typeOf(e.Topic), Message: b}, nil
}

// wantsEvents reports whether the client asked for an event stream.
func wantsEvents(c *api.Ctx) bool {
	return strings.Contains(string(c.Request.Header.Peek(fasthttp.HeaderAccept)), "text/event-stream")
}

// logger is cfg.Logger, else the default.
func (h *Handlers) logger() *slog.Logger {
	if h.cfg.Logger != nil {
		return h.cfg.Logger
	}
	return slog.Default()
}
