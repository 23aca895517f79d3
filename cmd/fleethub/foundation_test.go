package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
)

func TestAuthenticationFailures(t *testing.T) {
	n := startNode(t, testConfig(t))
	good := n.key("org-a", "test", []string{"trips:read"}, 0)
	revoked := n.key("org-a", "test", []string{"trips:write"}, 0)
	admin := n.key("org-a", "test", []string{"keys:manage", "trips:write"}, 0) // a key revokes only keys whose permissions it holds
	list := n.do("GET", "/v1/api-keys", admin, nil).json(t)
	var revokedID string
	for _, k := range list["api_keys"].([]any) {
		km := k.(map[string]any)
		if km["permissions"].([]any)[0] == "trips:write" {
			revokedID = km["id"].(string)
		}
	}
	if r := n.do("DELETE", "/v1/api-keys/"+revokedID, admin, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	unknown := "fhk_test_" + strings.Repeat("ab", 32)
	cases := []struct {
		name, key, hdr string
		status         int
		code, msg      string
	}{
		{"missing", "", "", 401, "invalid_api_key", "API key required"},
		{"no prefix", "abc_test_" + strings.Repeat("0", 64), "", 401, "invalid_api_key", "Invalid API key format"},
		{"uppercase hex", "fhk_test_" + strings.Repeat("A", 64), "", 401, "invalid_api_key", "Invalid API key format"},
		{"bad env", "fhk_prod_" + strings.Repeat("a", 64), "", 401, "invalid_api_key", ""},
		{"short", "fhk_test_abc", "", 401, "invalid_api_key", ""},
		{"unknown", unknown, "", 401, "api_key_not_found", ""},
		{"revoked", revoked, "", 401, "api_key_revoked", ""},
		{"bearer ok", good, "bearer", 200, "", ""},
		{"header ok", good, "", 200, "", ""},
		{"no permission", good, "", 403, "insufficient_permissions", "keys:manage"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/v1/trips/health"
			if c.name == "no permission" {
				path = "/v1/api-keys"
			}
			var r resp
			if c.hdr == "bearer" {
				r = n.do("GET", path, "", nil, "Authorization", "Bearer "+c.key)
			} else {
				r = n.do("GET", path, c.key, nil)
			}
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			if c.code == "" {
				return
			}
			m := r.json(t)
			if got := r.errCode(t); got != c.code {
				t.Fatalf("code %q, want %q: %s", got, c.code, r.Body)
			}
			if m["request_id"] != r.Header.Get("X-Request-Id") {
				t.Errorf("request_id %v differs from header %q", m["request_id"], r.Header.Get("X-Request-Id"))
			}
			if c.msg != "" && !strings.Contains(string(r.Body), c.msg) {
				t.Errorf("body %s does not mention %q", r.Body, c.msg)
			}
		})
	}
}

func TestPlainFormAuthErrors(t *testing.T) {
	n := startNode(t, testConfig(t))
	for _, c := range []struct{ key, msg string }{
		{"", "API key required"},
		{"nope_" + strings.Repeat("0", 64), "Invalid API key format"},
	} {
		r := n.do("GET", "/v1/autocomplete?q=main", c.key, nil)
		m := r.json(t)
		if r.Status != 401 || m["success"] != false || m["error"] != c.msg {
			t.Errorf("key %q: %d %s, want 401 plain %q", c.key, r.Status, r.Body, c.msg)
		}
	}
}

