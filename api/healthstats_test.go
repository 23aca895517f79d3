package api_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
)

// A 501 (a feature this node was not started with) is an answer, not a
// failure: the health endpoint's error rate counts the other 5xx only.
func TestErrorRateLeavesOutNotImplemented(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	srv.Handle(
		&api.Route{Method: "GET", Path: "/absent", Tag: "test", Auth: api.AuthNone, Handler: func(*api.Ctx) error {
			return api.Errf("not_implemented", "no address index loaded (start with --addresses)")
		}},
		&api.Route{Method: "GET", Path: "/broken", Tag: "test", Auth: api.AuthNone, Handler: func(*api.Ctx) error {
			return api.Errf("internal_error", "boom")
		}},
	)
	base := "http://" + apitest.Serve(t, srv)
	get := func(path string, want int) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
	for range 3 {
		get("/absent", 501)
	}
	if w := srv.Stats().Last(); w.Requests != 3 || w.Errors != 0 {
		t.Fatalf("after three 501s: %d requests, %d errors; want 3 and none", w.Requests, w.Errors)
	}
	get("/broken", 500)
	if w := srv.Stats().Last(); w.Requests != 4 || w.Errors != 1 {
		t.Fatalf("after a 500: %d requests, %d errors; want 4 and 1", w.Requests, w.Errors)
	}
}
