package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestWSCapsPerKey: a starter key holds at most 100 websocket connections;
// the next is refused with 429 too_many_connections before the upgrade,
// and closing one frees its slot (issue 14 item 2).
func TestWSCapsPerKey(t *testing.T) {
	n := startNode(t, testConfig(t))
	c, err := n.app.keys.Create(context.Background(), keys.CreateRequest{Org: "org-caps", Env: "test", Name: "caps", Permissions: []string{"all"}, Plan: "starter", RPM: 100000})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Key
	id := startEventStream(t, n, k, "veh-caps")
	query := "stream_id=" + id
	conns := make([]*websocket.Conn, 0, ws.DefaultStarterConns)
	for range ws.DefaultStarterConns {
		conns = append(conns, n.dial(t, k, query))
	}
	u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?" + query
	h := http.Header{"X-Api-Key": {k}}
	_, res, err := websocket.DefaultDialer.Dial(u, h)
	if err == nil || res == nil || res.StatusCode != 429 {
		t.Fatalf("connection %d: %v %v, want 429", ws.DefaultStarterConns+1, err, res)
	}
	body, _ := io.ReadAll(res.Body)
	var e struct {
		Error     struct{ Code string }
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code != "too_many_connections" || e.RequestID == "" || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("refusal: %s (Retry-After %q)", body, res.Header.Get("Retry-After"))
	}
	if res.Header.Get("Upgrade") != "" {
		t.Fatalf("the refusal upgraded: %v", res.Header)
	}
	// another key of the organization has its own cap
	other := n.key("org-caps", "test", []string{"all"}, 100000)
	expectSubscribed(t, n.dial(t, other, query))

	conns[0].Close()
	var again *websocket.Conn
	waitfor.NoError(t, 5*time.Second, "a slot after a close", func() (err error) {
		again, _, err = websocket.DefaultDialer.Dial(u, h)
		return err
	})
	expectSubscribed(t, again)
	again.Close()
}
