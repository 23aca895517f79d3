package ws_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

// The keys the authentication tests use: well-formed, one known.
const (
	goodKey  = "fhk_test_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	wrongKey = "fhk_test_fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

// keyAuth knows goodKey only.
type keyAuth struct{}

func (keyAuth) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if key != goodKey {
		return nil, &api.Error{Status: 401, Code: "api_key_not_found", Message: "API key not found"}
	}
	return &api.Principal{KeyID: testKey, Org: testOrg, Env: testEnv, Permissions: []string{"streams:read"}, Rate: 1000, Burst: 1000}, nil
}

// behindAPI serves f's websocket sink behind the API layer, which
// authenticates the upgrade as the /api/v1/streaming/ws route does, and
// returns the websocket URL.
func behindAPI(t *testing.T, f *fixture) string {
	t.Helper()
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), keyAuth{}, nil)
	srv.Handle(&api.Route{Method: "GET", Path: "/api/v1/streaming/ws", Tag: "streaming", Permission: "streams:read", QueryKey: true, Status: 101, OwnQuery: true,
		Handler: func(c *api.Ctx) error {
			if err := f.srv.Serve(c.RequestCtx, c.Principal.Org, c.Principal.Env, c.Principal.KeyID); err != nil && c.Response.StatusCode() < 400 {
				return err
			}
			return nil
		}})
	addr, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve()
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	})
	return "ws://" + addr.String() + "/api/v1/streaming/ws"
}

// dialWith opens a websocket with the offered subprotocols and headers.
func dialWith(t *testing.T, url string, protocols []string, h http.Header) (*client, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(url, h)
	if err != nil {
		return nil, resp, err
	}
	cl := &client{Conn: c, frames: make(chan frameOf, 1024), quit: make(chan struct{})}
	t.Cleanup(func() {
		close(cl.quit)
		_ = c.Close()
	})
	return cl, resp, nil
}

// noKeyIn fails when any response header carries the key.
func noKeyIn(t *testing.T, resp *http.Response, key string) {
	t.Helper()
	for name, vs := range resp.Header {
		for _, v := range vs {
			if strings.Contains(v, key) || strings.Contains(v, key[4:]) {
				t.Errorf("response header %s: %q carries the key", name, v)
			}
		}
	}
}

// refused checks a refused handshake: its status and error code, and no
// key in the response.
func refused(t *testing.T, resp *http.Response, err error, status int, code, key string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %d %s", status, code)
	}
	if resp == nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode != status || e.Error.Code != code {
		t.Fatalf("refused with %d %s, want %d %s", resp.StatusCode, body, status, code)
	}
	noKeyIn(t, resp, key)
	if strings.Contains(string(body), key[4:]) {
		t.Errorf("the error body carries the key: %s", body)
	}
}

// TestKeyAsSubprotocol: a browser offers ["fleethub.v1", "fhk.<key>"];
// the upgrade is authenticated with that key, the response selects
// fleethub.v1 and never names the key; a wrong key is refused with 401
// before the upgrade; the header and query methods keep working.
func TestKeyAsSubprotocol(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	url := behindAPI(t, f)

	c, resp, err := dialWith(t, url+"?stream_id=s1", []string{ws.Protocol, ws.KeyProtocolPrefix + goodKey}, nil)
	if err != nil {
		t.Fatalf("dial with the key as a subprotocol: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || c.Subprotocol() != ws.Protocol || resp.Header.Values("Sec-WebSocket-Protocol")[0] != ws.Protocol {
		t.Fatalf("status %d, subprotocol %q (%q), want 101 and %q", resp.StatusCode, c.Subprotocol(), resp.Header.Values("Sec-WebSocket-Protocol"), ws.Protocol)
	}
	noKeyIn(t, resp, goodKey)
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 3, 0)
	readOffsets(t, c, "s1", 1, 3)

	// the key offered first works the same
	c, resp, err = dialWith(t, url+"?stream_id=s1", []string{ws.KeyProtocolPrefix + goodKey, ws.Protocol}, nil)
	if err != nil || c.Subprotocol() != ws.Protocol {
		t.Fatalf("dial with the key offered first: %v", err)
	}
	noKeyIn(t, resp, goodKey)

	_, resp, err = dialWith(t, url+"?stream_id=s1", []string{ws.Protocol, ws.KeyProtocolPrefix + wrongKey}, nil)
	refused(t, resp, err, 401, "api_key_not_found", wrongKey)
	_, resp, err = dialWith(t, url+"?stream_id=s1", []string{ws.Protocol, ws.KeyProtocolPrefix + "not-a-key"}, nil)
	refused(t, resp, err, 401, "invalid_api_key", "not-a-key")
	_, resp, err = dialWith(t, url+"?stream_id=s1", []string{ws.Protocol}, nil)
	refused(t, resp, err, 401, "invalid_api_key", goodKey)
	// the key without fleethub.v1: no subprotocol could be selected, and a
	// browser would fail the handshake, so it is refused before
	_, resp, err = dialWith(t, url+"?stream_id=s1", []string{ws.KeyProtocolPrefix + goodKey}, nil)
	refused(t, resp, err, 400, "invalid_request", goodKey)

	// the other methods: X-API-Key, Authorization, api_key; fleethub.v1 is
	// selected when offered, and no subprotocol otherwise
	for name, dial := range map[string]func() (*client, *http.Response, error){
		"X-API-Key": func() (*client, *http.Response, error) {
			return dialWith(t, url+"?stream_id=s1", nil, http.Header{"X-API-Key": {goodKey}})
		},
		"Authorization": func() (*client, *http.Response, error) {
			return dialWith(t, url+"?stream_id=s1", []string{ws.Protocol}, http.Header{"Authorization": {"Bearer " + goodKey}})
		},
		"api_key": func() (*client, *http.Response, error) {
			return dialWith(t, url+"?stream_id=s1&api_key="+goodKey, nil, nil)
		},
	} {
		c, resp, err := dial()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := map[bool]string{true: ws.Protocol}[name == "Authorization"]; c.Subprotocol() != want {
			t.Errorf("%s: subprotocol %q, want %q", name, c.Subprotocol(), want)
		}
		noKeyIn(t, resp, goodKey)
		expectControl(t, c, "subscribed", "")
	}
	_, resp, err = dialWith(t, url+"?stream_id=s1&api_key="+wrongKey, nil, nil)
	refused(t, resp, err, 401, "api_key_not_found", wrongKey)
}
