package main

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsFeedEntries reads n entries ({"feed": entry}) from a websocket,
// failing on any other frame.
func wsFeedEntries(t *testing.T, c *websocket.Conn, n int) []feedEntry {
	t.Helper()
	var out []feedEntry
	for len(out) < n {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d entries: %v", len(out), err)
		}
		var f struct {
			Feed *feedEntry `json:"feed"`
			Type string     `json:"type"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("frame %s: %v", b, err)
		}
		if f.Type == "feed_subscribed" {
			continue
		}
		if f.Feed == nil {
			t.Fatalf("after %d entries: %s", len(out), b)
		}
		out = append(out, *f.Feed)
	}
	return out
}

// On a node, the websocket's feed subscription (opened with a feed:read
// token) gives each event the cursor the pull gives it, and the event
// stream resumed from the websocket's cursor goes on with the next event.
func TestFeedOverWebsocketSharesTheCursors(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	ingest := func(ids ...string) {
		t.Helper()
		var evs []any
		for _, id := range ids {
			evs = append(evs, map[string]any{"event_id": id, "event_type": "speeding", "category": "safety_events",
				"timestamp": stamp(-time.Second), "severity": "medium", "source": map[string]any{"vehicle_id": "veh-1"}})
		}
		if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 202 {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
	}
	tok := n.mintToken(t, k, map[string]any{"scopes": []string{"feed:read"}})["token"].(string)
	c, status := n.wsDial(t, "feed=true&types=events&after=now&token="+url.QueryEscape(tok))
	if status != 101 {
		t.Fatalf("feed websocket with a feed:read token: %d", status)
	}
	ingest("w1", "w2", "w3")
	got := wsFeedEntries(t, c, 3)
	pulled := n.pull(t, k, "types=events").Entries
	if len(pulled) != 3 {
		t.Fatalf("pulled %d entries", len(pulled))
	}
	for i := range got {
		if got[i].Cursor != pulled[i].Cursor || eventIDOf(t, got[i].Message) != eventIDOf(t, pulled[i].Message) {
			t.Fatalf("entry %d: websocket %s %s, pull %s %s", i, got[i].Cursor, eventIDOf(t, got[i].Message), pulled[i].Cursor, eventIDOf(t, pulled[i].Message))
		}
	}
	// the event stream resumed from the websocket's 2nd cursor
	sse := openSSE(t, n, "/api/v1/streaming/feed?types=events", k, "Last-Event-ID", got[1].Cursor)
	if ev := sse.next(t); ev.ID != got[2].Cursor {
		t.Fatalf("event stream after the websocket's cursor: id %s, want %s", ev.ID, got[2].Cursor)
	}
	ingest("w4")
	ev := sse.next(t)
	next := wsFeedEntries(t, c, 1)[0]
	if ev.ID != next.Cursor || eventIDOf(t, next.Message) != "w4" {
		t.Fatalf("the next event: event stream %s, websocket %s %s", ev.ID, next.Cursor, eventIDOf(t, next.Message))
	}
}

// On a node, revoking a token ends what it opened at once: the feed's
// event stream with an error event token_revoked, the websocket with
// 4401 "token revoked".
func TestRevokedTokenEndsOpenConnections(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	m := n.mintToken(t, k, map[string]any{"scopes": []string{"feed:read"}})
	tok := url.QueryEscape(m["token"].(string))
	sse := openSSE(t, n, "/api/v1/streaming/feed?after=now&token="+tok, "")
	c, status := n.wsDial(t, "feed=true&after=now&token="+tok)
	if status != 101 {
		t.Fatalf("feed websocket: %d", status)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, b, err := c.ReadMessage(); err != nil || !json.Valid(b) {
		t.Fatalf("feed_subscribed: %s %v", b, err)
	}
	if r := n.do("DELETE", "/v1/tokens/"+m["token_id"].(string), k, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	ev := sse.next(t)
	var body struct{ Code string }
	if ev.Name != "error" || json.Unmarshal([]byte(ev.Data), &body) != nil || body.Code != "token_revoked" {
		t.Fatalf("event stream at the revocation: %+v", ev)
	}
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4401 || ce.Text != "token revoked" {
			t.Fatalf("websocket at the revocation: %v, want close 4401 token revoked", err)
		}
		break
	}
}
