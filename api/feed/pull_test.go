package feed_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
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