func TestKeyLifecycleAndScope(t *testing.T) {
	n := startNode(t, testConfig(t))
	adminTest, _ := n.keyWith("org-a", "test", "enterprise", 0, "keys:manage", "trips:read") // creating keys through the API needs the enterprise plan
	adminLive := n.key("org-a", "live", []string{"keys:manage"}, 0)
	otherOrg := n.key("org-b", "test", []string{"keys:manage"}, 0)

	r := n.do("POST", "/v1/api-keys", adminTest, map[string]any{"name": "ci", "permissions": []string{"trips:read"}, "rate_limit_rpm": 300})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.json(t)
	newKey, _ := created["key"].(string)
	if !strings.HasPrefix(newKey, "fhk_test_") || len(newKey) != 73 {
		t.Fatalf("created key %q", newKey)
	}
	if created["rate_limit_rpm"].(float64) != 300 || created["environment"] != "test" || created["organization_id"] != "org-a" {
		t.Errorf("created %s", r.Body)
	}
	if r := n.do("GET", "/v1/trips/health", newKey, nil); r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "300" {
		t.Fatalf("new key: %d limit %q", r.Status, r.Header.Get("X-RateLimit-Limit"))
	}
	// the key is never listed with its secret, and scope separates lists
	lt := n.do("GET", "/v1/api-keys", adminTest, nil)
	if strings.Contains(string(lt.Body), newKey) {
		t.Fatal("listing shows the secret")
	}
	if c := lt.json(t)["count"].(float64); c != 2 {
		t.Errorf("test env of org-a lists %v keys, want 2: %s", c, lt.Body)
	}
	// a live key lists its environment's keys and the test keys, which
	// it may create: 1 live and 2 test
	ll := n.do("GET", "/v1/api-keys", adminLive, nil).json(t)
	envs := map[any]int{}
	for _, k := range ll["api_keys"].([]any) {
		envs[k.(map[string]any)["environment"]]++
	}
	if c := ll["count"].(float64); c != 3 || envs["live"] != 1 || envs["test"] != 2 {
		t.Errorf("live env lists %v keys (%v), want 1 live and 2 test", c, envs)
	}
	id := created["id"].(string)
	// another org cannot revoke it: not found; the live key sees it, and
	// may revoke it only holding what it holds
	if r := n.do("DELETE", "/v1/api-keys/"+id, otherOrg, nil); r.Status != 404 {
		t.Errorf("foreign revoke: %d %s", r.Status, r.Body)
	}
	if r := n.do("DELETE", "/v1/api-keys/"+id, adminLive, nil); r.Status != 403 {
		t.Errorf("live revoke of a test key holding more: %d %s", r.Status, r.Body)
	}
	// a key cannot grant what it lacks
	if r := n.do("POST", "/v1/api-keys", adminTest, map[string]any{"name": "x", "permissions": []string{"fleet:write"}}); r.Status != 403 {
		t.Errorf("escalation: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/api-keys", adminTest, map[string]any{"name": "x", "permissions": []string{"bogus"}}); r.Status != 403 && r.Status != 400 {
		t.Errorf("bogus permission: %d %s", r.Status, r.Body)
	}
	if r := n.do("DELETE", "/v1/api-keys/"+id, adminTest, nil); r.Status != 200 || r.json(t)["status"] != "revoked" {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/trips/health", newKey, nil); r.errCode(t) != "api_key_revoked" {
		t.Fatalf("after revoke: %d %s", r.Status, r.Body)
	}
}

func TestCreateKeyValidation(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin := n.key("org-a", "test", []string{"all"}, 0)
	for _, c := range []struct {
		body  any
		field string
		code  string
	}{
		{map[string]any{"permissions": []string{"trips:read"}}, "name", "validation_failed"},
		{map[string]any{"name": "x"}, "permissions", "validation_failed"},
		{map[string]any{"name": "x", "permissions": []string{"trips:read"}, "environment": "prod"}, "environment", "invalid_request"},
		{map[string]any{"name": "x", "permissions": []string{"nope"}}, "permissions[0]", "invalid_request"},
		{map[string]any{"name": "x", "permissions": []string{"trips:read"}, "plan": "gold"}, "plan", "invalid_request"},
		{map[string]any{"name": "x", "permissions": []string{"trips:read"}, "rate_limit_rpm": -5}, "rate_limit_rpm", "validation_failed"},
		{map[string]any{"name": "x", "permissions": []string{"trips:read"}, "rate_limit_rpm": 0}, "rate_limit_rpm", "validation_failed"},
		// the unknown ones by their first index, each with the known set
		{map[string]any{"name": "x", "permissions": []string{"a", "b", "trips:read", "a"}}, "permissions[0]", "invalid_request"},
		{map[string]any{"name": "x", "permissions": []string{"a", "b", "trips:read", "a"}}, "permissions[1]", "invalid_request"},
	} {
		r := n.do("POST", "/v1/api-keys", admin, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if _, ok := d[c.field]; !ok {
			t.Errorf("%v: details %v lack %s", c.body, d, c.field)
		}
	}
	if c := n.do("GET", "/v1/api-keys", admin, nil).json(t)["count"].(float64); c != 1 {
		t.Errorf("bad input created keys: count %v", c)
	}
	// a key given no plan is listed by what it is: test (the test
	// default) or custom (its own rate)
	n.key("org-a", "test", []string{"trips:read"}, 300)
	for _, k := range n.do("GET", "/v1/api-keys", admin, nil).json(t)["api_keys"].([]any) {
		m := k.(map[string]any)
		want := "test"
		if m["rate_limit_rpm"].(float64) == 300 {
			want = "custom"
		}
		if m["plan"] != want {
			t.Errorf("key of %v rpm listed on plan %v, want %s", m["rate_limit_rpm"], m["plan"], want)
		}
	}
}

func TestBodyRules(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxBodyBytes = 4096
	n := startNode(t, cfg)
	admin, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")
	big := `{"name":"` + strings.Repeat("x", 8000) + `","permissions":["trips:read"]}`
	cases := []struct {
		name   string
		body   string
		ct     string
		status int
		code   string
	}{
		{"too large", big, "application/json", 413, "payload_too_large"},
		{"malformed", `{"name": "x", "permissions": [`, "application/json", 400, "invalid_request"},
		{"wrong type", `{"name": 5, "permissions": ["trips:read"]}`, "application/json", 400, "invalid_request"},
		{"trailing", `{"name":"x","permissions":["trips:read"]} {}`, "application/json", 400, "invalid_request"},
		{"text/plain", `{"name":"x","permissions":["trips:read"]}`, "text/plain", 415, "unsupported_media_type"},
		{"no content type", `{"name":"x","permissions":["trips:read"]}`, "", 415, "unsupported_media_type"},
		{"json with charset", `{"name":"ok","permissions":["trips:read"]}`, "application/json; charset=utf-8", 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := n.do("POST", "/v1/api-keys", admin, c.body, "Content-Type", c.ct)
			if r.Status != c.status {
				t.Fatalf("status %d want %d: %.200s", r.Status, c.status, r.Body)
			}
			if c.code != "" && r.errCode(t) != c.code {
				t.Fatalf("code %q want %q", r.errCode(t), c.code)
			}
			if r.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
	if c := n.do("GET", "/v1/api-keys", admin, nil).json(t)["count"].(float64); c != 2 {
		t.Errorf("rejected bodies changed state: %v keys", c)
	}
}

func TestRequestIDEcho(t *testing.T) {
	n := startNode(t, testConfig(t))
	r := n.do("GET", "/healthz", "", nil, "X-Request-Id", "client-abc-123")
	if r.Header.Get("X-Request-Id") != "client-abc-123" {
		t.Fatalf("echo: %q", r.Header.Get("X-Request-Id"))
	}
	a := n.do("GET", "/healthz", "", nil).Header.Get("X-Request-Id")
	b := n.do("GET", "/nowhere", "", nil)
	if a == "" || a == b.Header.Get("X-Request-Id") || b.Status != 404 || b.errCode(t) != "not_found" {
		t.Fatalf("generated ids %q %q, 404 %d %s", a, b.Header.Get("X-Request-Id"), b.Status, b.Body)
	}
}

func TestRateLimitBurstAndRefill(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read"}, 120) // 2/s, burst 240
	var last resp
	allowed := 0
	start := time.Now()
	for i := 0; i < 300; i++ {
		last = n.do("GET", "/v1/trips/health", k, nil)
		if last.Status == 200 {
			allowed++
			continue
		}
		break
	}
	// the bucket refills at 2 a second while the requests are sent: on a
	// loaded machine the 240 take more than a second, and each refilled
	// token is one more allowed
	refilled := int(2 * time.Since(start).Seconds())
	if allowed < 239 || allowed > 241+refilled {
		t.Fatalf("allowed %d before the first rejection in %v, want the burst 240 and at most %d refilled", allowed, time.Since(start).Round(time.Millisecond), refilled)
	}
	if last.Status != 429 || last.errCode(t) != "rate_limit_exceeded" {
		t.Fatalf("after burst: %d %s", last.Status, last.Body)
	}
	ra, err := strconv.Atoi(last.Header.Get("Retry-After"))
	if err != nil || ra < 1 {
		t.Errorf("Retry-After %q", last.Header.Get("Retry-After"))
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Window"} {
		if last.Header.Get(h) == "" {
			t.Errorf("429 lacks %s", h)
		}
	}
	if last.Header.Get("X-RateLimit-Remaining") != "0" || last.Header.Get("X-RateLimit-Limit") != "120" {
		t.Errorf("headers %v", last.Header)
	}
	reset, _ := strconv.ParseInt(last.Header.Get("X-RateLimit-Reset"), 10, 64)
	if now := time.Now().Unix(); reset < now || reset > now+200 {
		t.Errorf("reset %d not an epoch in the next window (now %d)", reset, now)
	}
	// a denied request takes no token: ask until one came back
	waitFor(t, "a token back", func() bool { return n.do("GET", "/v1/trips/health", k, nil).Status == 200 })
}

func TestTwoNodesShareRedisBudget(t *testing.T) {
	redisURL := requireService(t, "FLEETHUB_TEST_REDIS_URL")
	cfgA := testConfig(t)
	cfgA.RedisURL = redisURL
	a := startNode(t, cfgA)
	cfgB := testConfig(t)
	cfgB.Data = cfgA.Data // one store
	cfgB.RedisURL = redisURL
	b := startNode(t, cfgB)
	k := a.key("org-a", "test", []string{"keys:manage"}, 10) // burst 20
	var ok atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n := a
			if i%2 == 1 {
				n = b
			}
			if r := n.do("GET", "/v1/trips/health", k, nil); r.Status == 200 {
				ok.Add(1)
			}
		}(i)
	}
	wg.Wait()
	if got := ok.Load(); got != 20 {
		t.Fatalf("%d requests allowed across two nodes, want exactly the burst 20", got)
	}
	// revocation on node A is seen by node B on its next request
	admin := a.key("org-a", "test", []string{"keys:manage", "trips:read"}, 0) // a key revokes only keys whose permissions it holds
	victim := a.key("org-a", "test", []string{"trips:read"}, 0)
	if r := b.do("GET", "/v1/trips/health", victim, nil); r.Status != 200 {
		t.Fatalf("victim before: %d", r.Status)
	}
	list := a.do("GET", "/v1/api-keys", admin, nil).json(t)["api_keys"].([]any)
	var vid string
	for _, x := range list {
		m := x.(map[string]any)
		if strings.HasSuffix(victim, strings.TrimPrefix(m["key_hint"].(string), "...")) && m["permissions"].([]any)[0] == "trips:read" {
			vid = m["id"].(string)
		}
	}
	if r := a.do("DELETE", "/v1/api-keys/"+vid, admin, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if r := b.do("GET", "/v1/trips/health", victim, nil); r.errCode(t) != "api_key_revoked" {
		t.Fatalf("node B after revoke on A: %d %s", r.Status, r.Body)
	}
}

func TestRedisDownFallsBackAndDegrades(t *testing.T) {
	cfg := testConfig(t)
	cfg.RedisURL = "redis://127.0.0.1:1/0"
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"trips:read"}, 0)
	r := n.do("GET", "/v1/trips/health", k, nil)
	if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "1000" {
		t.Fatalf("with Redis down: %d %s", r.Status, r.Body)
	}
	h := r.json(t)
	if h["status"] == "healthy" || h["dependencies"].(map[string]any)["redis"] != "degraded" {
		t.Fatalf("health with Redis down: %s", r.Body)
	}
}

func TestHealthReport(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"trips:read"}, 0)
	r := n.do("GET", "/v1/trips/health", k, nil)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	h := r.json(t)
	for _, f := range []string{"status", "timestamp", "version", "uptime_seconds", "service", "database", "active_trips", "performance", "dependencies"} {
		if _, ok := h[f]; !ok {
			t.Errorf("health lacks %s", f)
		}
	}
	if h["status"] != "healthy" {
		t.Errorf("status %v", h["status"])
	}
	deps := h["dependencies"].(map[string]any)
	for _, d := range []string{"sqlite", "cache", "location_service", "bus"} {
		if deps[d] != "healthy" {
			t.Errorf("dependency %s = %v", d, deps[d])
		}
	}
	for _, f := range []string{"status", "response_time_ms", "active_connections"} {
		if _, ok := h["database"].(map[string]any)[f]; !ok {
			t.Errorf("database lacks %s", f)
		}
	}
	// cached: the same answer within 10 s
	r2 := n.do("GET", "/v1/trips/health", k, nil)
	if string(r2.Body) != string(r.Body) {
		t.Error("health not cached")
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := n.do("GET", p, "", nil); r.Status != 200 || r.json(t)["status"] != "ok" {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	m := n.do("GET", "/metrics", "", nil)
	for _, want := range []string{"fleethub_http_requests_total{method=\"GET\",route=\"/v1/trips/health\",status=\"200\"}", "fleethub_http_request_duration_seconds_bucket", "fleethub_rate_limit_rejections_total", "fleethub_store_ping_seconds"} {
		if !strings.Contains(string(m.Body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestPanicIsRecovered(t *testing.T) {
	n := startNode(t, testConfig(t), func(a *app) {
		a.server.Handle(&api.Route{Method: "GET", Path: "/test/panic", Auth: api.AuthNone, Tag: "test",
			Handler: func(c *api.Ctx) error { panic("boom") }})
	})
	r := n.do("GET", "/test/panic", "", nil)
	if r.Status != 500 || r.errCode(t) != "internal_error" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatal("server died after a panic")
	}
}

func TestGracefulShutdownDrains(t *testing.T) {
	started, finish := make(chan struct{}), make(chan struct{})
	n := startNode(t, testConfig(t), func(a *app) {
		a.server.Handle(&api.Route{Method: "GET", Path: "/test/slow", Auth: api.AuthNone, Tag: "test",
			Handler: func(c *api.Ctx) error {
				close(started)
				<-finish
				return c.JSON(200, map[string]string{"done": "yes"})
			}})
	})
	got := make(chan resp, 1)
	go func() { got <- n.do("GET", "/test/slow", "", nil) }()
	<-started
	addr := strings.TrimPrefix(n.url, "http://")
	stopped := make(chan struct{})
	go func() { defer close(stopped); n.stop() }()
	// the request finishes only once the node has stopped listening
	waitFor(t, "the node to stop listening", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(finish)
	<-stopped
	r := <-got
	if r.Status != 200 || !strings.Contains(string(r.Body), "yes") {
		t.Fatalf("in-flight request: %d %s", r.Status, r.Body)
	}
}

func TestRestartKeepsRecords(t *testing.T) {
	cfg := testConfig(t)
	n := startNode(t, cfg)
	admin, _ := n.keyWith("org-a", "test", "enterprise", 0, "keys:manage", "trips:read")
	r := n.do("POST", "/v1/api-keys", admin, map[string]any{"name": "keep", "permissions": []string{"trips:read"}})
	k := r.json(t)["key"].(string)
	n.stop()
	n2 := startNode(t, cfg)
	if r := n2.do("GET", "/v1/trips/health", k, nil); r.Status != 200 {
		t.Fatalf("key after restart: %d %s", r.Status, r.Body)
	}
	if c := n2.do("GET", "/v1/api-keys", admin, nil).json(t)["count"].(float64); c != 2 {
		t.Fatalf("keys after restart: %v", c)
	}
}

// TestPendingEndpointsAnswer501: without --osm, --addresses and --tiles a
// valid request to the routing, geocoding and tile endpoints answers 501;
// a request that cannot be read answers the 400 it would with the data
// loaded, in its area's error form.
func TestPendingEndpointsAnswer501(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 0)
	here := []map[string]any{{"lat": 43.77, "lon": 11.25}}
	t0 := "2026-11-23T10:00:00Z"
	valid := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/routing/sources_to_targets", map[string]any{"sources": here, "targets": here, "costing": "auto"}},
		{"POST", "/api/v1/fleet/routing/match", map[string]any{"costing": "auto", "points": []map[string]any{{"latitude": 43.77, "longitude": 11.25, "timestamp": t0}}}},
		{"GET", "/v1/search?q=main", nil},
		{"GET", "/v1/autocomplete?q=main&limit=20", nil},
		{"GET", "/v1/validate?q=1+main+st", nil},
		{"GET", "/v1/api/tiles/buildings/metadata", nil},
		{"GET", "/v1/api/tiles/buildings/0/0/0.mvt", nil},
	}
	for _, c := range valid {
		if r := n.do(c.method, c.path, k, c.body); r.Status != 501 || !strings.Contains(string(r.Body), "(start with --") {
			t.Errorf("%s %s: %d %s, want 501", c.method, c.path, r.Status, r.Body)
		}
	}
	// routing answers in the validation form, naming the field
	bad := []struct {
		path  string
		body  any
		field string
	}{
		{"/v1/routing/sources_to_targets", map[string]any{}, "sources"},
		{"/v1/routing/sources_to_targets", map[string]any{"sources": here, "targets": here, "costing": "plane"}, "costing"},
		{"/v1/routing/sources_to_targets", map[string]any{"sources": here, "targets": here, "costing": "auto", "radius": 5}, "radius"},
		{"/api/v1/fleet/routing/match", map[string]any{"costing": "auto", "points": []map[string]any{}}, "points"},
		{"/api/v1/fleet/routing/match", map[string]any{"costing": "auto", "points": []map[string]any{{"latitude": 91, "longitude": 11.25, "timestamp": t0}}}, "points[0].latitude"},
	}
	for _, c := range bad {
		r := n.do("POST", c.path, k, c.body)
		if r.Status != 400 || !strings.Contains(string(r.Body), `"`+c.field+`"`) {
			t.Errorf("%s %v: %d %s, want 400 naming %s", c.path, c.body, r.Status, r.Body, c.field)
		}
	}
	// geocoding and tiles answer in the plain form
	for _, p := range []string{"/v1/search", "/v1/search?q=main&limit=0", "/v1/search?q=main&country=U1", "/v1/autocomplete?q=main&limit=50",
		"/v1/autocomplete?q=main&lat=91", "/v1/autocomplete", "/v1/validate?q=" + strings.Repeat("a", 501), "/v1/search?q=main&focus.point.lat=100&focus.point.lon=0",
		"/v1/api/tiles/buildings/1/2/0.mvt", "/v1/api/tiles/buildings/z/0/0.mvt"} {
		if r := n.do("GET", p, k, nil); r.Status != 400 || r.json(t)["success"] != false {
			t.Errorf("%s: %d %s, want 400", p, r.Status, r.Body)
		}
	}
	weak := n.key("org-a", "test", []string{"trips:read"}, 0)
	if r := n.do("POST", "/v1/routing/sources_to_targets", weak, map[string]any{}); r.Status != 403 {
		t.Fatalf("permission before 501: %d", r.Status)
	}
}

func TestKeysCreateCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errb strings.Builder
	code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "live", "--name", "boot", "--permissions", "all", "--plan", "enterprise"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	key := strings.SplitN(out.String(), "\n", 2)[0]
	if !strings.HasPrefix(key, "fhk_live_") || len(key) != 73 {
		t.Fatalf("first line %q", key)
	}
	cfg := testConfig(t)
	cfg.Data = dir
	n := startNode(t, cfg)
	r := n.do("GET", "/v1/api-keys", key, nil)
	if r.Status != 200 || r.Header.Get("X-RateLimit-Limit") != "2000" {
		t.Fatalf("bootstrap key: %d %s %v", r.Status, r.Body, r.Header)
	}
	// the command makes keys on any plan; such a key cannot create keys
	// through the API, while the enterprise key can
	var sout, serr strings.Builder
	if code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "live", "--name", "small", "--permissions", "all", "--plan", "starter"}, &sout, &serr); code != 0 {
		t.Fatalf("starter key: exit %d: %s", code, serr.String())
	}
	starter := strings.SplitN(sout.String(), "\n", 2)[0]
	body := map[string]any{"name": "again", "permissions": []string{"trips:read"}, "rate_limit_rpm": 10}
	if r := n.do("POST", "/v1/api-keys", starter, body); r.Status != 403 || r.errCode(t) != "insufficient_permissions" || !strings.Contains(string(r.Body), `"plan"`) {
		t.Errorf("starter key creates a key: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/api-keys", key, body); r.Status != 201 {
		t.Errorf("enterprise key creates a key: %d %s", r.Status, r.Body)
	}
	var bad strings.Builder
	if code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "prod", "--name", "x", "--permissions", "all"}, &out, &bad); code == 0 || !strings.Contains(bad.String(), "--env") {
		t.Fatalf("bad env accepted: %d %s", code, bad.String())
	}
	// a permission given twice is refused naming the flag, as the API
	// refuses it, and no key is made
	bad.Reset()
	if code := run(context.Background(), []string{"keys", "create", "--data", dir, "--org", "acme", "--env", "live", "--name", "twice", "--permissions", "trips:read,maps:read,trips:read"}, &out, &bad); code != 2 ||
		strings.TrimSpace(bad.String()) != "fleethub keys create: --permissions (permissions[2]) is given twice" {
		t.Fatalf("a repeated permission: exit %d: %q", code, bad.String())
	}
	var ver strings.Builder
	if run(context.Background(), []string{"version"}, &ver, &bad) != 0 || !strings.HasPrefix(ver.String(), "fleethub ") {
		t.Fatalf("version: %q", ver.String())
	}
}

