package api_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// startServer serves one authenticated route and counts the requests that
// reached its handler.
func startServer(t *testing.T, ks keys) (addr string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), ks, ratelimit.NewMemory(nil))
	srv.Handle(
		&api.Route{Method: "GET", Path: "/plan", Tag: "test", Handler: func(c *api.Ctx) error {
			hits.Add(1)
			return c.JSON(200, map[string]bool{"ok": true})
		}},
		&api.Route{Method: "POST", Path: "/obj", Tag: "test", Handler: func(c *api.Ctx) error {
			var b struct {
				Name string `json:"name"`
			}
			if err := c.Bind(&b, false); err != nil {
				return err
			}
			hits.Add(1)
			return c.JSON(201, map[string]string{"name": b.Name})
		}},
	)
	return apitest.Serve(t, srv), hits
}

// rawRequest writes req by hand on a new connection and reads one response.
func rawRequest(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// A malformed request never gets its own bytes back: fasthttp's error text
// quotes the raw request, and with it the caller's key (issue 14, item 1).
func TestMalformedRequestEchoesNothing(t *testing.T) {
	var ks keys
	var err error
	if ks.loose, err = apikey.Generate("test"); err != nil {
		t.Fatal(err)
	}
	addr, hits := startServer(t, ks)
	pad := strings.Repeat("a", api.MaxHeaderBytes)
	cases := []struct {
		name, req string
		status    int
		code, msg string
	}{
		{"control character in a header value",
			"GET /plan HTTP/1.1\r\nHost: x\r\nX-API-Key: " + ks.loose + "\r\nX-Trace: a\x01b\r\n\r\n",
			400, "invalid_request", "malformed HTTP request"},
		{"header line without a colon",
			"GET /plan HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ks.loose + "\r\nno colon here\r\n\r\n",
			400, "invalid_request", "malformed HTTP request"},
		{"bad request line",
			"GET /plan HTTP/1.1 junk " + ks.loose + "\r\nHost: x\r\n\r\n",
			400, "invalid_request", "malformed HTTP request"},
		{"header block over the limit",
			"GET /plan HTTP/1.1\r\nHost: x\r\nX-API-Key: " + ks.loose + "\r\nX-Pad: " + pad + "\r\n\r\n",
			431, "request_header_fields_too_large", "request line and headers exceed 16384 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, body := rawRequest(t, addr, c.req)
			if strings.Contains(body, ks.loose) || strings.Contains(body, ks.loose[:20]) {
				t.Fatalf("response echoes the key: %s", body)
			}
			for k, vs := range res.Header {
				for _, v := range vs {
					if strings.Contains(v, ks.loose[:20]) {
						t.Fatalf("header %s echoes the key", k)
					}
				}
			}
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, c.status, body)
			}
			var e api.ErrorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil {
				t.Fatalf("body is not the error form: %v: %s", err, body)
			}
			if e.Error.Code != c.code || e.Error.Message != c.msg || e.RequestID == "" || res.Header.Get("X-Request-Id") != e.RequestID {
				t.Errorf("got %+v (X-Request-Id %q)", e, res.Header.Get("X-Request-Id"))
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d malformed requests reached the handler", n)
	}
	// a real client's headers, large but under 16 KiB, still pass
	big := strings.Repeat("b", 12<<10)
	res, body := rawRequest(t, addr, "GET /plan HTTP/1.1\r\nHost: x\r\nX-API-Key: "+ks.loose+"\r\nCookie: c="+big+"\r\n\r\n")
	if res.StatusCode != 200 || hits.Load() != 1 {
		t.Errorf("12 KiB of headers: %d %s", res.StatusCode, body)
	}
}

// A body that is not a JSON object where one is expected is 400
// invalid_request and never reaches the handler (issue 14, item 5).
func TestBindRefusesNonObject(t *testing.T) {
	var ks keys
	var err error
	if ks.loose, err = apikey.Generate("test"); err != nil {
		t.Fatal(err)
	}
	addr, hits := startServer(t, ks)
	post := func(body string) (*http.Response, string) {
		return rawRequest(t, addr, "POST /obj HTTP/1.1\r\nHost: x\r\nX-API-Key: "+ks.loose+
			"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	}
	for _, b := range []string{`null`, ` null`, `[]`, `"x"`, `1`, `true`} {
		res, body := post(b)
		var e api.ErrorBody
		_ = json.Unmarshal([]byte(body), &e)
		if res.StatusCode != 400 || e.Error.Code != "invalid_request" || e.Error.Message != "request body must be a JSON object" {
			t.Errorf("%s: %d %s", b, res.StatusCode, body)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d non-object bodies reached the handler", n)
	}
	if res, body := post(`{"name":"a"}`); res.StatusCode != 201 {
		t.Errorf("object: %d %s", res.StatusCode, body)
	}
}
