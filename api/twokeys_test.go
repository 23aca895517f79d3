package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/internal/apikey"
)

// TestTwoDifferentKeysRefused: a request presenting two different API
// keys is 401 invalid_api_key naming both places, and the handler never
// runs, even when one of them is good; the same key in two places is
// that key.
func TestTwoDifferentKeysRefused(t *testing.T) {
	k := apitest.NewKey("all")
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), k, nil)
	var ran atomic.Int64
	h := func(c *api.Ctx) error { ran.Add(1); return c.JSON(200, map[string]bool{"ok": true}) }
	srv.Handle(
		&api.Route{Method: "GET", Path: "/thing", Tag: "test", Handler: h},
		&api.Route{Method: "GET", Path: "/socket", Tag: "test", QueryKey: true, OwnQuery: true, Handler: h},
	)
	base := "http://" + apitest.Serve(t, srv)
	other, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		want       int
		places     string
	}{
		{"header and bearer differ", "/thing", map[string]string{"X-API-Key": k.Key, "Authorization": "Bearer " + other}, 401, "X-API-Key and Authorization"},
		{"bearer and query differ", "/socket?api_key=" + other, map[string]string{"Authorization": "Bearer " + k.Key}, 401, "Authorization and api_key"},
		{"subprotocol and header differ", "/socket", map[string]string{"X-API-Key": other, "Sec-WebSocket-Protocol": "fleethub.v1, fhk." + k.Key}, 401, "X-API-Key and Sec-WebSocket-Protocol"},
		{"the same key twice", "/thing", map[string]string{"X-API-Key": k.Key, "Authorization": "Bearer " + k.Key}, 200, ""},
		{"the same key in the query", "/socket?api_key=" + k.Key, map[string]string{"X-API-Key": k.Key}, 200, ""},
		{"one key", "/thing", map[string]string{"Authorization": "Bearer " + k.Key}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran.Load()
			req, _ := http.NewRequest("GET", base+tc.path, nil)
			for h, v := range tc.header {
				req.Header.Set(h, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 200 {
				if ran.Load() != before+1 {
					t.Fatal("the handler did not run")
				}
				return
			}
			var body api.ErrorBody
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != "invalid_api_key" || !strings.Contains(body.Error.Message, tc.places) {
				t.Fatalf("error %+v, want invalid_api_key naming %q", body.Error, tc.places)
			}
			if strings.Contains(body.Error.Message, k.Key) || strings.Contains(body.Error.Message, other) {
				t.Fatal("the answer quotes a key")
			}
			if ran.Load() != before {
				t.Fatal("the handler ran")
			}
		})
	}
}
