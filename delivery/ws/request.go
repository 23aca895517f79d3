package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// RequestError is a request Serve refused before the upgrade. Serve has
// written the response: Status and the general error body
// {"error":{"code","message","details"},"request_id"}.
type RequestError struct {
	Status  int
	Code    string // invalid_request, stream_not_found, service_unavailable, internal_error
	Message string
	Details map[string]string // the refused query parameters, by name
	Cause   error
}

func (e *RequestError) Error() string { return "ws: " + e.Code + ": " + e.Message }

// Unwrap gives hub.ErrStreamNotFound for stream_not_found, else the cause.
func (e *RequestError) Unwrap() error {
	if e.Code == "stream_not_found" {
		return hub.ErrStreamNotFound
	}
	return e.Cause
}

func badRequest(format string, args ...any) *RequestError {
	return &RequestError{Status: fasthttp.StatusBadRequest, Code: "invalid_request", Message: fmt.Sprintf(format, args...)}
}

// request is a validated upgrade request.
type request struct {
	bin         bool // encoding=msgpack
	compression bool // a followed stream asks for compression
	subs        []subscription
	feed        *feedStart // feed=true: the organization's feed from here
}

// subscription is a stream to follow from a start.
type subscription struct {
	info  hub.StreamInfo
	start start
}

// start is where a subscription begins.
type start struct {
	next  int64  // the first offset delivered
	epoch string // the stream's epoch when next was fixed
	lost  bool   // the client's position was of another epoch: next is the oldest retained offset
}

// Protocol is the websocket subprotocol the server selects when the client
// offers it. A browser, which cannot set headers on a websocket, sends its
// key as a second offered subprotocol, KeyProtocolPrefix followed by the
// key (new WebSocket(url, ["fleethub.v1", "fhk." + key])): the API layer
// authenticates with it, and the response names Protocol only.
const (
	Protocol          = "fleethub.v1"
	KeyProtocolPrefix = "fhk."
)

// checkProtocols refuses a key offered as a subprotocol without Protocol:
// the server would select no subprotocol, and a browser fails a handshake
// whose response names none of those it offered.
func checkProtocols(rc *fasthttp.RequestCtx) error {
	offered := rc.Request.Header.Peek("Sec-WebSocket-Protocol")
	if len(offered) == 0 {
		return nil
	}
	key := false
	for p := range strings.SplitSeq(string(offered), ",") {
		p = strings.TrimSpace(p)
		if p == Protocol {
			return nil
		}
		key = key || strings.HasPrefix(p, KeyProtocolPrefix)
	}
	if key {
		return badRequest("a key sent as the subprotocol %s<key> needs the subprotocol %s offered with it", KeyProtocolPrefix, Protocol)
	}
	return nil
}

