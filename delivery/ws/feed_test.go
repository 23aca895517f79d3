package ws_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/fleethub/fleethub/api"
	apifeed "github.com/fleethub/fleethub/api/feed"
	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/apikey"
)

// tokenAuth knows browser tokens by their text; each has its grant.
type tokenAuth map[string]*apikey.TokenGrant

func (a tokenAuth) AuthenticateToken(_ context.Context, tok string) (*api.Principal, error) {
	g, ok := a[tok]
	if !ok {
		return nil, api.Errf("invalid_token", "not a token")
	}
	return &api.Principal{KeyID: testKey, Org: testOrg, Env: testEnv, Rate: 1000, Burst: 1000, Token: g}, nil
}

// feedServer is the feed over pull, event stream and websocket, behind
// the API layer, on one bus.
type feedServer struct {
	t    *testing.T
	bus  *embedbus.Bus
	base string // http://host
	ws   string // ws://host/api/v1/streaming/ws
	seq  int
}

func newFeedServer(t *testing.T, tokens tokenAuth) *feedServer {
	t.Helper()
	bus := embedbus.New(embedbus.Config{Partitions: 3})
	t.Cleanup(func() { bus.Close(context.Background()) })
	l := embedlog.New(embedlog.Config{})
	t.Cleanup(func() { _ = l.Close() })
	st := &streams{m: map[string]hub.StreamInfo{}}
	st.put(hub.StreamInfo{ID: "str_1", Delivery: "websocket"})
	src := &ws.FeedSource{Feed: feed.New(bus), Query: apifeed.WebsocketQuery, Encode: apifeed.EncodeEntry}
	sink := ws.New(ws.Config{Feed: src}, st, l, nil)
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), keyAuth{}, nil)
	srv.SetTokens(tokens)
	fh := apifeed.New(apifeed.Config{Heartbeat: 100 * time.Millisecond}, feed.New(bus), st, l)
	srv.Handle(fh.Routes()...)
	srv.Handle(&api.Route{Method: "GET", Path: "/api/v1/streaming/ws", Tag: "streaming", Permission: "streams:read", QueryKey: true,
		TokenScope: "streams:read feed:read", Status: 101, OwnQuery: true,
		Handler: func(c *api.Ctx) error {
			p := c.Principal
			var err error
			if g := p.Token; g != nil {
				err = sink.ServeLimited(c.RequestCtx, p.Org, p.Env, p.KeyID, g.AllowsStream, g.HasScope("feed:read"), g.Life)
			} else {
				err = sink.Serve(c.RequestCtx, p.Org, p.Env, p.KeyID)
			}
			if err != nil && c.Response.StatusCode() < 400 {
				return err
			}
			return nil
		}})
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve()
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sink.Shutdown(ctx); err != nil {
			t.Errorf("ws shutdown: %v", err)
		}
		if err := fh.Shutdown(ctx); err != nil {
			t.Errorf("feed shutdown: %v", err)
		}
		_ = srv.Shutdown(ctx)
		<-done
	})
	return &feedServer{t: t, bus: bus, base: "http://" + addr.String(), ws: "ws://" + addr.String() + "/api/v1/streaming/ws"}
}

// publish puts n events of the test organization on the bus, each after
// one of another organization (which no reader may see); it returns
// their ids.
func (s *feedServer) publish(n int) []string {
	s.t.Helper()
	var ids []string
	for range n {
		s.seq++
		for _, org := range []string{"org-other", testOrg} {
			id := fmt.Sprintf("%s-e%d", org, s.seq)
			ev := &event.Event{EventID: id, EventType: "harsh_braking", Category: "safety_events", Severity: "low", Priority: "low",
				Source: event.Source{VehicleID: fmt.Sprintf("v%d", s.seq%5)}}
			b, err := event.Marshal(&event.Envelope{Org: org, Env: testEnv, Kind: event.KindEvent, Event: ev})
			if err != nil {
				s.t.Fatal(err)
			}
			if err := s.bus.Publish(context.Background(), hub.Message{Topic: hub.TopicEvents, Key: []byte(ev.Source.VehicleID), Value: b}); err != nil {
				s.t.Fatal(err)
			}
		}
		ids = append(ids, fmt.Sprintf("%s-e%d", testOrg, s.seq))
	}
	return ids
}

