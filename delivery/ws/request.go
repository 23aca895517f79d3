package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/hub"
)

// RequestError is a request Serve refused before the upgrade. Serve has
// written the response: Status and the general error body
// {"error":{"code","message"},"request_id"}.
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
	withFeed, err := parseFeedFlag(rc)
	if err != nil {
		return nil, err
	}
	args := rc.QueryArgs()
	if !withFeed {
		// with feed=true the others are the feed's, which openFeed checks
		for k := range args.All() {
			if name := string(k); !wsParams[name] {
				return nil, &RequestError{Status: fasthttp.StatusBadRequest, Code: "invalid_request",
					Message: fmt.Sprintf("unknown query parameter %q", name), Details: map[string]string{name: "unknown parameter"}}
			}
		}
	}
	req := &request{}
	switch enc := string(args.Peek("encoding")); enc {
	case "", "json":
	case "msgpack":
		req.bin = true
	default:
		return nil, badRequest("encoding must be json or msgpack, not %q", enc)
	}
	var lastOffset *int64
	if args.Has("last_offset") {
		n, err := parseOffset(string(args.Peek("last_offset")))
		if err != nil {
			return nil, badRequest("last_offset must be an integer >= 0")
		}
		lastOffset = &n
	}
	var epoch string
	if args.Has("epoch") {
		epoch = string(args.Peek("epoch"))
		if !validEpoch(epoch) {
			return nil, badRequest(epochRule)
		}
		if lastOffset == nil {
			return nil, badRequest("epoch is the history of last_offset: give both or neither")
		}
	}
	var ids []string
	seen := map[string]bool{}
	for _, v := range args.PeekMulti("stream_id") {
		for id := range strings.SplitSeq(string(v), ",") {
			if id = strings.TrimSpace(id); id != "" && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 && !withFeed {
		return nil, badRequest("stream_id is required (or feed=true)")
	}
	if len(ids) == 0 && lastOffset != nil {
		return nil, badRequest("last_offset and epoch are a stream's position: give stream_id (the feed resumes with after)")
	}
	if len(ids) > s.cfg.MaxSubscriptions {
		return nil, badRequest("at most %d streams per connection", s.cfg.MaxSubscriptions)
	}
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

func parseOffset(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
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
		return info, badRequest("stream %q delivers by webhook", id)
	}
	return info, nil
}

// position is where a new subscription starts: after lastOffset when
// given; for an at_least_once stream after the position this key
// acknowledged last; otherwise the next offset appended (live). A
// position of another epoch than the stream's (epoch, or the ack's) is
// lost: the start is then the oldest retained offset. A position past the
// log's head is moved back to the head: the client gets duplicates rather
// than a silent gap.
//
// The epoch is read first: a history lost after that is noticed by the
// pump, whose first read of the log asks again.
func (s *Server) position(ctx context.Context, keyID string, info hub.StreamInfo, lastOffset *int64, epoch string) (start, error) {
	cur, err := s.log.Epoch(ctx, info.ID)
	if err != nil {
		return start{}, err
	}
	last, err := s.log.Last(ctx, info.ID)
	if err != nil {
		return start{}, err
	}
	after := last
	switch {
	case lastOffset != nil:
		after = *lastOffset
	case info.AtLeastOnce:
		acked, ok, err := s.acks.Acked(ctx, keyID, info.ID)
		if err != nil {
			return start{}, err
		}
		if ok {
			after, epoch = acked.Offset, acked.Epoch
		}
	}
	if epoch != "" && epoch != cur {
		first, err := s.firstAvailable(ctx, info.ID, last)
		return start{next: first, epoch: cur, lost: true}, err
	}
	return start{next: min(after, last) + 1, epoch: cur}, nil
}

// reply writes a refused request's JSON error and returns the error.
func reply(rc *fasthttp.RequestCtx, err error) error {
	var re *RequestError
	var fe *feedError
	if errors.As(err, &fe) {
		writeErrorDetails(rc, fe.status(), fe.code, fe.message, fe.firstAvailable)
		return &RequestError{Status: fe.status(), Code: fe.code, Message: fe.message, Cause: err}
	}
	if !errors.As(err, &re) {
		re = &RequestError{Status: fasthttp.StatusInternalServerError, Code: "internal_error", Message: "internal error", Cause: err}
	}
	writeErrorMap(rc, re.Status, re.Code, re.Message, re.Details)
	return re
}

func writeError(rc *fasthttp.RequestCtx, status int, code, message string) {
	writeErrorDetails(rc, status, code, message, "")
}

// writeErrorDetails is writeError with first_available in the details
// (cursor_expired) when given.
func writeErrorDetails(rc *fasthttp.RequestCtx, status int, code, message, firstAvailable string) {
	var details map[string]string
	if firstAvailable != "" {
		details = map[string]string{"first_available": firstAvailable}
	}
	writeErrorMap(rc, status, code, message, details)
}

// writeErrorMap writes the JSON error with details (none when nil).
func writeErrorMap(rc *fasthttp.RequestCtx, status int, code, message string, details map[string]string) {
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
	Details map[string]string `json:"details,omitempty"`
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