// TestKeyNameCountsCharacters: a key's name takes 200 characters, counted
// as characters (Unicode code points) as every text limit is, not bytes.
func TestKeyNameCountsCharacters(t *testing.T) {
	n := startNode(t, testConfig(t))
	admin, _ := n.keyWith("org-a", "test", "enterprise", 0, "all")
	body := func(name string) map[string]any {
		return map[string]any{"name": name, "environment": "test", "permissions": []string{"trips:read"}}
	}
	if r := n.do("POST", "/v1/api-keys", admin, body(strings.Repeat("é", 200))); r.Status != 201 || r.json(t)["name"] != strings.Repeat("é", 200) {
		t.Errorf("a name of 200 two-byte characters: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/v1/api-keys", admin, body(strings.Repeat("é", 201)))
	if r.Status != 400 || r.errCode(t) != "validation_failed" || !strings.Contains(string(r.Body), `"name":"must be at most 200 characters"`) {
		t.Errorf("a name of 201 characters: %d %s", r.Status, r.Body)
	}
}

func TestEnvFlags(t *testing.T) {
	t.Setenv("FLEETHUB_ADDR", "127.0.0.1:9999")
	t.Setenv("FLEETHUB_MAX_BODY_BYTES", "1234")
	fs, cfg := serveFlags(&strings.Builder{})
	if err := parseFlags(fs, []string{"--addr", "127.0.0.1:7777"}); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:7777" || cfg.MaxBodyBytes != 1234 {
		t.Fatalf("flag over env, env over default: %+v", cfg)
	}
	t.Setenv("FLEETHUB_MAX_BODY_BYTES", "lots")
	fs, _ = serveFlags(&strings.Builder{})
	if err := parseFlags(fs, nil); err == nil || err.Error() != `FLEETHUB_MAX_BODY_BYTES="lots": must be a whole number of bytes` {
		t.Fatalf("bad env value: %v, want it named with what it must be", err)
	}
	for env, want := range map[string]string{
		"FLEETHUB_SHUTDOWN_GRACE":         "must be a duration",
		"FLEETHUB_SPEED_LIMIT_KMH":        "must be a number",
		"FLEETHUB_ALLOW_PRIVATE_WEBHOOKS": "must be true or false",
		"FLEETHUB_ACTIVE_TRIPS":           "must be a whole number",
	} {
		t.Setenv("FLEETHUB_MAX_BODY_BYTES", "")
		t.Setenv(env, "lots")
		fs, _ = serveFlags(&strings.Builder{})
		if err := parseFlags(fs, nil); err == nil || !strings.HasPrefix(err.Error(), env+`="lots": `+want) {
			t.Errorf("%s=lots: %v, want %q", env, err, want)
		}
		t.Setenv(env, "")
	}
}

