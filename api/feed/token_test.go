package feed_test

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// testToken looks like a browser token to the server.
const testToken = "eyJ0ZXN0.eyJ0ZXN0.c2ln"

// oneToken authenticates testToken with a Life the test ends.
type oneToken struct{ life context.Context }

func (a oneToken) AuthenticateToken(_ context.Context, tok string) (*api.Principal, error) {
	if tok != testToken {
		return nil, api.Errf("invalid_token", "not a token")
	}
	return &api.Principal{KeyID: "k", Org: "org-a", Env: "test", Rate: 1000, Burst: 1000,
		Token: &apikey.TokenGrant{ID: "tok_1", Scopes: []string{"feed:read", "streams:read"}, ExpiresAt: time.Now().Add(time.Hour), Life: a.life}}, nil
}

type oneStream struct{}

func (oneStream) Stream(org, env, id string) (hub.StreamInfo, bool) {
	if org != "org-a" || env != "test" || id != "str_1" {
		return hub.StreamInfo{}, false
	}
	return hub.StreamInfo{ID: id, Org: org, Env: env, Kind: hub.KindEvents, State: hub.StateActive, Delivery: "websocket"}, true
}

// An event stream opened with a browser token, of the feed or of a
// registered stream, ends when the token expires or is revoked: an error
// event with token_expired or token_revoked, then the end of the body.
func TestEventStreamEndsWithItsToken(t *testing.T) {
	for _, tc := range []struct {
		path  string
		cause error
		code  string
	}{
		{"/api/v1/streaming/feed?after=now", apikey.ErrTokenExpired, "token_expired"},
		{"/api/v1/streaming/feed?after=now", apikey.ErrTokenRevoked, "token_revoked"},
		{"/api/v1/streaming/sse?stream_id=str_1", apikey.ErrTokenExpired, "token_expired"},
		{"/api/v1/streaming/sse?stream_id=str_1", apikey.ErrTokenRevoked, "token_revoked"},
	} {
		t.Run(tc.code+tc.path[:23], func(t *testing.T) {
			life, end := context.WithCancelCause(context.Background())
			defer end(nil)
			url := serveWithToken(t, oneToken{life})
			req, _ := http.NewRequest("GET", url+tc.path+"&token="+testToken, nil)
			req.Header.Set("Accept", "text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() && !strings.HasPrefix(sc.Text(), "retry:") {
			}
			end(tc.cause)
			var name, data string
			for sc.Scan() {
				switch line := sc.Text(); {
				case strings.HasPrefix(line, "event: "):
					name = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: ") && name == "error":
					data = strings.TrimPrefix(line, "data: ")
				}
			}
			var ev struct{ Code, Message string }
			if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Code != tc.code || ev.Message == "" {
				t.Fatalf("the stream ended with %q (%v), want an error event %s", data, err, tc.code)
			}
		})
	}
}

// serveWithToken runs the feed handlers behind a server that takes
// testToken, and returns its base URL.
func serveWithToken(t *testing.T, tokens api.TokenAuthenticator) string {
	t.Helper()
	bus := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { bus.Close(context.Background()) })
	logger := slog.New(slog.DiscardHandler)
	l := embedlog.New(embedlog.Config{})
	t.Cleanup(func() { _ = l.Close() })
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, logger, prometheus.NewRegistry(), oneKey("fhk_test_unused"), ratelimit.NewMemory(nil))
	srv.SetTokens(tokens)
	h := apifeed.New(apifeed.Config{Heartbeat: 50 * time.Millisecond}, feed.New(bus), oneStream{}, l)
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
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("feed shutdown: %v", err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-served
	})
	return "http://" + addr.String()
}
