package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/waitfor"
	"github.com/gorilla/websocket"
)

// mintToken mints a browser token with key and returns the answer.
func (n *node) mintToken(t *testing.T, key string, body map[string]any) map[string]any {
	t.Helper()
	r := n.do("POST", "/v1/tokens", key, body)
	if r.Status != 201 {
		t.Fatalf("mint %v: %d %s", body, r.Status, r.Body)
	}
	return r.json(t)
}

// wsDialStatus dials the websocket and returns the handshake's status
// (101 on success, the connection then being closed by the test).
func (n *node) wsDial(t *testing.T, query string) (*websocket.Conn, int) {
	t.Helper()
	u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?" + query
	c, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		if res == nil {
			t.Fatalf("dial %s: %v", query, err)
		}
		return nil, res.StatusCode
	}
	t.Cleanup(func() { c.Close() })
	return c, 101
}

// sseStatus opens an event stream and returns its status and content type.
func (n *node) sseStatus(t *testing.T, path string, hdr ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", n.url+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	return res.StatusCode, res.Header.Get("Content-Type")
}

func TestBrowserTokensMintValidateAndScope(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-tok", "test", []string{"all"}, 100000)
	reader := n.key("org-tok", "test", []string{"streams:read", "tokens:create"}, 100000)
	plain := n.key("org-tok", "test", []string{"streams:read"}, 100000)
	a := startEventStream(t, n, k, "veh-a")
	b := startEventStream(t, n, k, "veh-b")

	// every field either works or is refused by name
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"scopes": []string{"feed:read"}, "expires_in_seconds": 0}, "expires_in_seconds"},
		{map[string]any{"scopes": []string{"feed:read"}, "expires_in_seconds": 86401}, "expires_in_seconds"},
		{map[string]any{"scopes": []string{}}, "scopes"},
		{map[string]any{"scopes": []string{"trips:read"}}, "scopes[0]"},
		{map[string]any{"scopes": []string{"feed:read", "feed:read"}}, "scopes[1]"},
		{map[string]any{"scopes": []string{"feed:read"}, "stream_ids": []string{a}}, "stream_ids"},
		{map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{a, b, a}}, "stream_ids[2]"},
		{map[string]any{"scopes": []string{"feed:read"}, "audience": "x"}, "audience"},
	} {
		r := n.do("POST", "/v1/tokens", k, tc.body)
		want := "validation_failed"
		if tc.body["scopes"] != nil && slices.Contains(tc.body["scopes"].([]string), "trips:read") { // a scope outside the set
			want = "invalid_request"
		}
		if r.Status != 400 || r.errCode(t) != want || !strings.Contains(string(r.Body), `"`+tc.field+`"`) {
			t.Errorf("mint %v: %d %s; want 400 %s naming %s", tc.body, r.Status, r.Body, want, tc.field)
		}
	}
	if r := n.do("POST", "/v1/tokens", plain, map[string]any{"scopes": []string{"feed:read"}}); r.Status != 403 {
		t.Errorf("a key without tokens:create minted: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/tokens", reader, map[string]any{"scopes": []string{"alerts:acknowledge"}}); r.Status != 403 || r.errCode(t) != "insufficient_permissions" {
		t.Errorf("a scope beyond the key's permissions: %d %s", r.Status, r.Body)
	}

	m := n.mintToken(t, reader, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{a}, "expires_in_seconds": 600})
	tok := m["token"].(string)
	exp, err := time.Parse(time.RFC3339, m["expires_at"].(string))
	if err != nil || exp.Before(time.Now().Add(590*time.Second)) || exp.After(time.Now().Add(601*time.Second)) ||
		!strings.HasPrefix(m["token_id"].(string), "tok_") || len(m["scopes"].([]any)) != 1 {
		t.Fatalf("minted %v", m)
	}
	// a token mints no token
	if r := n.do("POST", "/v1/tokens", "", map[string]any{"scopes": []string{"streams:read"}}, "Authorization", "Bearer "+tok); r.Status != 403 {
		t.Errorf("a token minted a token: %d %s", r.Status, r.Body)
	}

	// stream A over websocket, with the token in the query: delivered
	c, st := n.wsDial(t, "stream_id="+a+"&token="+url.QueryEscape(tok))
	if st != 101 {
		t.Fatalf("websocket with a token for its stream: %d", st)
	}
	expectSubscribed(t, c)
	n.ingestEvents(t, k, "veh-a", 0, 2)
	if got := readEvents(t, c, 2); got[0].StreamID != a {
		t.Fatalf("delivered %+v", got)
	}
	// stream B: refused at the handshake, and by a subscribe frame
	if _, st := n.wsDial(t, "stream_id="+b+"&token="+url.QueryEscape(tok)); st != 403 {
		t.Errorf("websocket to another stream: %d, want 403", st)
	}
	if err := c.WriteJSON(map[string]any{"type": "subscribe", "stream_id": b}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for the refusal of stream B: %v", err)
		}
		var f struct {
			Type     string `json:"type"`
			Code     string `json:"code"`
			StreamID string `json:"stream_id"`
		}
		json.Unmarshal(data, &f)
		if f.StreamID == b {
			if f.Type != "error" || f.Code != "insufficient_permissions" {
				t.Fatalf("subscribe to stream B: %s", data)
			}
			break
		}
	}
	// SSE: A with the bearer header, not B
	if st, ct := n.sseStatus(t, "/api/v1/streaming/sse?stream_id="+a, "Authorization", "Bearer "+tok); st != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("SSE of stream A with its token: %d %s", st, ct)
	}
	if r := n.do("GET", "/api/v1/streaming/sse?stream_id="+b+"&token="+url.QueryEscape(tok), "", nil); r.Status != 403 {
		t.Errorf("SSE of stream B: %d %s", r.Status, r.Body)
	}
	// nothing else: the feed, the stream list, managing streams, trips
	for _, probe := range [][2]string{
		{"GET", "/api/v1/streaming/feed"},
		{"GET", "/api/v1/streaming/streams"},
		{"GET", "/api/v1/streaming/events/status/" + a},
		{"POST", "/api/v1/streaming/events/stop"},
		{"GET", "/v1/trips"},
	} {
		if r := n.do(probe[0], probe[1], "", map[string]any{"stream_id": a}, "Authorization", "Bearer "+tok); r.Status != 403 {
			t.Errorf("%s %s with a streams:read token: %d %s", probe[0], probe[1], r.Status, r.Body)
		}
	}

	// a feed:read token reads the feed and nothing else
	feed := n.mintToken(t, k, map[string]any{"scopes": []string{"feed:read"}})["token"].(string)
	if r := n.do("GET", "/api/v1/streaming/feed?limit=5&token="+url.QueryEscape(feed), "", nil); r.Status != 200 {
		t.Errorf("feed with a feed:read token: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/feed?limit=5", "", nil, "Authorization", "Bearer "+feed); r.Status != 200 {
		t.Errorf("feed with a feed:read bearer token: %d %s", r.Status, r.Body)
	}
	if _, st := n.wsDial(t, "stream_id="+a+"&token="+url.QueryEscape(feed)); st != 403 {
		t.Errorf("websocket with a feed:read token: %d", st)
	}
	if r := n.do("POST", "/api/v1/streaming/events/start", "", map[string]any{}, "Authorization", "Bearer "+feed); r.Status != 403 {
		t.Errorf("start a stream with a feed:read token: %d %s", r.Status, r.Body)
	}
	// a token not signed here
	forged := tok[:strings.LastIndexByte(tok, '.')+1] + "AAAA"
	if r := n.do("GET", "/api/v1/streaming/feed", "", nil, "Authorization", "Bearer "+forged); r.Status != 401 || r.errCode(t) != "invalid_token" {
		t.Errorf("forged token: %d %s", r.Status, r.Body)
	}
}