// parseRequest validates the query and finds each stream's start offset
// and the feed's start; feedOK says whether the caller may follow the
// feed.
func (s *Server) parseRequest(rc *fasthttp.RequestCtx, org, env, keyID string, feedOK bool) (*request, error) {
	if err := checkProtocols(rc); err != nil {
		return nil, err
	}
	args := rc.QueryArgs()
	bad := map[string]string{}
	refuse := func(name, msg string) {
		if _, ok := bad[name]; !ok {
			bad[name] = msg
		}
	}
	withFeed, msg := parseFeedFlag(rc)
	if msg != "" {
		refuse("feed", msg)
	}
	seen := map[string]bool{}
	for k := range args.All() {
		name := string(k)
		switch {
		case !withFeed && !wsParams[name]:
			// with feed=true the others are the feed's, which openFeed checks
			refuse(jsonpath.Param(name), "unknown parameter")
		case seen[name] && wsOnce[name]:
			refuse(name, "must be given once")
		}
		seen[name] = true
	}
	req := &request{}
	switch enc := string(args.Peek("encoding")); enc {
	case "", "json":
	case "msgpack":
		req.bin = true
	default:
		refuse("encoding", "must be json or msgpack")
	}
	var lastOffset *int64
	if args.Has("last_offset") {
		if n, err := parseOffset(string(args.Peek("last_offset"))); err != nil {
			refuse("last_offset", "must be an integer >= 0")
		} else {
			lastOffset = &n
		}
	}
	var epoch string
	if args.Has("epoch") {
		epoch = string(args.Peek("epoch"))
		switch {
		case !hub.ValidEpoch(epoch):
			refuse("epoch", hub.EpochRefusal)
		case !args.Has("last_offset"):
			refuse("epoch", "is the history of last_offset: give both or neither")
		}
	}
	var ids []string
	ided := map[string]bool{}
	for _, v := range args.PeekMulti("stream_id") {
		for id := range strings.SplitSeq(string(v), ",") {
			switch id = strings.TrimSpace(id); {
			case id == "":
				// an entry of the list names no stream: refused, as a blank
				// id is everywhere, never skipped
				refuse("stream_id", jsonpath.BlankRefusal+" (each id of the list)")
			case !ided[id]:
				ided[id] = true
				ids = append(ids, id)
			}
		}
	}
	switch {
	case len(ids) == 0 && !withFeed:
		refuse("stream_id", "is required (or feed=true)")
	case len(ids) == 0 && args.Has("last_offset"):
		refuse("last_offset", "is a stream's position: give stream_id (the feed resumes with after)")
	case len(ids) > s.cfg.MaxSubscriptions:
		refuse("stream_id", fmt.Sprintf("at most %d streams per connection", s.cfg.MaxSubscriptions))
	}
	if len(bad) > 0 {
		return nil, paramsRefused(bad)
	}
	var err error
	for _, id := range ids {
		info, err := s.lookup(org, env, id)
		if err != nil {
			return nil, err
		}
		sub := subscription{info: info}
		if info.State != hub.StateStopped {
			// the start offset is fixed now: whatever is appended after the
			// 101 response is delivered
			// not rc as the parent: a RequestCtx is recycled after the
			// handler, and context.WithTimeout would watch it from a goroutine
			ctx, cancel := context.WithTimeout(context.Background(), acksTimeout)
			sub.start, err = s.position(ctx, keyID, info, lastOffset, epoch)
			cancel()
			if err != nil {
				return nil, &RequestError{Status: fasthttp.StatusInternalServerError, Code: "internal_error", Message: "could not read the stream position", Cause: err}
			}
			req.compression = req.compression || info.Compression
		}
		req.subs = append(req.subs, sub)
	}
	if withFeed {
		// fixed now, like a stream's start: what comes after the 101 is delivered
		ctx, cancel := context.WithTimeout(context.Background(), acksTimeout)
		req.feed, err = s.openFeed(ctx, org, env, feedOK, feedQuery(rc))
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return req, nil
}

// wsParams are the query parameters of a connection that does not
// follow the feed.
var wsParams = map[string]bool{"stream_id": true, "encoding": true, "last_offset": true, "epoch": true, "api_key": true, "token": true, "feed": true}

// wsOnce are the connection's own parameters that take one value (all
// but stream_id, which is repeatable): given twice, which one was meant
// is not known, so neither is read.
var wsOnce = map[string]bool{"encoding": true, "last_offset": true, "epoch": true, "api_key": true, "token": true, "feed": true}

// paramsRefused is the refusal of query parameters by name: 400
// invalid_request, details naming each, the message naming them all.
func paramsRefused(bad map[string]string) *RequestError {
	msgs := make([]string, 0, len(bad))
	for k, v := range bad {
		msgs = append(msgs, k+": "+v)
	}
	slices.Sort(msgs)
	return &RequestError{Status: fasthttp.StatusBadRequest, Code: "invalid_request", Message: strings.Join(msgs, "; "), Details: bad}
}

// parseOffset reads last_offset as every integer query parameter of the
// API is read (api.DecimalInt): digits only, no sign, no leading zero but
// for 0 itself (strconv.ParseInt alone takes +5 and 05).
func parseOffset(s string) (int64, error) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, errors.New("ws: bad offset")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("ws: bad offset")
	}
	return n, nil
}

