package tokens_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	apitokens "github.com/fleethub/fleethub/api/tokens"
	domain "github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// The test's key; its permissions are those of a dispatcher who may read
// trips and streams and mint tokens, not read emergencies.
const key = "fhk_test_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

type oneKey struct{}

func (oneKey) Authenticate(_ context.Context, k string) (*api.Principal, error) {
	if k != key {
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	return &api.Principal{KeyID: "key_1", Org: "org-a", Env: "test", Rate: 1000, Burst: 1000,
		Permissions: []string{"tokens:create", "trips:read", "streams:read"}}, nil
}

func serve(t *testing.T) string {
	t.Helper()
	svc, err := domain.New(domain.Config{}, []byte("0123456789abcdef0123456789abcdef"), testdb.SQLite(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), oneKey{}, nil)
	srv.SetTokens(apitokens.Authenticator{Svc: svc})
	srv.Handle(apitokens.New(svc).Routes()...)
	ok := func(c *api.Ctx) error { return c.JSON(200, map[string]bool{"ok": true}) }
	srv.Handle(
		&api.Route{Method: "GET", Path: "/trips", Tag: "t", Permission: "trips:read", TokenScope: api.ConsoleReadScope, Handler: ok},
		&api.Route{Method: "GET", Path: "/incidents", Tag: "t", Permission: "emergency:read", TokenScope: api.ConsoleReadScope, Handler: ok},
		&api.Route{Method: "GET", Path: "/keyonly", Tag: "t", Permission: "trips:read", Handler: ok},
		&api.Route{Method: "GET", Path: "/ws", Tag: "t", Permission: "streams:read", TokenScope: "streams:read feed:read", Handler: ok},
	)
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return "http://" + addr.String()
}

type answer struct {
	status int
	code   string
	body   map[string]any
}

func call(t *testing.T, method, url, auth string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth == key {
		req.Header.Set("X-API-Key", auth)
	} else {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a answer
	a.status = res.StatusCode
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &a.body)
	if e, ok := a.body["error"].(map[string]any); ok {
		a.code, _ = e["code"].(string)
	}
	return a
}

// A console:read token opens the reads it is put on only where the minting
// key holds the route's permission; a route without a token scope stays
// a key's; a route with alternatives opens to any of them.
func TestConsoleReadFollowsTheKeysPermissions(t *testing.T) {
	base := serve(t)
	m := call(t, "POST", base+"/v1/tokens", key, map[string]any{"scopes": []string{"console:read", "feed:read"}})
	if m.status != 201 {
		t.Fatalf("mint: %d %v", m.status, m.body)
	}
	tok := m.body["token"].(string)
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/trips", 200, ""},
		{"/incidents", 403, "insufficient_permissions"}, // the key lacks emergency:read
		{"/keyonly", 403, "insufficient_permissions"},
		{"/ws", 200, ""}, // by feed:read
	} {
		if a := call(t, "GET", base+tc.path, tok, nil); a.status != tc.status || a.code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.path, a.status, a.code, tc.status, tc.code)
		}
	}
	// a token without console:read opens no read
	m = call(t, "POST", base+"/v1/tokens", key, map[string]any{"scopes": []string{"feed:read"}})
	if a := call(t, "GET", base+"/trips", m.body["token"].(string), nil); a.status != 403 {
		t.Errorf("a feed:read token on a console:read route: %d", a.status)
	}
	// an unknown scope is refused by name, as a value outside the set
	if a := call(t, "POST", base+"/v1/tokens", key, map[string]any{"scopes": []string{"fleet:write"}}); a.status != 400 || a.code != "invalid_request" || a.body["error"].(map[string]any)["details"].(map[string]any)["scopes[0]"] == nil {
		t.Errorf("unknown scope: %d %v", a.status, a.body)
	}
	// revoked: refused with token_revoked at once
	id := m.body["token_id"].(string)
	if a := call(t, "DELETE", base+"/v1/tokens/"+id, key, nil); a.status != 200 {
		t.Fatalf("revoke: %d %v", a.status, a.body)
	}
	if a := call(t, "GET", base+"/ws", m.body["token"].(string), nil); a.status != 401 || a.code != "token_revoked" {
		t.Errorf("revoked: %d %s", a.status, a.code)
	}
}

// An empty stream_ids is refused by name: it would otherwise be taken as
// absent, a token for every stream of the organization; left out or
// null, the token reads every stream.
func TestEmptyStreamIDsRefused(t *testing.T) {
	base := serve(t)
	a := call(t, "POST", base+"/v1/tokens", key, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{}})
	e, _ := a.body["error"].(map[string]any)
	if d, _ := e["details"].(map[string]any); a.status != 400 || a.code != "validation_failed" || d["stream_ids"] == nil {
		t.Errorf("stream_ids []: %d %v, want 400 validation_failed naming stream_ids", a.status, a.body)
	}
	for _, body := range []map[string]any{{"scopes": []string{"streams:read"}}, {"scopes": []string{"streams:read"}, "stream_ids": nil}} {
		if a := call(t, "POST", base+"/v1/tokens", key, body); a.status != 201 || a.body["stream_ids"] != nil {
			t.Errorf("%v: %d %v, want 201 without stream_ids", body, a.status, a.body)
		}
	}
}

// A stream id that names no stream of the key's organization is 400
// validation_failed naming it by its index.
func TestUnknownStreamIDRefused(t *testing.T) {
	base := serve(t)
	a := call(t, "POST", base+"/v1/tokens", key, map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{"str_nowhere"}})
	e, _ := a.body["error"].(map[string]any)
	if d, _ := e["details"].(map[string]any); a.status != 400 || a.code != "validation_failed" || d["stream_ids[0]"] == nil {
		t.Errorf("stream_ids [str_nowhere]: %d %v, want 400 validation_failed naming stream_ids[0]", a.status, a.body)
	}
}
