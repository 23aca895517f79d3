package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/hub/feed"
)

// FeedSource is the organization's feed (hub/feed) as a websocket reads
// it: a connection may follow it beside its streams, with the pull's
// parameters, and every entry carries the cursor the pull and the event
// stream give the same entry.
type FeedSource struct {
	Feed *feed.Feed
	// Query turns a subscription's parameters (the pull's names, each
	// with its values) into a query and its last (0: none); its error
	// names the refused parameters (api/feed.WebsocketQuery).
	Query func(org, env string, params map[string][]string) (feed.Query, int, error)
	// Encode is an entry as the pull sends it, {"cursor","type","message"}
	// (api/feed.EncodeEntry).
	Encode func(feed.Entry) ([]byte, error)
}

// Limits of a feed subscription.
const (
	// feedRead is how many entries one read of the feed takes.
	feedRead = 256
	// feedWait bounds one wait for new entries; the read starts again.
	feedWait = 15 * time.Second
	// maxFeedParams bounds the values of a subscription's parameters.
	maxFeedParams = 200
)

// feedStart is where a feed subscription begins.
type feedStart struct {
	q      feed.Query
	pos    feed.Position
	cursor string       // the cursor the subscription starts after; "" with last
	first  []feed.Entry // with last: the newest entries, sent first
}

// feedError is a feed subscription refused: code invalid_request (a
// parameter), cursor_expired (FirstAvailable set), not_implemented,
// insufficient_permissions or internal_error.
type feedError struct {
	code, message, firstAvailable string
	details                       map[string]string // the refused parameters, by name
	cause                         error
}

// ParamsRefusal is an error of FeedSource.Query that names the refused
// parameters, each with its message; a refusal before the upgrade
// carries them in its details.
type ParamsRefusal interface {
	error
	RefusedParams() map[string]string
}

func (e *feedError) Error() string { return "ws: feed: " + e.code + ": " + e.message }
func (e *feedError) Unwrap() error { return e.cause }

// status is the HTTP status of a refusal before the upgrade.
func (e *feedError) status() int {
	switch e.code {
	case "invalid_request":
		return fasthttp.StatusBadRequest
	case "cursor_expired":
		return fasthttp.StatusGone
	case "not_implemented":
		return fasthttp.StatusNotImplemented
	case "insufficient_permissions":
		return fasthttp.StatusForbidden
	}
	return fasthttp.StatusInternalServerError
}

// openFeed checks a subscription's parameters and fixes where it starts.
func (s *Server) openFeed(ctx context.Context, org, env string, allowed bool, params map[string][]string) (*feedStart, error) {
	fs := s.cfg.Feed
	switch {
	case !allowed:
		return nil, &feedError{code: "insufficient_permissions", message: "this token lacks the feed:read scope"}
	case fs == nil || fs.Feed == nil || fs.Query == nil || fs.Encode == nil:
		return nil, &feedError{code: "not_implemented", message: "the feed is not served over this bus"}
	}
	q, last, err := fs.Query(org, env, params)
	if err != nil {
		fe := &feedError{code: "invalid_request", message: err.Error(), cause: err}
		var pr ParamsRefusal
		if errors.As(err, &pr) {
			fe.details = pr.RefusedParams()
		}
		return nil, fe
	}
	q.Limit, q.Wait = feedRead, 0
	st := &feedStart{q: q}
	if last > 0 {
		page, err := fs.Feed.Last(ctx, q, last)
		if err != nil {
			return nil, feedFailure(err)
		}
		st.first, q.After = page.Entries, page.Next
	}
	if st.pos, err = fs.Feed.Start(ctx, &q); err != nil {
		return nil, feedFailure(err)
	}
	if last == 0 {
		st.cursor = st.pos.Cursor(q.Topics)
	}
	st.q = q
	return st, nil
}

// feedFailure maps the feed's errors.
func feedFailure(err error) error {
	var ee *feed.ExpiredError
	switch {
	case errors.As(err, &ee):
		return &feedError{code: "cursor_expired", firstAvailable: ee.FirstAvailable, cause: err,
			message: "the cursor is older than the oldest retained message; continue from first_available"}
	case errors.Is(err, feed.ErrBadCursor):
		return &feedError{code: "invalid_request", message: "after: is not a cursor of this feed for these types", cause: err,
			details: map[string]string{"after": "is not a cursor of this feed for these types"}}
	}
	return &feedError{code: "internal_error", message: "the feed could not be read", cause: err}
}

// feedParams are the parameters of a subscribe_feed frame: every member
// but type, a string, an array of strings or (last) an integer.
func feedParams(b []byte) (map[string][]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("not a valid control frame: %v", err)
	}
	delete(raw, "type")
	out := make(map[string][]string, len(raw))
	n := 0
	for k, v := range raw {
		var one string
		var many []string
		var num json.Number
		switch {
		case json.Unmarshal(v, &one) == nil:
			out[k] = []string{one}
		case json.Unmarshal(v, &many) == nil && many != nil:
			out[k] = many
		case json.Unmarshal(v, &num) == nil:
			out[k] = []string{num.String()}
		default:
			return nil, fmt.Errorf("%s must be a string, an array of strings or (last) an integer", k)
		}
		if n += len(out[k]); n > maxFeedParams {
			return nil, fmt.Errorf("at most %d parameter values", maxFeedParams)
		}
	}
	return out, nil
}

// feedNotice is a control frame about the feed subscription.
type feedNotice struct {
	Type           string `json:"type"` // feed_subscribed, feed_unsubscribed, feed_error
	Code           string `json:"code,omitempty"`
	Cursor         string `json:"cursor,omitempty"`
	FirstAvailable string `json:"first_available,omitempty"`
	Message        string `json:"message,omitempty"`
}

