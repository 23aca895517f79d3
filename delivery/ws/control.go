package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// clientFrame is a control frame from the client.
type clientFrame struct {
	Type       string  `json:"type"`
	StreamID   string  `json:"stream_id"`
	Offset     *int64  `json:"offset"`
	LastOffset *int64  `json:"last_offset"`
	Epoch      *string `json:"epoch"` // the history of last_offset (resume, subscribe) or offset (ack)
}

// frameKeys are the keys each client frame type takes (subscribe_feed's
// are the feed's parameters, which feedParams checks): a key the type
// does not take is refused, never ignored (an offset in a subscribe would
// otherwise leave the client believing it resumed there).
var frameKeys = map[string][]string{
	"ping":             {"type"},
	"ack":              {"type", "stream_id", "offset", "epoch"},
	"resume":           {"type", "stream_id", "last_offset", "epoch"},
	"subscribe":        {"type", "stream_id", "last_offset", "epoch"},
	"unsubscribe":      {"type", "stream_id"},
	"unsubscribe_feed": {"type"},
}

// frameKinds are the JSON kinds of the frame's fields, for a type error.
var frameKinds = map[string]string{"type": "a string", "stream_id": "a string", "offset": "an integer", "last_offset": "an integer", "epoch": "a string"}

// parseControl parses and validates a client control frame: a JSON object
// with a known type and the fields that type needs.
func parseControl(b []byte) (clientFrame, error) {
	var f clientFrame
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return f, errors.New("a control frame is a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return f, fmt.Errorf("not a valid control frame: %v", err)
	}
	if rep := jsonpath.Repeated(b); rep != nil {
		names := slices.Sorted(maps.Keys(rep))
		return f, fmt.Errorf("%s %s", strings.Join(names, ", "), jsonpath.RepeatedRefusal)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && frameKinds[te.Field] != "" {
			return f, fmt.Errorf("%s must be %s", te.Field, frameKinds[te.Field])
		}
		return f, fmt.Errorf("not a valid control frame: %v", err)
	}
	if keys, ok := frameKeys[f.Type]; ok {
		var extra []string
		for k := range raw {
			if !slices.Contains(keys, k) {
				extra = append(extra, strconv.Quote(k))
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			return f, fmt.Errorf("%s takes %s only, not %s", f.Type, strings.Join(keys, ", "), strings.Join(extra, ", "))
		}
	}
	needStream := true
	switch f.Type {
	case "subscribe_feed", "unsubscribe_feed":
		return f, nil // the feed's parameters are read by feedParams
	case "ping":
		needStream = false
	case "unsubscribe":
	case "subscribe":
		if f.Epoch != nil && f.LastOffset == nil {
			return f, errors.New("epoch is the history of last_offset: give both or neither")
		}
	case "ack":
		if f.Offset == nil || *f.Offset < 0 {
			return f, errors.New("ack needs an offset >= 0")
		}
	case "resume":
		if f.LastOffset == nil {
			return f, errors.New("resume needs last_offset")
		}
	case "":
		return f, errors.New("missing type")
	default:
		return f, fmt.Errorf("unknown type %q", f.Type)
	}
	if f.LastOffset != nil && *f.LastOffset < 0 {
		return f, errors.New("last_offset must be >= 0")
	}
	if f.Epoch != nil && f.Type != "ping" && f.Type != "unsubscribe" && !hub.ValidEpoch(*f.Epoch) {
		return f, errors.New("epoch " + hub.EpochRefusal)
	}
	if needStream && f.StreamID == "" {
		return f, fmt.Errorf("%s needs stream_id", f.Type)
	}
	if needStream && strings.TrimSpace(f.StreamID) == "" {
		return f, errors.New("stream_id must not be empty or only white space")
	}
	return f, nil
}

// notice is a control frame from the server.
type notice struct {
	Type           string `json:"type"` // subscribed, unsubscribed, error, lag, pong
	Code           string `json:"code,omitempty"`
	StreamID       string `json:"stream_id,omitempty"`
	Offset         int64  `json:"offset,omitempty"`
	Epoch          string `json:"epoch,omitempty"`
	Behind         int64  `json:"behind,omitempty"`
	FirstAvailable int64  `json:"first_available,omitempty"`
	Message        string `json:"message,omitempty"`
}

var pongFrame = []byte(`{"type":"pong"}`)

// notice queues a control frame; a client that lets them pile up past
// the queue's slack is a slow consumer.
func (c *conn) notice(n notice) {
	var b []byte
	if n.Type == "pong" {
		b = pongFrame
	} else {
		b, _ = json.Marshal(n)
	}
	if !c.q.pushControl(frame{data: b, size: len(b)}) {
		c.close(ErrQueueOverflow)
	}
}

func (c *conn) invalidFrame(msg string) {
	c.notice(notice{Type: "error", Code: "invalid_frame", Message: msg})
	if c.invalid++; c.invalid > maxInvalidFrames {
		c.close(ErrTooManyInvalid)
	}
}

// handle acts on one client text frame; the reader calls it.
func (c *conn) handle(b []byte) {
	f, err := parseControl(b)
	if err != nil {
		c.invalidFrame(err.Error())
		return
	}
	c.invalid = 0
	switch f.Type {
	case "ping":
		c.notice(notice{Type: "pong"})
	case "ack":
		c.ack(f.StreamID, *f.Offset, f.Epoch)
	case "subscribe":
		if f.LastOffset == nil && c.subscribed(f.StreamID) {
			c.notice(notice{Type: "error", Code: "already_subscribed", StreamID: f.StreamID, Message: "the stream is followed already; send resume to move"})
			return
		}
		c.follow(f.StreamID, f.LastOffset, f.Epoch)
	case "resume":
		c.follow(f.StreamID, f.LastOffset, f.Epoch)
	case "subscribe_feed":
		c.subscribeFeedFrame(b)
	case "unsubscribe_feed":
		if !c.unsubscribeFeed() {
			c.feedNotice(feedNotice{Type: "feed_error", Code: "not_subscribed", Message: "the feed is not followed"})
			return
		}
		c.feedNotice(feedNotice{Type: "feed_unsubscribed"})
	case "unsubscribe":
		if !c.unsubscribe(f.StreamID) {
			c.notice(notice{Type: "error", Code: "not_subscribed", StreamID: f.StreamID, Message: "the stream is not followed"})
			return
		}
		c.notice(notice{Type: "unsubscribed", StreamID: f.StreamID})
	}
}

// follow (re)subscribes to a stream of the connection's scope, after
// lastOffset (of epoch, when given) when given.
func (c *conn) follow(id string, lastOffset *int64, epoch *string) {
	if c.allows != nil && !c.allows(id) {
		c.notice(notice{Type: "error", Code: "insufficient_permissions", StreamID: id, Message: "this token does not open the stream"})
		return
	}
	info, err := c.s.lookup(c.org, c.env, id)
	if err != nil {
		var re *RequestError
		errors.As(err, &re)
		c.notice(notice{Type: "error", Code: re.Code, StreamID: id, Message: re.Message})
		return
	}
	if info.State == hub.StateStopped {
		c.notice(notice{Type: "error", Code: "stream_stopped", StreamID: id, Message: "the stream was stopped"})
		return
	}
	if !c.subscribed(id) && c.subscriptions() >= c.s.cfg.MaxSubscriptions {
		c.notice(notice{Type: "error", Code: "too_many_subscriptions", StreamID: id, Message: fmt.Sprintf("at most %d streams per connection", c.s.cfg.MaxSubscriptions)})
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, acksTimeout)
	var ep string
	if epoch != nil {
		ep = *epoch
	}
	st, err := c.s.position(ctx, c.keyID, info, lastOffset, ep)
	cancel()
	if err != nil {
		c.s.logger.Warn("websocket subscribe failed", "stream_id", id, "error", err)
		c.notice(notice{Type: "error", Code: "internal_error", StreamID: id, Message: "could not read the stream position"})
		return
	}
	c.subscribe(info, st)
}

// ack records the highest offset the key acknowledged for a stream, in
// epoch when given, else in the epoch of the stream's subscribed frame on
// this connection, else in the stream's current epoch. An offset this
// connection has not sent yet (of a followed stream), or past the
// newest one of the stream's current history, is refused: stored, it
// would make the next connection skip messages no one received.
func (c *conn) ack(id string, offset int64, epoch *string) {
	if _, err := c.s.lookup(c.org, c.env, id); err != nil {
		var re *RequestError
		errors.As(err, &re)
		c.notice(notice{Type: "error", Code: re.Code, StreamID: id, Message: re.Message})
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, acksTimeout)
	defer cancel()
	p := Position{Offset: offset}
	if epoch != nil {
		p.Epoch = *epoch
	} else {
		p.Epoch = c.subEpoch(id)
	}
	refused, err := c.ackBound(ctx, id, &p)
	if err == nil && refused != "" {
		c.notice(notice{Type: "error", Code: "offset_not_delivered", StreamID: id, Offset: offset, Message: refused})
		return
	}
	if err == nil {
		err = c.s.acks.Ack(ctx, c.keyID, id, p)
	}
	if err != nil {
		c.s.logger.Warn("websocket ack failed", "stream_id", id, "error", err)
		c.notice(notice{Type: "error", Code: "internal_error", StreamID: id, Message: "the ack was not recorded"})
	}
}

// ackBound checks p against what the stream delivered: up to the highest
// offset sent on this connection when the stream is followed here in
// p's history, else up to the newest offset of the stream's current
// history when p is of it (an ack of another history is stored: the next
// connection answers it with history_lost). p without an epoch gets the
// stream's current one. refused says why an offset is refused.
func (c *conn) ackBound(ctx context.Context, id string, p *Position) (refused string, err error) {
	if sent, ep, ok := c.sentPos(id); ok && ep == p.Epoch {
		if p.Offset > sent {
			return fmt.Sprintf("offset %d was not delivered on this connection: the highest delivered is %d", p.Offset, sent), nil
		}
		return "", nil
	}
	cur, err := c.s.log.Epoch(ctx, id)
	if err != nil {
		return "", err
	}
	if p.Epoch == "" {
		p.Epoch = cur
	}
	if p.Epoch != cur {
		return "", nil
	}
	last, err := c.s.log.Last(ctx, id)
	if err != nil {
		return "", err
	}
	if p.Offset > last {
		return fmt.Sprintf("offset %d is past the stream's newest offset %d", p.Offset, last), nil
	}
	return "", nil
}