// TestEmptyEnvIsUnset: an environment variable set to the empty string
// is read as unset, for every flag: serve starts with the defaults.
func TestEmptyEnvIsUnset(t *testing.T) {
	fs, cfg := serveFlags(&strings.Builder{})
	fs.VisitAll(func(f *flag.Flag) { t.Setenv(envName(f.Name), "") })
	if err := parseFlags(fs, nil); err != nil {
		t.Fatalf("empty environment: %v", err)
	}
	if cfg.Addr != "127.0.0.1:8080" || cfg.LogLevel != "info" || cfg.LogFormat != "text" || cfg.Data != "./data" || cfg.MaxBodyBytes != 8<<20 || cfg.OSMCostings != "auto" {
		t.Errorf("empty environment is not the defaults: %+v", cfg)
	}
	if _, err := newLogger(&strings.Builder{}, cfg.LogLevel, cfg.LogFormat); err != nil {
		t.Errorf("empty FLEETHUB_LOG_LEVEL: %v", err)
	}
}

// TestServeRefusesBadSettings: a setting out of its range, from a flag or
// from its environment variable, stops serve before it listens, exiting
// non-zero with a message naming the flag; so do a stray word among the
// flags, which would end their parsing and drop the flags after it, a
// --data that cannot hold the store, a --database-url that does not open,
// a --notify-url no notification could be sent to and a --debug-addr that
// cannot be listened on.
func TestServeRefusesBadSettings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		env  [2]string
		want string
	}{
		{args: []string{"--max-body-bytes", "-1"}, want: "--max-body-bytes must be positive"},
		{env: [2]string{"FLEETHUB_MAX_BODY_BYTES", "-1"}, want: "--max-body-bytes must be positive"},
		{args: []string{"--log-retention", "-1h"}, want: "--log-retention must be positive"},
		{env: [2]string{"FLEETHUB_LOG_MAX_BYTES", "-5"}, want: "--log-max-bytes must be positive"},
		{args: []string{"--shutdown-grace", "-1s"}, want: "--shutdown-grace must not be negative"},
		{args: []string{"--solver-work-rate", "-3"}, want: "--solver-work-rate must be positive"},
		{args: []string{"--speed-limit-kmh", "-10"}, want: "--speed-limit-kmh must be a speed"},
		{args: []string{"--speed-limit-kmh", "NaN"}, want: "--speed-limit-kmh must be a speed"},
		{args: []string{"--osm-costings", "plane"}, want: `--osm-costings: "plane" is not auto, truck, bicycle or pedestrian`},
		{env: [2]string{"FLEETHUB_OSM_COSTINGS", "auto,plane"}, want: "--osm-costings: "},
		{args: []string{"stray", "--addr", "127.0.0.1:1"}, want: `unexpected argument "stray"`},
		{args: []string{"--data", ""}, want: "--data must name a directory"},
		{args: []string{"--data", file}, want: "--data " + file + ": "},
		{args: []string{"--database-url", "notaurl"}, want: "--database-url: "},
		{args: []string{"--notify-url", "gateway.example.com/hook"}, want: "--notify-url must be an http:// or https:// URL"},
		{env: [2]string{"FLEETHUB_NOTIFY_URL", "ftp://gateway.example.com"}, want: "--notify-url must be an http:// or https:// URL"},
		{args: []string{"--debug-addr", "no-port"}, want: "--debug-addr: "},
		{env: [2]string{"FLEETHUB_DATABASE_URL", "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=1"}, want: "--database-url: "},
	} {
		t.Run(fmt.Sprint(c.args, c.env), func(t *testing.T) {
			if c.env[0] != "" {
				t.Setenv(c.env[0], c.env[1])
			}
			var out, errb strings.Builder
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)
			if code := run(t.Context(), args, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) || strings.Contains(out.String(), "listening") {
				t.Errorf("exit %d, stdout %q, stderr %q; want a refusal saying %q", code, out.String(), errb.String(), c.want)
			}
		})
	}
	var out, errb strings.Builder
	if code := run(t.Context(), []string{"keys", "create", "--data", t.TempDir(), "--org", "acme", "extra", "--env", "test", "--name", "n", "--permissions", "all"}, &out, &errb); code == 0 || out.Len() > 0 || !strings.Contains(errb.String(), `unexpected argument "extra"`) {
		t.Errorf("keys create with a stray word: exit %d, %q %q", code, out.String(), errb.String())
	}
	// the organization is an id as every other, the name a label
	for _, c := range []struct{ org, name, want string }{
		{strings.Repeat("o", 201), "n", "--org must be 1 to 200 characters"},
		{"a\tb", "n", "--org must be 1 to 200 characters"},
		{"acme", "n\x01", "--name must not contain a control character"},
	} {
		var out, errb strings.Builder
		if code := run(t.Context(), []string{"keys", "create", "--data", t.TempDir(), "--org", c.org, "--env", "test", "--name", c.name, "--permissions", "all"}, &out, &errb); code == 0 || out.Len() > 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("keys create --org %.20q --name %q: exit %d, %q %q", c.org, c.name, code, out.String(), errb.String())
		}
	}
	t.Run("FLEETHUB_RPM", func(t *testing.T) {
		t.Setenv("FLEETHUB_RPM", "lots")
		var out, errb strings.Builder
		if code := run(t.Context(), []string{"keys", "create", "--data", t.TempDir(), "--org", "acme", "--env", "test", "--name", "n", "--permissions", "all"}, &out, &errb); code == 0 || out.Len() > 0 || !strings.Contains(errb.String(), "FLEETHUB_RPM") {
			t.Errorf("keys create with FLEETHUB_RPM=lots: exit %d, %q %q", code, out.String(), errb.String())
		}
	})
}

