package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/twmb/franz-go/pkg/kfake"
)

type delivered struct {
	StreamID string          `json:"stream_id"`
	Offset   int64           `json:"offset"`
	Message  json.RawMessage `json:"message"`
}

func (n *node) dial(t *testing.T, key, query string) *websocket.Conn {
	t.Helper()
	u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?" + query
	h := http.Header{}
	if key != "" {
		h.Set("X-API-Key", key)
	}
	c, res, err := websocket.DefaultDialer.Dial(u, h)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", query, err, status)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectSubscribed reads the subscribed frame that starts a connection's
// delivery: what is published after it reaches the client.
func expectSubscribed(t *testing.T, c *websocket.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("waiting for subscribed: %v", err)
	}
	var ctl struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &ctl) != nil || ctl.Type != "subscribed" {
		t.Fatalf("waiting for subscribed: got %s", data)
	}
}

// readEvents reads n delivered messages (skipping control frames).
func readEvents(t *testing.T, c *websocket.Conn, n int) []delivered {
	t.Helper()
	return readEventsWithin(t, c, n, 15*time.Second)
}

func readEventsWithin(t *testing.T, c *websocket.Conn, n int, within time.Duration) []delivered {
	t.Helper()
	var out []delivered
	c.SetReadDeadline(time.Now().Add(within))
	for len(out) < n {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(out), n, err)
		}
		if len(data) > 0 && data[0] == '[' {
			var batch []delivered
			if err := json.Unmarshal(data, &batch); err != nil {
				t.Fatal(err)
			}
			out = append(out, batch...)
			continue
		}
		var d delivered
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatal(err)
		}
		if len(d.Message) == 0 {
			continue // control frame ({"type": ...})
		}
		out = append(out, d)
	}
	return out
}

func (n *node) ingestEvents(t *testing.T, key, vehicle string, from, count int) {
	t.Helper()
	evs := make([]map[string]any, count)
	for i := range evs {
		evs[i] = map[string]any{"event_id": fmt.Sprintf("%s-%d", vehicle, from+i), "event_type": "harsh_braking", "category": "safety_events",
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "severity": "high", "priority": "urgent",
			"source": map[string]any{"vehicle_id": vehicle}, "event_data": map[string]any{"seq": from + i}}
	}
	if r := n.do("POST", "/v1/events", key, map[string]any{"events": evs}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
}

func seqOf(t *testing.T, d delivered) int {
	var m struct {
		EventData struct {
			Seq int `json:"seq"`
		} `json:"event_data"`
	}
	if err := json.Unmarshal(d.Message, &m); err != nil {
		t.Fatal(err)
	}
	return m.EventData.Seq
}

func startEventStream(t *testing.T, n *node, key, vehicle string) string {
	t.Helper()
	r := n.do("POST", "/api/v1/streaming/events/start", key, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{vehicle}}})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	return r.json(t)["stream_id"].(string)
}

func TestWebsocketEndToEnd(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	id := startEventStream(t, n, k, "veh-ws")

	// key in the query, as browsers do
	c := n.dial(t, "", "stream_id="+id+"&api_key="+url.QueryEscape(k))
	expectSubscribed(t, c)
	n.ingestEvents(t, k, "veh-ws", 0, 20)
	n.ingestEvents(t, k, "veh-other", 0, 5) // filtered out
	got := readEvents(t, c, 20)
	for i, d := range got {
		if d.StreamID != id || d.Offset != int64(i+1) || seqOf(t, d) != i {
			t.Fatalf("message %d: stream %s offset %d seq %d", i, d.StreamID, d.Offset, seqOf(t, d))
		}
	}
	// resume after offset 15 on a new connection: 16..20 then live
	c2 := n.dial(t, k, "stream_id="+id+"&last_offset=15")
	n.ingestEvents(t, k, "veh-ws", 20, 3)
	again := readEvents(t, c2, 8)
	for i, d := range again {
		if d.Offset != int64(16+i) {
			t.Fatalf("resume: message %d has offset %d", i, d.Offset)
		}
	}
	// auth and scope
	u := strings.Replace(n.url, "http://", "ws://", 1) + "/api/v1/streaming/ws?stream_id=" + id
	if _, res, err := websocket.DefaultDialer.Dial(u, nil); err == nil || res == nil || res.StatusCode != 401 {
		t.Errorf("no key: %v %v", err, res)
	}
	h := http.Header{"X-Api-Key": []string{other}}
	if _, res, err := websocket.DefaultDialer.Dial(u, h); err == nil || res == nil || res.StatusCode != 404 {
		t.Errorf("another org's stream: %v %v", err, res)
	}
	// stopping the stream closes the connection with 4001
	n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": id})
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err != nil {
			if ce, ok := err.(*websocket.CloseError); !ok || ce.Code != 4001 {
				t.Fatalf("close after stop: %v", err)
			}
			break
		}
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if st["counters"].(map[string]any)["delivered"].(float64) < 20 {
		t.Errorf("delivered counter %v", st["counters"])
	}
}

