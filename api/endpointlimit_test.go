package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// TestEndpointLimitHeaders: on a route with a per-key endpoint limit
// tighter than the key's plan (search: 1,000 a minute), the
// X-RateLimit-* headers count the endpoint's budget, the one that runs
// out first, and the 429 it answers says none remains; a route without
// one keeps counting the key's plan.
func TestEndpointLimitHeaders(t *testing.T) {
	key := apitest.NewKey("all")
	key.Principal.Rate, key.Principal.Burst = 100, 100
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	ok := func(c *api.Ctx) error { return c.JSON(200, map[string]bool{"ok": true}) }
	srv.Handle(&api.Route{Method: "GET", Path: "/search", Tag: "test", Handler: ok, EndpointLimit: &ratelimit.Limit{Rate: 2, Burst: 2, Window: time.Minute}},
		&api.Route{Method: "GET", Path: "/plan", Tag: "test", Handler: ok})
	base := "http://" + apitest.Serve(t, srv)
	get := func(path string) *http.Response {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-API-Key", key.Key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	for i, want := range []struct {
		status           int
		limit, remaining string
	}{{200, "2", "1"}, {200, "2", "0"}, {429, "2", "0"}} {
		res := get("/search")
		if res.StatusCode != want.status || res.Header.Get("X-RateLimit-Limit") != want.limit || res.Header.Get("X-RateLimit-Remaining") != want.remaining {
			t.Errorf("search %d: %d Limit %q Remaining %q, want %d %s %s", i+1, res.StatusCode, res.Header.Get("X-RateLimit-Limit"),
				res.Header.Get("X-RateLimit-Remaining"), want.status, want.limit, want.remaining)
		}
		if want.status == 429 && res.Header.Get("Retry-After") == "" {
			t.Errorf("search %d: 429 without Retry-After", i+1)
		}
	}
	if res := get("/plan"); res.StatusCode != 200 || res.Header.Get("X-RateLimit-Limit") != "100" || res.Header.Get("X-RateLimit-Remaining") != "96" {
		t.Errorf("plan: %d Limit %q Remaining %q, want 200 100 96", res.StatusCode, res.Header.Get("X-RateLimit-Limit"), res.Header.Get("X-RateLimit-Remaining"))
	}
}