var _ = json.Marshal
var _ = fmt.Sprint

func TestSearchEndpointLimit(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 1_000_000)
	for i := 0; i < 1000; i++ {
		if r := n.do("GET", "/v1/search?q=main", k, nil); r.Status == 429 {
			t.Fatalf("search %d limited within the 1,000 per minute", i)
		}
	}
	// the bucket refills at 1,000 per minute (about 17 per second): well
	// within 200 more requests one is refused
	for i := 0; i < 200; i++ {
		if r := n.do("GET", "/v1/search?q=main", k, nil); r.Status == 429 {
			if r.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			return
		}
	}
	t.Fatal("search never limited past 1,000 per minute")
}

// TestBadFlagSaidOnce: a flag value that does not parse, or a flag that
// is not defined, is refused in one line naming it and pointing to -h,
// not printed twice around the whole flag list; -h still lists them.
func TestBadFlagSaidOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-body-bytes", "abc"}, `"abc" for flag -max-body-bytes`},
		{[]string{"serve", "--no-such-flag"}, "not defined: -no-such-flag"},
		{[]string{"keys", "create", "--rpm", "many"}, `"many" for flag -rpm`},
	} {
		var out, errb strings.Builder
		if code := run(t.Context(), c.args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", c.args, code)
		}
		msg := errb.String()
		if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.want) || !strings.Contains(msg, "(-h lists the flags)") {
			t.Errorf("%v: stderr %q; want one line saying %q and pointing to -h", c.args, msg, c.want)
		}
	}
	var out, errb strings.Builder
	if code := run(t.Context(), []string{"serve", "-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-max-body-bytes") {
		t.Errorf("serve -h: exit %d, stderr %q; want the flag list", code, errb.String())
	}
}
