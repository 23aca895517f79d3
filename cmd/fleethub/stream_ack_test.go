package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// TestTelemetryStreamResumesAfterAck: a telemetry stream keeps its key's
// acknowledged position, as an at_least_once event stream does: a client
// that acknowledged offset 1 and reconnects without last_offset gets
// offset 2 on, not only what is ingested after it reconnected.
func TestTelemetryStreamResumesAfterAck(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := startKind(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}})
	var msgs []any
	for i := 1; i <= 3; i++ {
		msgs = append(msgs, telemetryMsg(i, 2000, 90))
	}
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": msgs}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	c := n.dial(t, k, "stream_id="+id+"&last_offset=0")
	expectSubscribed(t, c)
	if got := readEvents(t, c, 3); got[0].Offset != 1 || got[2].Offset != 3 {
		t.Fatalf("offsets %d..%d, want 1..3", got[0].Offset, got[2].Offset)
	}
	// the ack has no reply: a ping after it answers once it was handled
	for _, f := range []string{`{"type":"ack","stream_id":"` + id + `","offset":1}`, `{"type":"ping"}`} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for pong: %v", err)
		}
		var ctl struct{ Type, Code, Message string }
		if json.Unmarshal(data, &ctl); ctl.Type == "pong" {
			break
		} else if ctl.Type == "error" {
			t.Fatalf("ack refused: %s", data)
		}
	}
	c.Close()

	c2 := n.dial(t, k, "stream_id="+id)
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := c2.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var sub struct {
		Type   string `json:"type"`
		Offset int64  `json:"offset"`
	}
	if json.Unmarshal(data, &sub); sub.Type != "subscribed" || sub.Offset != 2 {
		t.Fatalf("reconnect without last_offset: %s, want subscribed at offset 2 (after the ack)", data)
	}
	if got := readEvents(t, c2, 2); got[0].Offset != 2 || got[1].Offset != 3 {
		t.Fatalf("after the ack: offsets %d, %d, want 2, 3", got[0].Offset, got[1].Offset)
	}
}
