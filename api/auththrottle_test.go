package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// countingKeys knows one good key and counts every lookup.
type countingKeys struct {
	good    string
	lookups atomic.Int64
}

func (k *countingKeys) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	k.lookups.Add(1)
	if key != k.good {
		return nil, api.Errf("api_key_not_found", "API key not found")
	}
	return &api.Principal{KeyID: "good", Org: "org-a", Env: "test", Permissions: []string{"all"}, Rate: 1000, Burst: 1000}, nil
}

// fakeClock is a settable clock for the limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func startThrottled(t *testing.T, cfg api.Config, ks *countingKeys, clock *fakeClock) (addr string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	cfg.Addr = "127.0.0.1:0"
	srv := api.New(cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), ks, ratelimit.NewMemory(clock.now))
	h := func(c *api.Ctx) error { hits.Add(1); return c.JSON(200, map[string]bool{"ok": true}) }
	srv.Handle(
		&api.Route{Method: "GET", Path: "/thing", Tag: "test", Handler: h},
		&api.Route{Method: "GET", Path: "/plain", Tag: "test", Auth: api.AuthKeyPlain, Handler: h},
	)
	return apitest.Serve(t, srv), hits
}

// clientFrom makes a client whose connections come from the local address
// ip (any 127/8 address works on loopback).
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

type answer struct {
	status     int
	code       string
	retryAfter string
	body       string
}

func get(t *testing.T, cl *http.Client, url, key string) answer {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	res, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return answer{res.StatusCode, e.Error.Code, res.Header.Get("Retry-After"), string(b)}
}

// After 20 failed authentications from one address (the documented
// default budget), the next failure from it is 429
// too_many_failed_authentications with Retry-After; a valid key from the
// same address is still served; another address is not affected; denied
// failures spend no budget, and one failure is allowed again per 3 s.
func TestAuthFailureThrottle(t *testing.T) {
	good, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	unknown, _ := apikey.Generate("test")
	ks := &countingKeys{good: good}
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	addr, hits := startThrottled(t, api.Config{}, ks, clock)
	url := "http://" + addr + "/thing"
	cl := clientFrom("127.0.0.1")

	// the budget: 20 failures of every kind answer as before
	bad := []string{unknown, "", "not-a-key"}
	wantCode := map[string]string{unknown: "api_key_not_found", "": "invalid_api_key", "not-a-key": "invalid_api_key"}
	for i := 0; i < 20; i++ {
		k := bad[i%len(bad)]
		if a := get(t, cl, url, k); a.status != 401 || a.code != wantCode[k] || a.retryAfter != "" {
			t.Fatalf("failure %d (%q): got %d %s Retry-After %q, want 401 %s", i+1, k, a.status, a.code, a.retryAfter, wantCode[k])
		}
	}
	if n := ks.lookups.Load(); n != 7 { // the unknown key was tried 7 times of 20
		t.Fatalf("lookups = %d, want 7", n)
	}

	// past it: every kind of failure is 429 with Retry-After (20/min: 3 s)
	for i, k := range append(bad, bad...) {
		a := get(t, cl, url, k)
		if a.status != 429 || a.code != "too_many_failed_authentications" || a.retryAfter != "3" {
			t.Fatalf("throttled failure %d (%q): got %d %s Retry-After %q, want 429 too_many_failed_authentications Retry-After 3: %s", i, k, a.status, a.code, a.retryAfter, a.body)
		}
	}
	// no key and a malformed key never reach the key lookup
	if n := ks.lookups.Load(); n != 9 {
		t.Fatalf("lookups = %d, want 9 (only the well-formed unknown key is looked up)", n)
	}
	// the plain form answers the same status
	if a := get(t, cl, "http://"+addr+"/plain", unknown); a.status != 429 || a.retryAfter != "3" {
		t.Fatalf("plain route: got %d Retry-After %q, want 429 with Retry-After 3", a.status, a.retryAfter)
	}

	// a valid key from the throttled address is served, and not counted
	for i := 0; i < 3; i++ {
		if a := get(t, cl, url, good); a.status != 200 {
			t.Fatalf("good key from a throttled address: got %d %s, want 200", a.status, a.body)
		}
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3 (only the good key)", n)
	}

	// another address has its own budget
	if a := get(t, clientFrom("127.0.0.2"), url, unknown); a.status != 401 || a.code != "api_key_not_found" {
		t.Fatalf("other address: got %d %s, want 401 api_key_not_found", a.status, a.code)
	}

	// denied failures spent nothing: 3 s later exactly one more failure
	// is answered 401, then 429 again
	clock.add(3 * time.Second)
	if a := get(t, cl, url, unknown); a.status != 401 {
		t.Fatalf("after 3 s: got %d %s, want 401", a.status, a.code)
	}
	if a := get(t, cl, url, unknown); a.status != 429 {
		t.Fatalf("after the refilled token: got %d %s, want 429", a.status, a.code)
	}
}

// A configured budget replaces the default; a negative Rate turns the
// throttle off.
func TestAuthFailureThrottleConfig(t *testing.T) {
	good, _ := apikey.Generate("test")
	unknown, _ := apikey.Generate("test")
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	for _, tc := range []struct {
		name  string
		lim   ratelimit.Limit
		first int // the attempt that first gets 429; 0: never
	}{
		{"budget 5", ratelimit.Limit{Rate: 5, Burst: 5, Window: time.Minute}, 6},
		{"off", ratelimit.Limit{Rate: -1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, _ := startThrottled(t, api.Config{AuthFailureLimit: tc.lim}, &countingKeys{good: good}, clock)
			cl := clientFrom("127.0.0.1")
			for i := 1; i <= 30; i++ {
				a := get(t, cl, "http://"+addr+"/thing", unknown)
				want := 401
				if tc.first > 0 && i >= tc.first {
					want = 429
				}
				if a.status != want {
					t.Fatalf("attempt %d: got %d, want %d", i, a.status, want)
				}
				if want == 429 {
					if s, err := strconv.Atoi(a.retryAfter); err != nil || s < 1 {
						t.Fatalf("attempt %d: Retry-After %q", i, a.retryAfter)
					}
				}
			}
		})
	}
}