// TestTwoNodesKafkaRedis: a stream created on node A is served on node
// B, and a client on B receives what was ingested at A, in order, once;
// an encrypted stream started on A delivers the same messages on B,
// sealed with the key A's start answer showed, whichever node matched
// them.
func TestTwoNodesKafkaRedis(t *testing.T) {
	redisURL := requireService(t, "FLEETHUB_TEST_REDIS_URL")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	brokers := strings.Join(cluster.ListenAddrs(), ",")
	cfgA := testConfig(t)
	cfgA.KafkaBrokers, cfgA.RedisURL = brokers, redisURL
	a := startNode(t, cfgA)
	cfgB := testConfig(t)
	cfgB.Data = cfgA.Data // one store (PostgreSQL in production)
	cfgB.KafkaBrokers, cfgB.RedisURL = brokers, redisURL
	b := startNode(t, cfgB)

	k := a.key("org-a", "test", []string{"all"}, 1_000_000)
	vehicle := fmt.Sprintf("veh-%d", time.Now().UnixNano())
	id := startEventStream(t, a, k, vehicle)
	c := b.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	// an encrypted stream started on A seals on whichever node matches
	encID, encKey := startEncrypted(t, a, k, "events", map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{vehicle}},
		"stream_config": map[string]any{"encryption": true}})
	ce := b.dial(t, k, "stream_id="+encID)
	expectSubscribed(t, ce)
	const total = 300
	for i := 0; i < total; i += 50 {
		a.ingestEvents(t, k, vehicle, i, 50)
	}
	// node B joined the consumer group after A: the rebalance may hold
	// consumption for up to the group's rebalance timeout (10 s)
	got := readEventsWithin(t, c, total, 45*time.Second)
	for i, d := range got {
		if d.Offset != int64(i+1) || seqOf(t, d) != i {
			t.Fatalf("message %d: offset %d seq %d", i, d.Offset, seqOf(t, d))
		}
	}
	for i, d := range readEventsWithin(t, ce, total, 45*time.Second) {
		if p := openRaw(t, encKey, encID, d.Message); d.Offset != int64(i+1) || !bytes.Equal(p, got[i].Message) {
			t.Fatalf("encrypted message %d: offset %d, decrypts to %s, want %s", i, d.Offset, p, got[i].Message)
		}
	}
	// nothing more arrives: no duplicates
	c.SetReadDeadline(time.Now().Add(time.Second))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			break
		}
		var d delivered
		if json.Unmarshal(data, &d) == nil && len(d.Message) > 0 {
			t.Fatalf("extra delivery: offset %d", d.Offset)
		}
	}
	// status on either node counts what both did
	waitFor(t, "shared counters", func() bool {
		st := b.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
		return st["counters"].(map[string]any)["matched"].(float64) == total
	})
}

// TestPauseResumeStopReachTheSubscriber: a connected subscriber follows
// its stream's state as the API changes it: a paused stream takes
// nothing (what is published meanwhile is never delivered), delivery
// goes on once it is active again, and stopping it tells the subscriber
// so.
func TestPauseResumeStopReachTheSubscriber(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := startEventStream(t, n, k, "veh-state")
	c := n.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	frames := make(chan []byte, 64)
	go func() {
		defer close(frames)
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			frames <- data
		}
	}()
	next := func(within time.Duration) ([]byte, bool) {
		select {
		case f, ok := <-frames:
			return f, ok
		case <-time.After(within):
			return nil, false
		}
	}
	message := func(f []byte) delivered {
		var d delivered
		if err := json.Unmarshal(f, &d); err != nil || len(d.Message) == 0 {
			t.Fatalf("want a delivered message, got %s", f)
		}
		return d
	}

	n.ingestEvents(t, k, "veh-state", 0, 1)
	if f, ok := next(10 * time.Second); !ok || message(f).Offset != 1 {
		t.Fatalf("active stream: got %s, %v", f, ok)
	}
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"state": "paused"}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	n.ingestEvents(t, k, "veh-state", 1, 2)
	if f, ok := next(time.Second); ok {
		t.Fatalf("paused stream delivered %s", f)
	}
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"state": "active"}); r.Status != 200 {
		t.Fatalf("resume: %d %s", r.Status, r.Body)
	}
	n.ingestEvents(t, k, "veh-state", 3, 1)
	f, ok := next(10 * time.Second)
	if !ok {
		t.Fatal("nothing delivered after resume")
	}
	if d := message(f); d.Offset != 2 || seqOf(t, d) != 3 {
		t.Fatalf("after resume: offset %d, seq %d; want the event published after it (seq 3) at offset 2", d.Offset, seqOf(t, d))
	}
	if r := n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": id}); r.Status != 200 {
		t.Fatalf("stop: %d %s", r.Status, r.Body)
	}
	f, ok = next(10 * time.Second)
	if !ok || !strings.Contains(string(f), `"stream_stopped"`) {
		t.Fatalf("after stop: got %s, %v", f, ok)
	}
}
