package feed_test

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	apifeed "github.com/fleethub/fleethub/api/feed"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

type oneKey string

func (k oneKey) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if key != string(k) {
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	return &api.Principal{KeyID: "k", Org: "org-a", Env: "test", Permissions: []string{"streams:read"}, Rate: 1000, Burst: 1000}, nil
}

// An event stream outlives the server's write timeout (each write has
// its own deadline), sends heartbeats while idle, delivers what comes,
// and ends on Shutdown.
func TestEventStreamOutlivesTheWriteTimeout(t *testing.T) {
	key, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	bus := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { bus.Close(context.Background()) })
	srv := api.New(api.Config{Addr: "127.0.0.1:0", WriteTimeout: 200 * time.Millisecond}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), oneKey(key), ratelimit.NewMemory(nil))
	h := apifeed.New(apifeed.Config{Heartbeat: 20 * time.Millisecond}, feed.New(bus), nil, nil)
	srv.Handle(h.Routes()...)
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("feed shutdown: %v", err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	}()

	req, _ := http.NewRequest("GET", "http://"+addr.String()+"/api/v1/streaming/feed?after=now", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	// 50 heartbeats 20 ms apart are five times the write timeout
	for beats := 0; beats < 50; {
		if !sc.Scan() {
			t.Fatalf("the stream ended after %d heartbeats: %v (%q)", beats, sc.Err(), sc.Text())
		}
		if sc.Text() == ": heartbeat" {
			beats++
		}
	}
	ev := &event.Event{EventID: "e1", EventType: "harsh_braking", Category: "safety_events", Severity: "low", Priority: "low", Source: event.Source{VehicleID: "v1"}}
	b, _ := event.Marshal(&event.Envelope{Org: "org-a", Env: "test", Kind: event.KindEvent, Event: ev})
	if err := bus.Publish(context.Background(), hub.Message{Topic: hub.TopicEvents, Key: []byte("v1"), Value: b}); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			if !strings.Contains(sc.Text(), `"event_id":"e1"`) {
				t.Fatalf("entry %s", sc.Text())
			}
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
	}
}
