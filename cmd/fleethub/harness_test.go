package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/vrp"
)

// node is a running server for a test.
type node struct {
	t   *testing.T
	app *app
	url string
}

// fixedSolverRate is --solver-work-rate for the servers the tests start
// as processes: a fixed rate spares each start its measuring run.
var fixedSolverRate = strconv.FormatInt(vrp.WorkPerSecond, 10)

func testConfig(t *testing.T) *config {
	// the optimizer's rate fixed: no measuring run at every test server's start
	return &config{Addr: "127.0.0.1:0", Data: t.TempDir(), MaxBodyBytes: 1 << 20, ShutdownGrace: 5 * time.Second, SolverWorkRate: vrp.WorkPerSecond}
}

// clock is the wall clock plus an offset the test moves forward, as
// config.Now: what the trip service and the webhook dispatcher time by it
// (a pause, a cached secret) sees the time pass at once.
type clock struct{ ahead atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *clock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("FLEETHUB_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startNode starts a node; prepare may register extra routes first.
func startNode(t *testing.T, cfg *config, prepare ...func(*app)) *node {
	t.Helper()
	ctx := context.Background()
	a, err := newApp(ctx, cfg, testLogger(t))
	if err != nil {
		t.Fatalf("newApp: %v", err)
	}
	for _, p := range prepare {
		p(a)
	}
	if err := a.start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	n := &node{t: t, app: a, url: "http://" + a.addr.String()}
	t.Cleanup(func() { n.stop() })
	return n
}

func (n *node) stop() {
	if n.app == nil {
		return
	}
	// idle keep-alive connections of the test client would hold the
	// drain until their own timeout
	client.CloseIdleConnections()
	if err := n.app.stop(5 * time.Second); err != nil {
		n.t.Errorf("stop: %v", err)
	}
	n.app = nil
}

// key creates a key directly through the service.
func (n *node) key(org, env string, perms []string, rpm int) string {
	n.t.Helper()
	c, err := n.app.keys.Create(context.Background(), keys.CreateRequest{Org: org, Env: env, Name: "test", Permissions: perms, RPM: rpm})
	if err != nil {
		n.t.Fatalf("create key: %v", err)
	}
	return c.Key
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

func (r resp) errCode(t *testing.T) string {
	t.Helper()
	m := r.json(t)
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

var client = &http.Client{Timeout: 30 * time.Second}

// do sends a request; hdr pairs are header name, value.
func (n *node) do(method, path, key string, body any, hdr ...string) resp {
	n.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			n.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, n.url+path, rd)
	if err != nil {
		n.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := client.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// requireService returns the URL in env or skips (fails under CI).
func requireService(t *testing.T, env string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set but CI=true: this test needs the service", env)
		}
		t.Skipf("%s not set: skipping", env)
	}
	return v
}

// A setting newApp refuses is an error naming it, and what it had
// opened is closed.
func TestNewAppRefusesNegativeSettings(t *testing.T) {
	for _, c := range []struct {
		flag string
		set  func(*config, int)
	}{
		{"--webhook-concurrency", func(c *config, v int) { c.WebhookConcurrency = v }},
		{"--active-trips", func(c *config, v int) { c.ActiveTrips = v }},
	} {
		cfg := testConfig(t)
		c.set(cfg, -1)
		a, err := newApp(context.Background(), cfg, testLogger(t))
		if err == nil || a != nil || !strings.Contains(err.Error(), c.flag) {
			t.Fatalf("newApp = %v, %v; want an error naming %s", a, err, c.flag)
		}
		// the store it opened was closed: the same directory opens again
		c.set(cfg, 0)
		b, err := newApp(context.Background(), cfg, testLogger(t))
		if err != nil {
			t.Fatalf("newApp after the refusal of %s: %v", c.flag, err)
		}
		b.closeAll()
	}
}
