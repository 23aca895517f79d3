package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestTurnToWebhookEndsWebsocketDelivery: a websocket stream configured
// to deliver by webhook sends its messages to the webhook_url alone. The
// websocket and Server-Sent Events clients connected before the change
// are told (webhook_delivery) and their subscription ends, as a new
// client is refused: a message is never delivered both ways.
func TestTurnToWebhookEndsWebsocketDelivery(t *testing.T) {
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	hooked := make(chan struct{}, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hooked <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(recv.Close)

	id := startEventStream(t, n, k, "veh-turn")
	c := n.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	sse := openSSE(t, n, "/api/v1/streaming/sse?stream_id="+id, k)
	n.ingestEvents(t, k, "veh-turn", 0, 1)
	if got := readEvents(t, c, 1); got[0].Offset != 1 {
		t.Fatalf("before the change: offset %d", got[0].Offset)
	}

	r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"webhook_url": recv.URL + "/hook"})
	if r.Status != 200 || r.json(t)["delivery_method"] != "webhook" {
		t.Fatalf("configure: %d %s", r.Status, r.Body)
	}
	// the websocket is told, then closed (its only stream)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var told bool
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != 4001 || !told {
				t.Fatalf("after the change: %v (told %v); want a webhook_delivery error, then close 4001", err, told)
			}
			break
		}
		var f struct{ Type, Code string }
		json.Unmarshal(data, &f)
		if f.Type == "" {
			t.Fatalf("websocket delivered %s after the stream turned to webhook delivery", data)
		}
		told = told || f.Code == "webhook_delivery"
	}
	// the event stream too
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-sse.events:
			if !ok {
				t.Fatal("event stream ended without webhook_delivery")
			}
			if ev.Name == "error" {
				if !strings.Contains(ev.Data, `"webhook_delivery"`) {
					t.Fatalf("event stream: %s", ev.Data)
				}
				done = true
			}
		case <-deadline:
			t.Fatal("event stream not told of the webhook delivery")
		}
	}
	// what comes next goes to the webhook
	n.ingestEvents(t, k, "veh-turn", 1, 1)
	select {
	case <-hooked:
	case <-time.After(10 * time.Second):
		t.Fatal("the webhook received nothing")
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if st["connected_clients"] != float64(0) {
		t.Fatalf("connected_clients %v after the change", st["connected_clients"])
	}
}

// TestTurnToWebsocketKeepsTheLastAnswer: the deliveries a webhook stream
// still owed when it was configured to websocket delivery are
// dead-lettered without an attempt; each keeps the status code and the
// latency of its last attempt, which no attempt replaced.
func TestTurnToWebsocketKeepsTheLastAnswer(t *testing.T) {
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(recv.Close)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"event_filters": map[string]any{"vehicle_ids": []string{"veh-back"}}, "webhook_url": recv.URL})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	n.ingestEvents(t, k, "veh-back", 0, 1)
	delivery := func() map[string]any {
		ds, _ := n.do("GET", "/api/v1/streaming/events/deliveries/"+id, k, nil).json(t)["deliveries"].([]any)
		if len(ds) != 1 {
			return nil
		}
		return ds[0].(map[string]any)
	}
	var failed map[string]any
	waitFor(t, "a failed attempt", func() bool {
		failed = delivery()
		return failed != nil && failed["status"] == "failed"
	})
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"stream_config": map[string]any{"delivery_method": "websocket"}}); r.Status != 200 {
		t.Fatalf("configure: %d %s", r.Status, r.Body)
	}
	if d := delivery(); d["status"] == "failed" {
		failed = d // a retry may have ended since: the last attempt is the one before the change
	}
	var dead map[string]any
	waitFor(t, "the delivery dead-lettered", func() bool {
		dead = delivery()
		return dead != nil && dead["status"] == "dead_lettered"
	})
	if dead["attempts"] != failed["attempts"] || dead["last_status_code"] != float64(500) || dead["last_latency_ms"] != failed["last_latency_ms"] ||
		!strings.Contains(dead["last_error"].(string), "no longer delivers by webhook") {
		t.Errorf("dead-lettered %v after %v: want the attempts, last_status_code and last_latency_ms of the last attempt, and why", dead, failed)
	}
}