// lookup finds a stream of the scope that a websocket may follow.
func (s *Server) lookup(org, env, id string) (hub.StreamInfo, error) {
	info, ok := s.streams.Stream(org, env, id)
	if !ok {
		return info, &RequestError{Status: fasthttp.StatusNotFound, Code: "stream_not_found", Message: fmt.Sprintf("stream %q not found", id)}
	}
	if info.Delivery == "webhook" {
		e := badRequest("stream_id: %q is a webhook stream: its messages go to its webhook_url", id)
		e.Details = map[string]string{"stream_id": "is a webhook stream: its messages go to its webhook_url"}
		return info, e
	}
	return info, nil
}

// position is where a new subscription starts: after lastOffset when
// given; for an at_least_once stream after the position this key
// acknowledged last; otherwise the next offset appended (live). A
// position of another epoch than the stream's (epoch, or the ack's) is
// lost: the start is then the oldest retained offset. A position past the
// log's head is moved back to the head: the client gets duplicates rather
// than a silent gap (hub.Resume, as every reader of the stream logs).
func (s *Server) position(ctx context.Context, keyID string, info hub.StreamInfo, lastOffset *int64, epoch string) (start, error) {
	after := lastOffset
	if after == nil && info.AtLeastOnce {
		acked, ok, err := s.acks.Acked(ctx, keyID, info.ID)
		if err != nil {
			return start{}, err
		}
		if ok {
			after, epoch = &acked.Offset, acked.Epoch
		}
	}
	p, err := hub.Resume(ctx, s.log, info.ID, after, epoch)
	if err != nil {
		return start{}, err
	}
	return start{next: p.Next, epoch: p.Epoch, lost: p.Lost}, nil
}

// reply writes a refused request's JSON error and returns the error.
func reply(rc *fasthttp.RequestCtx, err error) error {
	var re *RequestError
	var fe *feedError
	if errors.As(err, &fe) {
		details := maps.Clone(fe.details)
		if fe.firstAvailable != "" {
			details = map[string]string{"first_available": fe.firstAvailable}
		}
		writeErrorMap(rc, fe.status(), fe.code, fe.message, details)
		return &RequestError{Status: fe.status(), Code: fe.code, Message: fe.message, Details: fe.details, Cause: err}
	}
	if !errors.As(err, &re) {
		re = &RequestError{Status: fasthttp.StatusInternalServerError, Code: "internal_error", Message: "internal error", Cause: err}
	}
	writeErrorMap(rc, re.Status, re.Code, re.Message, re.Details)
	return re
}

func writeError(rc *fasthttp.RequestCtx, status int, code, message string) {
	writeErrorMap(rc, status, code, message, nil)
}

// writeErrorMap writes the JSON error with details ({} when nil: the
// general form always has its three fields, as api's errors do).
func writeErrorMap(rc *fasthttp.RequestCtx, status int, code, message string, details map[string]string) {
	if details == nil {
		details = map[string]string{}
	}
	eo := errorObject{Code: code, Message: message, Details: details}
	body, _ := json.Marshal(errorBody{
		Error:     eo,
		RequestID: string(rc.Response.Header.Peek("X-Request-Id")),
	})
	rc.Response.Header.Del("Sec-WebSocket-Extensions")
	rc.SetStatusCode(status)
	rc.SetContentType("application/json")
	rc.SetBody(body)
}

type errorBody struct {
	Error     errorObject `json:"error"`
	RequestID string      `json:"request_id"`
}

type errorObject struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Details map[string]string `json:"details"`
}

// handshakeError is the upgraders' error reply (not a websocket
// handshake, wrong method).
func handshakeError(rc *fasthttp.RequestCtx, status int, reason error) {
	code := "invalid_request"
	switch status {
	case fasthttp.StatusMethodNotAllowed:
		code = "method_not_allowed"
	case fasthttp.StatusForbidden:
		code = "insufficient_permissions"
	case fasthttp.StatusInternalServerError:
		code = "internal_error"
	}
	rc.Response.Header.Set("Sec-WebSocket-Version", "13")
	writeError(rc, status, code, reason.Error())
}
