package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// The websocket upgrade refuses a bad query as every streaming endpoint
// does: 400 invalid_request with details naming each parameter at fault,
// a parameter of one value given twice refused as "must be given once"
// (never read as its first value), the feed's parameters named the same.
func TestWebsocketQueryRefusalsNameTheParameter(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	r = n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": "https://example.com/h"})
	if r.Status != 201 {
		t.Fatalf("start webhook: %d %s", r.Status, r.Body)
	}
	hook := r.json(t)["stream_id"].(string)
	for _, c := range []struct {
		query string
		want  map[string]string
	}{
		{"stream_id=" + id + "&last_offset=1&last_offset=2", map[string]string{"last_offset": "must be given once"}},
		{"stream_id=" + id + "&encoding=json&encoding=msgpack", map[string]string{"encoding": "must be given once"}},
		{"stream_id=" + id + "&last_offset=1&epoch=a&epoch=b", map[string]string{"epoch": "must be given once"}},
		{"stream_id=" + id + "&feed=true&feed=true", map[string]string{"feed": "must be given once"}},
		{"stream_id=" + id + "&api_key=" + k + "&api_key=" + k, map[string]string{"api_key": "must be given once"}},
		{"stream_id=" + id + "&last_offset=x", map[string]string{"last_offset": "must be an integer >= 0"}},
		{"stream_id=" + id + "&last_offset=-1", map[string]string{"last_offset": "must be an integer >= 0"}},
		{"stream_id=" + id + "&encoding=xml", map[string]string{"encoding": "must be json or msgpack"}},
		{"stream_id=" + id + "&last_offset=1&epoch=!", map[string]string{"epoch": "must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -"}},
		{"stream_id=" + id + "&epoch=abc", map[string]string{"epoch": "is the history of last_offset: give both or neither"}},
		{"stream_id=" + id + "&feed=yes", map[string]string{"feed": "must be true (follow the organization's feed)"}},
		{"encoding=json", map[string]string{"stream_id": "is required (or feed=true)"}},
		{"stream_id=" + id + ",%20", map[string]string{"stream_id": "must not be empty or only white space (each id of the list)"}},
		{"stream_id=" + id + ",," + id, map[string]string{"stream_id": "must not be empty or only white space (each id of the list)"}},
		{"stream_id=" + id + "&encoding=xml&last_offset=x&bogus=1", map[string]string{"encoding": "must be json or msgpack", "last_offset": "must be an integer >= 0", "bogus": "unknown parameter"}},
		{"stream_id=" + hook, map[string]string{"stream_id": "is a webhook stream: its messages go to its webhook_url"}},
		{"stream_id=" + id + "&=1", map[string]string{`[""]`: "unknown parameter"}},
		{"feed=true&=1", map[string]string{`[""]`: "unknown parameter"}},
		{"feed=true&types=bogus", map[string]string{"types": "must be events or telemetry (repeatable)"}},
		{"feed=true&after=now&after=now", map[string]string{"after": "must be given once"}},
		{"feed=true&after=AAAA", map[string]string{"after": "is not a cursor of this feed for these types"}},
		{"feed=true&limit=5", map[string]string{"limit": "is for a pull: a websocket subscription sends entries as they come"}},
	} {
		u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?" + c.query
		conn, res, err := websocket.DefaultDialer.Dial(u, http.Header{"X-API-Key": {k}})
		if err == nil {
			conn.Close()
			t.Errorf("%s: upgraded", c.query)
			continue
		}
		if res == nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var body struct {
			Error struct {
				Code    string            `json:"code"`
				Message string            `json:"message"`
				Details map[string]string `json:"details"`
			} `json:"error"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: body %q: %v", c.query, b, err)
		}
		if res.StatusCode != 400 || body.Error.Code != "invalid_request" || body.RequestID == "" {
			t.Errorf("%s: %d %s", c.query, res.StatusCode, b)
			continue
		}
		if fmt.Sprint(body.Error.Details) != fmt.Sprint(c.want) {
			t.Errorf("%s: details %v, want %v", c.query, body.Error.Details, c.want)
		}
		for name := range c.want {
			if !strings.Contains(body.Error.Message, name+": ") {
				t.Errorf("%s: message %q does not name %s", c.query, body.Error.Message, name)
			}
		}
	}
	// a good query still opens
	c := n.dial(t, k, "stream_id="+id+"&last_offset=0&encoding=json")
	expectSubscribed(t, c)
}