func (c *conn) feedNotice(n feedNotice) {
	b, err := json.Marshal(n)
	if err != nil {
		c.s.logger.Warn("websocket feed notice not encoded", "error", err)
		return
	}
	if !c.q.pushControl(frame{data: b, size: len(b)}) {
		c.close(ErrQueueOverflow)
	}
}

// feedRefused tells the client why a subscribe_feed was refused.
func (c *conn) feedRefused(err error) {
	var fe *feedError
	if !errors.As(err, &fe) {
		fe = &feedError{code: "internal_error", message: "the feed could not be read", cause: err}
	}
	if fe.code == "internal_error" {
		c.s.logger.Warn("websocket feed subscription failed", "error", err)
	}
	c.feedNotice(feedNotice{Type: "feed_error", Code: fe.code, FirstAvailable: fe.firstAvailable, Message: fe.message})
}

// subscribeFeedFrame acts on a subscribe_feed frame: it opens the
// subscription, replacing the current one if any.
func (c *conn) subscribeFeedFrame(b []byte) {
	params, err := feedParams(b)
	if err != nil {
		c.invalidFrame(err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, acksTimeout)
	st, err := c.s.openFeed(ctx, c.org, c.env, c.feedOK, params)
	cancel()
	if err != nil {
		c.feedRefused(err)
		return
	}
	c.subscribeFeed(st)
}

// subscribeFeed follows the feed from st, replacing the current feed
// subscription; like a stream's, its subscribed notice goes after every
// queued entry of the old one.
func (c *conn) subscribeFeed(st *feedStart) bool {
	sb := &sub{c: c, feed: true, done: make(chan struct{})}
	sb.ctx, sb.cancel = context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		sb.cancel()
		return false
	}
	old := c.feedSub
	c.feedSub = sb
	c.wg.Add(1)
	c.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
		c.q.purge(old)
	}
	c.feedNotice(feedNotice{Type: "feed_subscribed", Cursor: st.cursor})
	go c.runFeed(sb, st)
	return true
}

// unsubscribeFeed stops following the feed; false when it was not.
func (c *conn) unsubscribeFeed() bool {
	c.mu.Lock()
	sb := c.feedSub
	c.feedSub = nil
	c.mu.Unlock()
	if sb == nil {
		return false
	}
	sb.cancel()
	<-sb.done
	c.q.purge(sb)
	return true
}

// dropFeed ends the feed subscription sb after an error (its reader
// calls it). The connection stays open: the client may subscribe again
// (from first_available after cursor_expired).
func (c *conn) dropFeed(sb *sub) {
	c.mu.Lock()
	if c.feedSub == sb {
		c.feedSub = nil
	}
	c.mu.Unlock()
}

// runFeed is a feed subscription's reader: it reads the feed from st on
// into the connection's queue, one frame {"feed":<entry>} per entry,
// waiting while the queue is full.
func (c *conn) runFeed(sb *sub, st *feedStart) {
	defer c.wg.Done()
	defer close(sb.done)
	fs := c.s.cfg.Feed
	push := func(es []feed.Entry) bool {
		for _, e := range es {
			b, err := fs.Encode(e)
			if err == nil {
				b, err = c.feedFrame(b)
			}
			if err != nil {
				c.feedRefused(err)
				c.dropFeed(sb)
				return false
			}
			f := frame{sub: sb, msgs: 1, bin: c.bin, data: b, size: len(b)}
			for {
				ok, space := c.q.push(f, false)
				if ok {
					break
				}
				select {
				case <-sb.ctx.Done():
					return false
				case <-space:
				}
			}
		}
		return true
	}
	if !push(st.first) {
		return
	}
	q := st.q
	q.Wait = feedWait
	for sb.ctx.Err() == nil {
		page, err := fs.Feed.PullFrom(sb.ctx, q, st.pos)
		if err != nil {
			if sb.ctx.Err() == nil {
				c.feedRefused(feedFailure(err))
				c.dropFeed(sb)
			}
			return
		}
		if !push(page.Entries) {
			return
		}
	}
}

// feedFrame wraps an encoded entry: {"feed":<entry>}, or its msgpack
// form on a msgpack connection.
func (c *conn) feedFrame(entry []byte) ([]byte, error) {
	b := make([]byte, 0, len(entry)+9)
	b = append(b, `{"feed":`...)
	b = append(b, entry...)
	b = append(b, '}')
	if !c.bin {
		return b, nil
	}
	m, err := jsonToMsgpack(b)
	if err != nil {
		return nil, fmt.Errorf("ws: feed entry to msgpack: %w", err)
	}
	return m, nil
}

// feedQuery collects the feed's parameters of an upgrade request: every
// query argument that is not the websocket's own.
func feedQuery(rc *fasthttp.RequestCtx) map[string][]string {
	out := map[string][]string{}
	for k, v := range rc.QueryArgs().All() {
		switch name := string(k); name {
		case "stream_id", "encoding", "last_offset", "epoch", "api_key", "token", "feed":
		default:
			out[name] = append(out[name], string(v))
		}
	}
	return out
}

// parseFeedFlag reads the feed query argument: absent, or true; any
// other value is refused with the message returned.
func parseFeedFlag(rc *fasthttp.RequestCtx) (on bool, refusal string) {
	args := rc.QueryArgs()
	if !args.Has("feed") {
		return false, ""
	}
	v, err := strconv.ParseBool(string(args.Peek("feed")))
	if err != nil || !v {
		return false, "must be true (follow the organization's feed)"
	}
	return true, ""
}
