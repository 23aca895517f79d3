package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// centrifugoFake answers the part of Centrifugo's protocol the fan-out
// generator speaks (Centrifugo itself is not on the machines the tests
// run on): connect and subscribe commands over /connection/websocket,
// publishes through /api/publish and /api/batch with an API key, each
// pushed to the channel's subscribers as Centrifugo frames them. It
// pings every new connection once and counts the answers.
type centrifugoFake struct {
	key      string
	refuse   string // a channel whose subscription fails
	mu       sync.Mutex
	subs     map[string][]*websocket.Conn
	locks    map[*websocket.Conn]*sync.Mutex
	pongs    int
	commands []string // the publish paths seen
}

func (f *centrifugoFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/connection/websocket":
		f.connection(w, r)
	case "/api/publish", "/api/batch":
		if r.Header.Get("X-API-Key") != f.key {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		var body struct {
			Channel  string          `json:"channel"`
			Data     json.RawMessage `json:"data"`
			Commands []struct {
				Publish struct {
					Channel string          `json:"channel"`
					Data    json.RawMessage `json:"data"`
				} `json:"publish"`
			} `json:"commands"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.commands = append(f.commands, r.URL.Path)
		f.mu.Unlock()
		f.mu.Lock()
		refuse := f.refuse
		f.mu.Unlock()
		const unknown = `{"error":{"code":102,"message":"unknown channel"}}`
		if r.URL.Path == "/api/publish" {
			if body.Channel == refuse {
				_, _ = w.Write([]byte(unknown))
				return
			}
			f.push(body.Channel, body.Data)
			_, _ = w.Write([]byte(`{"result":{}}`))
			return
		}
		var replies []string
		for _, c := range body.Commands {
			if c.Publish.Channel == refuse {
				replies = append(replies, unknown)
				continue
			}
			f.push(c.Publish.Channel, c.Publish.Data)
			replies = append(replies, `{"publish":{}}`)
		}
		_, _ = w.Write([]byte(`{"replies":[` + strings.Join(replies, ",") + `]}`))
	default:
		http.NotFound(w, r)
	}
}

func (f *centrifugoFake) connection(w http.ResponseWriter, r *http.Request) {
	c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	_, m, err := c.ReadMessage()
	if err != nil {
		return
	}
	f.mu.Lock()
	refuse := f.refuse
	f.mu.Unlock()
	var channel string
	var replies []string
	for _, line := range strings.Split(string(m), "\n") {
		var cmd struct {
			ID        int `json:"id"`
			Subscribe *struct {
				Channel string `json:"channel"`
			} `json:"subscribe"`
		}
		if json.Unmarshal([]byte(line), &cmd) != nil {
			continue
		}
		switch {
		case cmd.Subscribe != nil && cmd.Subscribe.Channel == refuse:
			replies = append(replies, `{"id":2,"error":{"code":103,"message":"permission denied"}}`)
		case cmd.Subscribe != nil:
			channel = cmd.Subscribe.Channel
			replies = append(replies, `{"id":2,"subscribe":{}}`)
		default:
			replies = append(replies, `{"id":1,"connect":{"client":"c","ping":25,"pong":true}}`)
		}
	}
	lock := &sync.Mutex{}
	f.mu.Lock()
	if channel != "" {
		f.subs[channel] = append(f.subs[channel], c)
		f.locks[c] = lock
	}
	f.mu.Unlock()
	lock.Lock()
	_ = c.WriteMessage(websocket.TextMessage, []byte(strings.Join(replies, "\n")))
	_ = c.WriteMessage(websocket.TextMessage, []byte(`{}`)) // a ping
	lock.Unlock()
	for {
		_, m, err := c.ReadMessage()
		if err != nil {
			return
		}
		if string(m) == "{}" {
			f.mu.Lock()
			f.pongs++
			f.mu.Unlock()
		}
	}
}

func (f *centrifugoFake) push(channel string, data json.RawMessage) {
	var frame bytes.Buffer
	frame.WriteString(`{"push":{"channel":`)
	ch, _ := json.Marshal(channel)
	frame.Write(ch)
	frame.WriteString(`,"pub":{"data":`)
	frame.Write(data)
	frame.WriteString(`}}}`)
	f.mu.Lock()
	subs := f.subs[channel]
	f.mu.Unlock()
	for _, c := range subs {
		f.mu.Lock()
		lock := f.locks[c]
		f.mu.Unlock()
		lock.Lock()
		_ = c.WriteMessage(websocket.TextMessage, frame.Bytes())
		lock.Unlock()
	}
}

func newCentrifugoFake(t *testing.T, key string) (*centrifugoFake, *httptest.Server) {
	f := &centrifugoFake{key: key, subs: map[string][]*websocket.Conn{}, locks: map[*websocket.Conn]*sync.Mutex{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// The fan-out generator drives a Centrifugo server with the same
// subscribers, senders and events: every event published reaches each
// subscriber of its channel once, in order, one a request through
// /api/publish or several through /api/batch; the server's pings are
// answered; a publish the server refuses counts as an ingest error.
func TestFanoutDrivesCentrifugo(t *testing.T) {
	for _, batch := range []int{1, 3} {
		f, srv := newCentrifugoFake(t, "secret")
		res, err := Fanout(context.Background(), FanoutConfig{URL: srv.URL, Centrifugo: "secret", Subscribers: 4, Streams: 2, Rate: 300, Batch: batch,
			Senders: 2, Duration: 500 * time.Millisecond, Drain: 300 * time.Millisecond})
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		if res.Server != "centrifugo" || res.Offered != 300 || res.Sent == 0 || res.Expected != 2*res.Sent || res.Delivered != res.Expected || res.Lost != 0 || res.Duplicates != 0 || res.OutOfOrder != 0 || res.IngestErrors != 0 {
			t.Fatalf("batch %d: %+v", batch, *res)
		}
		f.mu.Lock()
		want := "/api/publish"
		if batch > 1 {
			want = "/api/batch"
		}
		if len(f.commands) == 0 || f.commands[0] != want || f.pongs != 4 {
			t.Fatalf("batch %d: publishes through %v, %d pongs of 4 subscribers", batch, f.commands, f.pongs)
		}
		f.mu.Unlock()
	}
	_, srv := newCentrifugoFake(t, "secret")
	res, err := Fanout(context.Background(), FanoutConfig{URL: srv.URL, Centrifugo: "wrong", Subscribers: 1, Rate: 100, Batch: 1, Senders: 1,
		Duration: 200 * time.Millisecond, Drain: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 0 || res.IngestErrors == 0 {
		t.Fatalf("with a wrong key: %d sent, %d errors", res.Sent, res.IngestErrors)
	}
}

// A publish the server answers with an error object (in a 200 answer,
// alone or among a batch's replies) is an error.
func TestCentrifugoPublishErrors(t *testing.T) {
	f, srv := newCentrifugoFake(t, "secret")
	f.mu.Lock()
	f.refuse = "gone"
	f.mu.Unlock()
	ev := map[string]any{"n": 1}
	ctx := context.Background()
	if err := centrifugoPublish(ctx, http.DefaultClient, srv.URL, "secret", []string{"ok"}, []map[string]any{ev}); err != nil {
		t.Fatalf("a publish: %v", err)
	}
	if err := centrifugoPublish(ctx, http.DefaultClient, srv.URL, "secret", []string{"gone"}, []map[string]any{ev}); err == nil || !strings.Contains(err.Error(), "unknown channel") {
		t.Fatalf("a refused publish: %v", err)
	}
	if err := centrifugoPublish(ctx, http.DefaultClient, srv.URL, "secret", []string{"ok", "gone"}, []map[string]any{ev, ev}); err == nil || !strings.Contains(err.Error(), "a publish of the batch") {
		t.Fatalf("a batch with a refused publish: %v", err)
	}
}

// A subscription the server refuses stops the run, naming the channel.
func TestFanoutCentrifugoRefusedSubscription(t *testing.T) {
	f, srv := newCentrifugoFake(t, "secret")
	ch := streamNames(runVehiclesFor("fanout", 1, 1))[0]
	f.mu.Lock()
	f.refuse = ch
	f.mu.Unlock()
	c, _, err := websocket.DefaultDialer.Dial(strings.Replace(srv.URL, "http://", "ws://", 1)+"/connection/websocket", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = centrifugoSubscribe(c, ch)
	if err == nil || !strings.Contains(err.Error(), ch) || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("refused subscription: %v", err)
	}
}
