package api_test

import (
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
)

// TestPathParamsDecodedOnce: every path parameter reaches the handler
// percent-decoded once, so an id with reserved characters is addressable;
// one that does not decode is 400 invalid_request naming the parameter,
// and the handler never runs.
func TestPathParamsDecodedOnce(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	var ran atomic.Int64
	srv.Handle(&api.Route{Method: "GET", Path: "/things/{thing_id}/parts/{part}", Tag: "test", Auth: api.AuthNone,
		Handler: func(c *api.Ctx) error {
			ran.Add(1)
			return c.JSON(200, map[string]string{"thing_id": c.PathParam("thing_id"), "part": c.PathParam("part")})
		}})
	addr := apitest.Serve(t, srv)
	for _, c := range []struct{ path, thing, part string }{
		{"/things/plain/parts/p1", "plain", "p1"},
		{"/things/sp%20dev/parts/p1", "sp dev", "p1"},
		{"/things/con%5F509/parts/a%2Fb", "con_509", "a/b"},
		{"/things/100%25/parts/%2541", "100%", "%41"},
		{"/things/caf%C3%A9/parts/x+y", "café", "x+y"},
	} {
		res, body := rawRequest(t, addr, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		var got map[string]string
		if res.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil {
			t.Errorf("%s: %d %s", c.path, res.StatusCode, body)
			continue
		}
		if got["thing_id"] != c.thing || got["part"] != c.part {
			t.Errorf("%s: thing_id %q part %q, want %q %q", c.path, got["thing_id"], got["part"], c.thing, c.part)
		}
	}
	before := ran.Load()
	for _, c := range []struct{ path, param string }{
		{"/things/bad%zz/parts/p1", "thing_id"},
		{"/things/ok/parts/trail%4", "part"},
		{"/things/%ff%fe/parts/p1", "thing_id"},
		{"/things/nul%00/parts/p1", "thing_id"},
		{"/things/line%0Abreak/parts/p1", "thing_id"},
	} {
		res, body := rawRequest(t, addr, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		if res.StatusCode != 400 || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "invalid_request" || e.Error.Details[c.param] == "" {
			t.Errorf("%s: %d %s, want 400 invalid_request naming %s", c.path, res.StatusCode, body, c.param)
		}
	}
	if ran.Load() != before {
		t.Errorf("the handler ran for %d undecodable paths", ran.Load()-before)
	}
}

// TestPathParamMaxLength: a path parameter longer than its Param's
// MaxLength, in characters, is 400 invalid_request naming it, and the
// handler never runs; the document gives the bound as maxLength.
func TestPathParamMaxLength(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	var ran atomic.Int64
	srv.Handle(&api.Route{Method: "GET", Path: "/things/{thing_id}", Tag: "test", Auth: api.AuthNone,
		Params: []api.Param{{Name: "thing_id", In: "path", Type: "string", MaxLength: 3}},
		Handler: func(c *api.Ctx) error {
			ran.Add(1)
			return c.JSON(200, map[string]string{"thing_id": c.PathParam("thing_id")})
		}})
	addr := apitest.Serve(t, srv)
	for _, c := range []struct {
		path   string
		status int
	}{{"/things/abc", 200}, {"/things/%C3%A9%C3%A9%C3%A9", 200}, {"/things/abcd", 400}, {"/things/ab%20cd", 400}} {
		res, body := rawRequest(t, addr, "GET "+c.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		if res.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, res.StatusCode, body, c.status)
		}
		if c.status == 400 && (json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != "invalid_request" || e.Error.Details["thing_id"] != "must be 1 to 3 characters") {
			t.Errorf("%s: %s, want invalid_request naming thing_id", c.path, body)
		}
	}
	if ran.Load() != 2 {
		t.Errorf("the handler ran %d times, want 2", ran.Load())
	}
	op := srv.OpenAPI()["paths"].(map[string]map[string]any)["/things/{thing_id}"]["get"].(map[string]any)
	if s := op["parameters"].([]any)[0].(map[string]any)["schema"].(api.Schema); s["maxLength"] != 3 {
		t.Errorf("schema %v, want maxLength 3", s)
	}
}
