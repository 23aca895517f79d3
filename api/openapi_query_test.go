package api_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
)

// TestOpenAPIListsUnknownQuery400: a route that takes no query parameter
// and no body still answers 400 to a query parameter it does not take,
// and its OpenAPI operation lists that 400; a route that checks its own
// query (OwnQuery) answers as its handler does.
func TestOpenAPIListsUnknownQuery400(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	ok := func(c *api.Ctx) error { return c.JSON(200, map[string]bool{"success": true}) }
	srv.Handle(&api.Route{Method: "GET", Path: "/bare", Tag: "test", Auth: api.AuthNone, Handler: ok},
		&api.Route{Method: "GET", Path: "/own", Tag: "test", Auth: api.AuthNone, OwnQuery: true, Handler: ok})
	addr := apitest.Serve(t, srv)
	paths := srv.OpenAPI()["paths"].(map[string]map[string]any)
	for _, c := range []struct {
		path   string
		status int
	}{{"/bare", 400}, {"/own", 200}} {
		res, body := rawRequest(t, addr, "GET "+c.path+"?zz_unknown=1 HTTP/1.1\r\nHost: x\r\n\r\n")
		if res.StatusCode != c.status {
			t.Errorf("%s?zz_unknown=1: %d %s, want %d", c.path, res.StatusCode, body, c.status)
		}
		responses := paths[c.path]["get"].(map[string]any)["responses"].(map[string]any)
		if _, listed := responses["400"]; listed != (c.status == 400) {
			t.Errorf("%s: 400 listed %v, answered %d", c.path, listed, res.StatusCode)
		}
	}
}

// TestOpenAPINamesResponseHeaders: every response of the OpenAPI document
// names the headers the server sends with it, and a served answer has
// them: X-Request-Id everywhere, the rate-limit headers wherever a key was
// charged (not on a 401), Retry-After on a 429.
func TestOpenAPINamesResponseHeaders(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	ok := func(c *api.Ctx) error { return c.JSON(200, map[string]bool{"success": true}) }
	srv.Handle(&api.Route{Method: "GET", Path: "/open", Tag: "test", Auth: api.AuthNone, Handler: ok},
		&api.Route{Method: "GET", Path: "/keyed", Tag: "test", Permission: "trips:read", Handler: ok})
	doc := srv.OpenAPI()
	if _, ok := doc["components"].(map[string]any)["headers"].(map[string]any)["Retry-After"]; !ok {
		t.Fatalf("components.headers lacks Retry-After: %v", doc["components"])
	}
	paths := doc["paths"].(map[string]map[string]any)
	headers := func(path, code string) map[string]any {
		t.Helper()
		r, ok := paths[path]["get"].(map[string]any)["responses"].(map[string]any)[code].(map[string]any)
		if !ok {
			t.Fatalf("%s has no %s response", path, code)
		}
		h, _ := r["headers"].(map[string]any)
		return h
	}
	for _, c := range []struct {
		path, code string
		want, not  []string
	}{
		{"/open", "200", []string{"X-Request-Id"}, []string{"X-RateLimit-Limit", "Retry-After"}},
		{"/keyed", "200", []string{"X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Window"}, []string{"Retry-After"}},
		{"/keyed", "403", []string{"X-Request-Id", "X-RateLimit-Limit"}, nil},
		{"/keyed", "401", []string{"X-Request-Id"}, []string{"X-RateLimit-Limit"}},
		{"/keyed", "429", []string{"X-Request-Id", "X-RateLimit-Limit", "Retry-After"}, nil},
	} {
		h := headers(c.path, c.code)
		for _, n := range c.want {
			if _, ok := h[n]; !ok {
				t.Errorf("%s %s: %s not named (%v)", c.path, c.code, n, h)
			}
		}
		for _, n := range c.not {
			if _, ok := h[n]; ok {
				t.Errorf("%s %s: %s named, and not sent", c.path, c.code, n)
			}
		}
	}
	addr := apitest.Serve(t, srv)
	for _, c := range []struct{ path, status string }{{"/open", "200"}, {"/keyed", "401"}} {
		res, body := rawRequest(t, addr, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		if fmt.Sprint(res.StatusCode) != c.status || res.Header.Get("X-Request-Id") == "" || res.Header.Get("X-RateLimit-Limit") != "" {
			t.Errorf("%s: %d %v %s", c.path, res.StatusCode, res.Header, body)
		}
	}
}
