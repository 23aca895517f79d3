package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// keys authenticates two keys: tight's plan allows one request a minute,
// loose's a thousand.
type keys struct{ tight, loose string }

func (k keys) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	p := &api.Principal{Org: "org-a", Env: "test", Permissions: []string{"all"}}
	switch key {
	case k.tight:
		p.KeyID, p.Rate, p.Burst = "tight", 1, 1
	case k.loose:
		p.KeyID, p.Rate, p.Burst = "loose", 1000, 1000
	default:
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	return p, nil
}

// Every 429 shows on /metrics as one more rate-limit rejection, whether
// the key's plan, a route's endpoint limit or a handler's own limit
// (trips' per-trip limit) rejected it.
func TestRateLimitRejectionsOnMetrics(t *testing.T) {
	var ks keys
	for _, k := range []*string{&ks.tight, &ks.loose} {
		var err error
		if *k, err = apikey.Generate("test"); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, reg, ks, ratelimit.NewMemory(nil))
	metrics := fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ok := func(c *api.Ctx) error { return c.JSON(200, map[string]bool{"ok": true}) }
	srv.Handle(
		&api.Route{Method: "GET", Path: "/plan", Tag: "test", Handler: ok},
		&api.Route{Method: "GET", Path: "/search", Tag: "test", Handler: ok,
			EndpointLimit: &ratelimit.Limit{Rate: 1, Burst: 1, Window: time.Minute}},
		&api.Route{Method: "GET", Path: "/own", Tag: "test", Auth: api.AuthNone, Handler: func(*api.Ctx) error {
			e := api.Errf("rate_limit_exceeded", "at most 10 single uploads per second per trip")
			e.RetryAfter = 1
			return e
		}},
		&api.Route{Method: "GET", Path: "/metrics", Tag: "test", Auth: api.AuthNone, Raw: "text/plain",
			Handler: func(c *api.Ctx) error { metrics(c.RequestCtx); return nil }},
	)
	addr := apitest.Serve(t, srv)
	base := "http://" + addr

	get := func(key, path string) int {
		t.Helper()
		req, err := http.NewRequest("GET", base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	rejections := func() float64 {
		t.Helper()
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "fleethub_rate_limit_rejections_total "); ok {
				n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					t.Fatalf("metric line %q: %v", line, err)
				}
				return n
			}
		}
		t.Fatalf("/metrics has no fleethub_rate_limit_rejections_total:\n%s", b)
		return 0
	}

	// one request at a time: its status, and the rejections /metrics
	// must count afterwards
	steps := []struct {
		name   string
		key    string
		path   string
		status int
		want   float64
	}{
		{"plan allows the first", ks.tight, "/plan", 200, 0},
		{"plan rejects the second", ks.tight, "/plan", 429, 1},
		{"endpoint limit allows the first", ks.loose, "/search", 200, 1},
		{"endpoint limit rejects the second", ks.loose, "/search", 429, 2},
		{"plan still has room", ks.loose, "/plan", 200, 2},
		{"handler's own limit", "", "/own", 429, 3},
		{"handler's own limit again", "", "/own", 429, 4},
	}
	for _, s := range steps {
		if got := get(s.key, s.path); got != s.status {
			t.Fatalf("%s: GET %s = %d, want %d", s.name, s.path, got, s.status)
		}
		if got := rejections(); got != s.want {
			t.Fatalf("%s: fleethub_rate_limit_rejections_total = %v, want %v", s.name, got, s.want)
		}
	}
}
