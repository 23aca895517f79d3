package feed_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	apifeed "github.com/fleethub/fleethub/api/feed"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// TestWaitingPullAnswersOnShutdown: a long poll waiting for an entry
// answers an empty page with a cursor when the handlers shut down, so
// that it does not hold the server's shutdown for its whole wait.
func TestWaitingPullAnswersOnShutdown(t *testing.T) {
	key, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	bus := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { bus.Close(context.Background()) })
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), oneKey(key), ratelimit.NewMemory(nil))
	h := apifeed.New(apifeed.Config{}, feed.New(bus), nil, nil)
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
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	}()

	type answer struct {
		status int
		body   []byte
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+addr.String()+"/api/v1/streaming/feed?after=now&wait=30", nil)
		req.Header.Set("X-API-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		got <- answer{res.StatusCode, b, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		var p struct {
			Entries    []json.RawMessage `json:"entries"`
			NextCursor string            `json:"next_cursor"`
		}
		if a.err != nil || a.status != 200 || json.Unmarshal(a.body, &p) != nil || len(p.Entries) != 0 || p.NextCursor == "" {
			t.Fatalf("answer on shutdown: %d %s %v", a.status, a.body, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting pull did not answer on shutdown")
	}
}

// TestLongCursorsAreTakenBack: a cursor carries every partition's offset
// of the topics read, so on a bus of many partitions it is longer than
// the 200 characters of a filter value; the feed takes back every cursor
// it made, as after and as Last-Event-ID, instead of refusing its own
// next_cursor for its length.
func TestLongCursorsAreTakenBack(t *testing.T) {
	key, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	bus := embedbus.New(embedbus.Config{Partitions: 64})
	t.Cleanup(func() { bus.Close(context.Background()) })
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), oneKey(key), ratelimit.NewMemory(nil))
	h := apifeed.New(apifeed.Config{}, feed.New(bus), nil, nil)
	srv.Handle(h.Routes()...)
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
		<-served
	})
	pull := func(query, lastEventID string) (int, string, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addr.String()+"/api/v1/streaming/feed?types=events&types=telemetry&"+query, nil)
		req.Header.Set("X-API-Key", key)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var p struct {
			NextCursor string `json:"next_cursor"`
		}
		_ = json.Unmarshal(b, &p)
		return res.StatusCode, p.NextCursor, b
	}
	status, cursor, body := pull("after=now", "")
	if status != 200 || len(cursor) <= 200 {
		t.Fatalf("after=now: %d %s; want 200 and a cursor of more than 200 characters (64 partitions of two topics)", status, body)
	}
	if status, next, body := pull("after="+cursor, ""); status != 200 || next != cursor {
		t.Errorf("after=<its own next_cursor of %d characters>: %d %s", len(cursor), status, body)
	}
	if status, _, body := pull("wait=0", cursor); status != 200 {
		t.Errorf("Last-Event-ID: <its own next_cursor>: %d %s", status, body)
	}
	// a filter value keeps its bound
	if status, _, body := pull("after=now&vehicle_id="+strings.Repeat("v", 201), ""); status != 400 {
		t.Errorf("a vehicle_id of 201 characters: %d %s", status, body)
	}
}