func TestBrowserTokensRevokedAndExpired(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-rev", "test", []string{"all"}, 100000)
	other := n.key("org-other", "test", []string{"all"}, 100000)
	m := n.mintToken(t, k, map[string]any{"scopes": []string{"feed:read"}})
	tok, id := m["token"].(string), m["token_id"].(string)
	feedPath := "/api/v1/streaming/feed?limit=1&token=" + url.QueryEscape(tok)
	if r := n.do("GET", feedPath, "", nil); r.Status != 200 {
		t.Fatalf("fresh token: %d %s", r.Status, r.Body)
	}
	if r := n.do("DELETE", "/v1/tokens/"+id, other, nil); r.Status != 404 || r.errCode(t) != "token_not_found" {
		t.Errorf("another organization revoked the token: %d %s", r.Status, r.Body)
	}
	r := n.do("DELETE", "/v1/tokens/"+id, k, nil)
	if r.Status != 200 || r.json(t)["status"] != "revoked" {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", feedPath, "", nil); r.Status != 401 || r.errCode(t) != "token_revoked" {
		t.Errorf("revoked token: %d %s", r.Status, r.Body)
	}

	// revoking the key that minted a token refuses the token too
	minter, err := n.app.keys.Create(context.Background(), keys.CreateRequest{Org: "org-rev", Env: "test", Name: "minter", Permissions: []string{"streams:read", "tokens:create"}, RPM: 1000})
	if err != nil {
		t.Fatal(err)
	}
	child := n.mintToken(t, minter.Key, map[string]any{"scopes": []string{"feed:read"}})["token"].(string)
	if r := n.do("DELETE", "/v1/api-keys/"+minter.Record.ID, k, nil); r.Status != 200 {
		t.Fatalf("revoke the minting key: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/api/v1/streaming/feed?limit=1", "", nil, "Authorization", "Bearer "+child); r.Status != 401 || r.errCode(t) != "api_key_revoked" {
		t.Errorf("a token of a revoked key: %d %s", r.Status, r.Body)
	}

	// a one-second token: refused as expired once its time is up
	short := n.mintToken(t, k, map[string]any{"scopes": []string{"feed:read"}, "expires_in_seconds": 1})["token"].(string)
	var last resp
	if !waitfor.Poll(10*time.Second, func() bool {
		last = n.do("GET", "/api/v1/streaming/feed?limit=1", "", nil, "Authorization", "Bearer "+short)
		return last.Status != 200
	}) || last.Status != 401 || last.errCode(t) != "token_expired" {
		t.Errorf("expired token: %d %s", last.Status, last.Body)
	}

	// a websocket opened with a two-second token is closed with 4401 at expiry
	id2 := startEventStream(t, n, k, "veh-exp")
	wsTok := n.mintToken(t, k, map[string]any{"scopes": []string{"streams:read"}, "expires_in_seconds": 2})["token"].(string)
	c, st := n.wsDial(t, "stream_id="+id2+"&token="+url.QueryEscape(wsTok))
	if st != 101 {
		t.Fatalf("websocket: %d", st)
	}
	expectSubscribed(t, c)
	c.SetReadDeadline(time.Now().Add(15 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4401 {
			t.Fatalf("websocket at the token's expiry: %v, want close 4401", err)
		}
		break
	}
}

// TestMintRefusesStoppedStreams: a token's stream_ids name streams that
// still deliver; a stopped one is refused by its index, as an unknown one
// is, and no token is minted.
func TestMintRefusesStoppedStreams(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-tok-stop", "test", []string{"all"}, 100000)
	live := startEventStream(t, n, k, "veh-live")
	stopped := startEventStream(t, n, k, "veh-stopped")
	if r := n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": stopped}); r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/v1/tokens", k, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{live, stopped}})
	if r.Status != 400 || r.errCode(t) != "validation_failed" || !strings.Contains(string(r.Body), `"stream_ids[1]"`) || !strings.Contains(string(r.Body), "stopped") {
		t.Fatalf("mint for a stopped stream: %d %s; want 400 validation_failed naming stream_ids[1] as stopped", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/tokens", k, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{"str_none"}}); r.Status != 400 || !strings.Contains(string(r.Body), `"stream_ids[0]"`) {
		t.Errorf("mint for an unknown stream: %d %s; want 400 naming stream_ids[0]", r.Status, r.Body)
	}
	m := n.mintToken(t, k, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{live}})
	if ids := m["stream_ids"].([]any); len(ids) != 1 || ids[0] != live {
		t.Errorf("minted for the live stream: %v", m)
	}
}

// TestMintRefusesWebhookStreams: a token's stream_ids name streams a
// token's client can read; a webhook stream, whose messages go to its
// webhook_url and which the websocket and the event stream refuse, is 400
// validation_failed naming its place, and no token is minted.
func TestMintRefusesWebhookStreams(t *testing.T) {
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-tok-hook", "test", []string{"all"}, 100000)
	live := startEventStream(t, n, k, "veh-live")
	recv := newReceiver(t, http.StatusOK)
	r := n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"data_types": []string{"gps_enhanced"},
		"delivery_method": "webhook", "webhook_url": recv.URL})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	hook := r.json(t)["stream_id"].(string)
	r = n.do("POST", "/v1/tokens", k, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{live, hook}})
	if r.Status != 400 || r.errCode(t) != "validation_failed" {
		t.Fatalf("mint for a webhook stream: %d %s; want 400 validation_failed", r.Status, r.Body)
	}
	if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d["stream_ids[1]"] != tokens.WebhookStreamRefusal || len(d) != 1 {
		t.Fatalf("mint for a webhook stream: details %v, want stream_ids[1] named", d)
	}
	if m := n.mintToken(t, k, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{live}}); m["token"] == nil {
		t.Errorf("mint for the websocket stream: %v", m)
	}
}
