package api_test

import (
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