// got is one entry as a transport delivered it.
type got struct {
	cursor, id string
	raw        string // the entry's JSON
}

func entryOf(t *testing.T, raw []byte) got {
	t.Helper()
	var e struct {
		Cursor  string `json:"cursor"`
		Type    string `json:"type"`
		Message struct {
			EventID string `json:"event_id"`
		} `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil || e.Cursor == "" || e.Type != "events" {
		t.Fatalf("entry %s: %v", raw, err)
	}
	return got{cursor: e.Cursor, id: e.Message.EventID, raw: string(raw)}
}

// pull reads the feed's page with the query.
func (s *feedServer) pull(query string) []got {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.base+"/api/v1/streaming/feed?"+query, nil)
	req.Header.Set("X-API-Key", goodKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	var page struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
		s.t.Fatalf("pull %s: %d %s", query, res.StatusCode, b)
	}
	out := make([]got, 0, len(page.Entries))
	for _, e := range page.Entries {
		out = append(out, entryOf(s.t, e))
	}
	return out
}

// sse opens the feed's event stream; next reads its next entry.
func (s *feedServer) sse(query, lastEventID string) (next func() got, stop func()) {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+"/api/v1/streaming/feed?"+query, nil)
	req.Header.Set("X-API-Key", goodKey)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		s.t.Fatalf("event stream %s: %v %v", query, res, err)
	}
	lines := make(chan string, 256)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next = func() got {
		s.t.Helper()
		id := ""
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					s.t.Fatal("the event stream ended")
				}
				switch {
				case strings.HasPrefix(line, "id: "):
					id = strings.TrimPrefix(line, "id: ")
				case strings.HasPrefix(line, "data: "):
					g := entryOf(s.t, []byte(strings.TrimPrefix(line, "data: ")))
					if g.cursor != id {
						s.t.Fatalf("event id %q, entry cursor %q", id, g.cursor)
					}
					return g
				}
			case <-time.After(5 * time.Second):
				s.t.Fatal("no entry on the event stream within 5 s")
			}
		}
	}
	return next, func() { cancel(); res.Body.Close() }
}

// feedFrame is a websocket frame: an entry ({"feed":…}) or a control frame.
type feedFrame struct {
	Feed           json.RawMessage `json:"feed"`
	Type           string          `json:"type"`
	Code           string          `json:"code"`
	Cursor         string          `json:"cursor"`
	FirstAvailable string          `json:"first_available"`
	Message        string          `json:"message"`
}

// wsDial opens a websocket with the key (or ?token= in query).
func (s *feedServer) wsDial(query string, key bool) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if key {
		h.Set("X-API-Key", goodKey)
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	c, res, err := d.Dial(s.ws+"?"+query, h)
	if err == nil {
		s.t.Cleanup(func() { _ = c.Close() })
	}
	return c, res, err
}

func wsFrame(t *testing.T, c *websocket.Conn) feedFrame {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("websocket read: %v", err)
	}
	var f feedFrame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

// wsEntries reads n entries, failing on a control frame.
func wsEntries(t *testing.T, c *websocket.Conn, n int) []got {
	t.Helper()
	var out []got
	for len(out) < n {
		f := wsFrame(t, c)
		if f.Feed == nil {
			t.Fatalf("after %d entries: control frame %+v", len(out), f)
		}
		out = append(out, entryOf(t, f.Feed))
	}
	return out
}

func wsSubscribed(t *testing.T, c *websocket.Conn) feedFrame {
	t.Helper()
	f := wsFrame(t, c)
	if f.Type == "subscribed" { // a stream's, opened in the query: the feed's follows
		f = wsFrame(t, c)
	}
	if f.Type != "feed_subscribed" {
		t.Fatalf("first frame %+v, want feed_subscribed", f)
	}
	return f
}

func ids(gs []got) string {
	var b strings.Builder
	for _, g := range gs {
		b.WriteString(g.id + " ")
	}
	return b.String()
}

func sameEntries(t *testing.T, what string, a, b []got) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d entries [%s] against %d [%s]", what, len(a), ids(a), len(b), ids(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: entry %d differs:\n%+v\n%+v", what, i, a[i], b[i])
		}
	}
}

func wantIDs(t *testing.T, what string, gs []got, want []string) {
	t.Helper()
	if ids(gs) != strings.Join(want, " ")+" " {
		t.Fatalf("%s: got [%s], want %v", what, ids(gs), want)
	}
}

// The pull, the event stream and the websocket give every entry the same
// cursor (and the same JSON), and a reader resumes on any of them from a
// cursor another gave, with no gap and no duplicate.
func TestFeedCursorsAgreeAcrossTransports(t *testing.T) {
	s := newFeedServer(t, nil)
	first := s.publish(10)

	pulled := s.pull("types=events&limit=1000")
	wantIDs(t, "pull", pulled, first)
	next, stop := s.sse("types=events", "")
	var streamed []got
	for range 10 {
		streamed = append(streamed, next())
	}
	stop()
	sameEntries(t, "event stream against pull", streamed, pulled)
	c, _, err := s.wsDial("feed=true&types=events", true)
	if err != nil {
		t.Fatal(err)
	}
	wsSubscribed(t, c)
	sameEntries(t, "websocket against pull", wsEntries(t, c, 10), pulled)
	_ = c.Close()

	// a websocket resumed from the event stream's cursor of the 5th entry
	c, _, err = s.wsDial("feed=true&types=events&after="+url.QueryEscape(streamed[4].cursor), true)
	if err != nil {
		t.Fatal(err)
	}
	if sub := wsSubscribed(t, c); sub.Cursor != streamed[4].cursor {
		t.Errorf("subscribed at %q, want the cursor it was given", sub.Cursor)
	}
	wantIDs(t, "websocket after the event stream's 5th", wsEntries(t, c, 5), first[5:])
	more := s.publish(3)
	live := wsEntries(t, c, 3)
	wantIDs(t, "websocket, live", live, more)
	_ = c.Close()

	// an event stream resumed from the websocket's cursor of the live 2nd
	more2 := s.publish(2)
	next, stop = s.sse("types=events", live[1].cursor)
	defer stop()
	var resumed []got
	for range 3 {
		resumed = append(resumed, next())
	}
	wantIDs(t, "event stream after the websocket's cursor", resumed, append(more[2:], more2...))
	// and the pull agrees with both from there
	sameEntries(t, "pull after the websocket's cursor", s.pull("types=events&after="+url.QueryEscape(live[1].cursor)), resumed)

	// a websocket subscribed with after=now gets only what follows; the
	// event stream continues from its last cursor
	c, _, err = s.wsDial("feed=true&types=events&after=now", true)
	if err != nil {
		t.Fatal(err)
	}
	now := wsSubscribed(t, c)
	third := s.publish(2)
	got3 := wsEntries(t, c, 2)
	wantIDs(t, "websocket after now", got3, third)
	sameEntries(t, "pull after the subscribed cursor", s.pull("types=events&after="+url.QueryEscape(now.Cursor)), got3)
	wantIDs(t, "event stream, live", []got{next(), next()}, third)
}

// A feed subscription by frame, beside a stream: last, filters, a
// refused parameter named, resubscribe from a cursor, unsubscribe.
func TestFeedSubscribeFrame(t *testing.T) {
	s := newFeedServer(t, nil)
	all := s.publish(8)
	c, _, err := s.wsDial("stream_id=str_1", true)
	if err != nil {
		t.Fatal(err)
	}
	if f := wsFrame(t, c); f.Type != "subscribed" {
		t.Fatalf("stream: %+v", f)
	}
	send := func(v string) {
		t.Helper()
		if err := c.WriteMessage(websocket.TextMessage, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"type":"subscribe_feed","types":["events"],"last":3}`)
	if sub := wsSubscribed(t, c); sub.Cursor != "" {
		t.Errorf("a subscription with last starts at no cursor: %q", sub.Cursor)
	}
	newest := wsEntries(t, c, 3)
	wantIDs(t, "last=3", newest, all[5:])

	send(`{"type":"subscribe_feed","types":"bogus","limit":5}`)
	f := wsFrame(t, c)
	if f.Type != "feed_error" || f.Code != "invalid_request" || !strings.Contains(f.Message, "types:") || !strings.Contains(f.Message, "limit:") {
		t.Fatalf("bad parameters: %+v", f)
	}
	send(`{"type":"subscribe_feed","after":"not-a-cursor"}`)
	if f := wsFrame(t, c); f.Type != "feed_error" || f.Code != "invalid_request" || !strings.Contains(f.Message, "after") {
		t.Fatalf("bad cursor: %+v", f)
	}
	// the refusals left the subscription as it was
	more := s.publish(1)
	wantIDs(t, "after refusals", wsEntries(t, c, 1), more)

	// resubscribed from the 2nd newest's cursor with a filter
	send(`{"type":"subscribe_feed","types":["events"],"after":` + jsonString(newest[0].cursor) + `,"vehicle_id":["v2"]}`)
	wsSubscribed(t, c)
	got := wsEntries(t, c, 1) // of all[6:], all[7] and more[0], v2 is the 7th event (seq 7 % 5)
	if got[0].id != all[6] {
		t.Fatalf("filtered: %s, want %s", got[0].id, all[6])
	}
	send(`{"type":"unsubscribe_feed"}`)
	if f := wsFrame(t, c); f.Type != "feed_unsubscribed" {
		t.Fatalf("unsubscribe: %+v", f)
	}
	send(`{"type":"unsubscribe_feed"}`)
	if f := wsFrame(t, c); f.Type != "feed_error" || f.Code != "not_subscribed" {
		t.Fatalf("unsubscribe again: %+v", f)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Upgrade requests with a bad feed query are refused before the upgrade,
// each naming what is wrong.
func TestFeedUpgradeRefusals(t *testing.T) {
	s := newFeedServer(t, nil)
	for _, tc := range []struct{ query, code, says string }{
		{"", "invalid_request", "stream_id"},
		{"feed=yes", "invalid_request", "feed"},
		{"feed=true&types=bogus", "invalid_request", "types"},
		{"feed=true&wait=5", "invalid_request", "wait"},
		{"feed=true&color=red", "invalid_request", "color"},
		{"feed=true&last_offset=3", "invalid_request", "last_offset"},
		{"feed=true&after=garbage", "invalid_request", "after"},
	} {
		_, res, err := s.wsDial(tc.query, true)
		if err == nil || res == nil {
			t.Fatalf("%q: accepted", tc.query)
		}
		b, _ := io.ReadAll(res.Body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		if res.StatusCode != 400 || e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("%q: %d %s, want 400 %s naming %s", tc.query, res.StatusCode, b, tc.code, tc.says)
		}
	}
}

// A token opens the feed over the websocket only with feed:read; the
// connection closes with 4401 when the token expires or is revoked.
func TestFeedWebsocketTokenScopeAndEnd(t *testing.T) {
	expiring, expire := context.WithCancelCause(context.Background())
	revoking, revoke := context.WithCancelCause(context.Background())
	defer expire(nil)
	defer revoke(nil)
	exp := time.Now().Add(time.Hour)
	tokens := tokenAuth{
		"eyJzdHJlYW1z.x.y": {ID: "t1", Scopes: []string{"streams:read"}, ExpiresAt: exp, Life: context.Background()},
		"eyJmZWVk.x.y":     {ID: "t2", Scopes: []string{"feed:read"}, ExpiresAt: exp, Life: expiring},
		"eyJmZWVkMg.x.y":   {ID: "t3", Scopes: []string{"feed:read"}, ExpiresAt: exp, Life: revoking},
	}
	s := newFeedServer(t, tokens)

	// streams:read only: no feed, by query or by frame
	_, res, err := s.wsDial("feed=true&token=eyJzdHJlYW1z.x.y", false)
	if err == nil || res.StatusCode != 403 {
		t.Fatalf("a streams:read token's feed upgrade: %v %v", res, err)
	}
	c, _, err := s.wsDial("stream_id=str_1&token=eyJzdHJlYW1z.x.y", false)
	if err != nil {
		t.Fatal(err)
	}
	if f := wsFrame(t, c); f.Type != "subscribed" {
		t.Fatalf("stream: %+v", f)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"type":"subscribe_feed"}`)); err != nil {
		t.Fatal(err)
	}
	if f := wsFrame(t, c); f.Type != "feed_error" || f.Code != "insufficient_permissions" {
		t.Fatalf("a streams:read token's subscribe_feed: %+v", f)
	}
	// feed:read only: the feed, no stream
	if _, res, err := s.wsDial("stream_id=str_1&token=eyJmZWVk.x.y", false); err == nil || res.StatusCode != 403 {
		t.Fatalf("a feed:read token's stream upgrade: %v %v", res, err)
	}

	for _, tc := range []struct {
		token string
		end   func()
		text  string
	}{
		{"eyJmZWVk.x.y", func() { expire(apikey.ErrTokenExpired) }, "token expired"},
		{"eyJmZWVkMg.x.y", func() { revoke(apikey.ErrTokenRevoked) }, "token revoked"},
	} {
		c, _, err := s.wsDial("feed=true&after=now&token="+tc.token, false)
		if err != nil {
			t.Fatal(err)
		}
		wsSubscribed(t, c)
		ids := s.publish(1)
		wantIDs(t, tc.text, wsEntries(t, c, 1), ids)
		tc.end()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			_, _, err := c.ReadMessage()
			if err == nil {
				continue
			}
			ce, ok := err.(*websocket.CloseError)
			if !ok || ce.Code != ws.CloseTokenExpired || ce.Text != tc.text {
				t.Fatalf("%s: %v, want close 4401 %q", tc.text, err, tc.text)
			}
			break
		}
		// a new connection with the ended token is refused by the sink too
		if _, res, err := s.wsDial("feed=true&token="+tc.token, false); err == nil || res.StatusCode != 401 {
			t.Fatalf("%s: a new connection: %v %v", tc.text, res, err)
		}
	}
}

// With encoding=msgpack a feed entry is a binary frame holding the msgpack
// form of the same {"feed": entry}, with the same cursor.
func TestFeedMsgpack(t *testing.T) {
	s := newFeedServer(t, nil)
	ids := s.publish(2)
	pulled := s.pull("types=events")
	c, _, err := s.wsDial("feed=true&types=events&encoding=msgpack", true)
	if err != nil {
		t.Fatal(err)
	}
	wsSubscribed(t, c) // control frames stay JSON text
	for i := range ids {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		typ, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Feed struct {
				Cursor  string `msgpack:"cursor"`
				Type    string `msgpack:"type"`
				Message struct {
					EventID string `msgpack:"event_id"`
				} `msgpack:"message"`
			} `msgpack:"feed"`
		}
		if typ != websocket.BinaryMessage || msgpack.Unmarshal(b, &f) != nil {
			t.Fatalf("entry %d: frame type %d %x", i, typ, b)
		}
		if f.Feed.Cursor != pulled[i].cursor || f.Feed.Message.EventID != ids[i] || f.Feed.Type != "events" {
			t.Fatalf("entry %d: %+v, pulled %+v", i, f.Feed, pulled[i])
		}
	}
}
