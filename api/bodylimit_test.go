package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
)

// TestRouteBodyLimit: a route with its own MaxBodyBytes takes a body
// over the server's limit, up to its own; every other route, and the
// same path by another method, keeps the server's; a body over the
// limit is answered 413 naming the limit that applied.
func TestRouteBodyLimit(t *testing.T) {
	const server, own = 1 << 10, 8 << 10
	srv := api.New(api.Config{Addr: "127.0.0.1:0", MaxBodyBytes: server}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	echo := func(c *api.Ctx) error { return c.JSON(200, map[string]int{"bytes": len(c.PostBody())}) }
	srv.Handle(
		&api.Route{Method: "POST", Path: "/big", Tag: "test", Auth: api.AuthNone, MaxBodyBytes: own, Handler: echo,
			Params: []api.Param{{Name: "x", In: "query", Type: "integer"}}},
		&api.Route{Method: "PUT", Path: "/big", Tag: "test", Auth: api.AuthNone, Handler: echo},
		&api.Route{Method: "POST", Path: "/small", Tag: "test", Auth: api.AuthNone, Handler: echo},
	)
	base := "http://" + apitest.Serve(t, srv)
	send := func(method, path string, n int) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader([]byte(`"`+strings.Repeat("x", n-2)+`"`)))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
		}
		return res.StatusCode, m
	}
	for _, tc := range []struct {
		method, path string
		n, status    int
		limit        string
	}{
		{"POST", "/big", 4 << 10, 200, ""},
		{"POST", "/big?x=1", own, 200, ""},
		{"POST", "/big", own + 1, 413, "8192"},
		{"PUT", "/big", 4 << 10, 413, "1024"},
		{"POST", "/small", 4 << 10, 413, "1024"},
		{"POST", "/small", server, 200, ""},
	} {
		st, m := send(tc.method, tc.path, tc.n)
		if st != tc.status {
			t.Errorf("%s %s with %d bytes: %d %v, want %d", tc.method, tc.path, tc.n, st, m, tc.status)
			continue
		}
		if st == 413 {
			e, _ := m["error"].(map[string]any)
			if msg, _ := e["message"].(string); e["code"] != "payload_too_large" || !strings.Contains(msg, tc.limit+" bytes") {
				t.Errorf("%s %s: %v, want payload_too_large naming %s bytes", tc.method, tc.path, m, tc.limit)
			}
		}
	}
}
