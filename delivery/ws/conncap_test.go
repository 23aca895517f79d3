package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/redisresend"
	"github.com/fleethub/fleethub/internal/testredis"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// testConns checks a counter's caps per key and per organization.
func testConns(t *testing.T, c ws.Conns, key string) {
	t.Helper()
	ctx := context.Background()
	org := "org-" + key
	var rel []func()
	for i := range 3 {
		r, err := c.Acquire(ctx, org, key, 3, 5)
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		rel = append(rel, r)
	}
	var ce *ws.CapError
	if _, err := c.Acquire(ctx, org, key, 3, 5); !errors.As(err, &ce) || ce.Scope != "key" || ce.Cap != 3 {
		t.Fatalf("4th on the key: %v, want the key cap 3", err)
	}
	rel[0]()
	rel[0]() // a second release counts nothing
	r, err := c.Acquire(ctx, org, key, 3, 5)
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	rel[0] = r
	// another key of the organization: 2 more fit under the org cap 5
	for i := range 2 {
		r, err := c.Acquire(ctx, org, key+"-b", 3, 5)
		if err != nil {
			t.Fatalf("key b %d: %v", i, err)
		}
		rel = append(rel, r)
	}
	if _, err := c.Acquire(ctx, org, key+"-b", 3, 5); !errors.As(err, &ce) || ce.Scope != "organization" || ce.Cap != 5 {
		t.Fatalf("6th in the org: %v, want the organization cap 5", err)
	}
	// another organization is counted apart
	r2, err := c.Acquire(ctx, org+"-other", key+"-c", 3, 5)
	if err != nil {
		t.Fatalf("other org: %v", err)
	}
	r2()
	for _, r := range rel {
		r()
	}
	for i := range 3 {
		r, err := c.Acquire(ctx, org, key, 3, 5)
		if err != nil {
			t.Fatalf("after releasing all, %d: %v", i, err)
		}
		defer r()
	}
}

func TestConnsMemory(t *testing.T) {
	m := ws.NewMemoryConns()
	testConns(t, m, "k1")
	if k, o := m.Count("org-k1", "k1"); k != 0 || o != 0 {
		t.Fatalf("count %d %d", k, o)
	}
}

func TestConnsRedis(t *testing.T) {
	rdb := testredis.Client(t)
	key := fmt.Sprintf("test-%d", time.Now().UnixNano())
	// two nodes share the count
	a, b := ws.NewRedisConns(rdb, 3*time.Second, nil), ws.NewRedisConns(rdb, 3*time.Second, nil)
	defer a.Close()
	defer b.Close()
	testConns(t, a, key)
	ctx := context.Background()
	org := "org-" + key
	for i := range 3 {
		r, err := a.Acquire(ctx, org, key, 3, 5)
		if err != nil {
			t.Fatalf("node a %d: %v", i, err)
		}
		defer r()
	}
	if _, err := b.Acquire(ctx, org, key, 3, 5); err == nil {
		t.Fatal("the other node took a 4th connection of the key")
	}
	// the TTL is refreshed while connections are held: the counter
	// outlives the expiry it had now, on Redis's own clock
	counter := "fleethub:wsconns:key:" + key
	ttl, err := rdb.PTTL(ctx, counter).Result()
	if err != nil || ttl <= 0 {
		t.Fatalf("PTTL of the counter: %v, %v", ttl, err)
	}
	expiry := redisNow(t, rdb).Add(ttl + time.Millisecond)
	waitfor.Until(t, ttl+10*time.Second, "Redis's clock past the counter's first expiry", func() bool { return redisNow(t, rdb).After(expiry) })
	if n, _ := rdb.Get(ctx, counter).Int(); n != 3 {
		t.Fatalf("counter after the TTL: %d, want 3 (refreshed)", n)
	}
	// a crashed node's counts expire: counters no node refreshes
	dead := ws.NewRedisConns(rdb, time.Second, nil)
	if _, err := dead.Acquire(ctx, org+"-dead", key+"-dead", 1, 10); err != nil {
		t.Fatal(err)
	}
	// never released: the node "crashes"
	dead.Close()
	if _, err := b.Acquire(ctx, org+"-dead", key+"-dead", 1, 10); err == nil {
		t.Fatal("the crashed node's connection freed before its TTL")
	}
	waitfor.Until(t, 10*time.Second, "Redis to expire the crashed node's counters", func() bool {
		n, err := rdb.Exists(ctx, "fleethub:wsconns:key:"+key+"-dead", "fleethub:wsconns:org:"+org+"-dead").Result()
		return err == nil && n == 0
	})
	if _, err := b.Acquire(ctx, org+"-dead", key+"-dead", 1, 10); err != nil {
		t.Fatalf("after the crashed node's TTL: %v", err)
	}
}

// redisNow is the time on Redis's clock, the one its TTLs run on.
func redisNow(t *testing.T, rdb *redis.Client) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func TestConnsRedisDownFallsBackToLocal(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	c := ws.NewRedisConns(rdb, time.Minute, nil)
	defer c.Close()
	testConns(t, c, "k-down")
}

// TestConnectionCap: the connection over the key's cap is refused with 429
// too_many_connections before the upgrade; closing one frees its slot.
func TestConnectionCap(t *testing.T) {
	var asked []string
	plans := ws.PlanFunc(func(_ context.Context, org, env, key string) (string, error) {
		asked = append(asked, org+"/"+env+"/"+key)
		return "professional", nil
	})
	f := newFixture(t, ws.Config{Plans: plans, KeyCaps: map[string]int{"professional": 3}}, hub.StreamInfo{ID: "s1"})
	u := f.url + "?stream_id=s1"
	var open []*websocket.Conn
	for i := range 3 {
		c, _, err := websocket.DefaultDialer.Dial(u, nil)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		defer c.Close()
		open = append(open, c)
	}
	_, res, err := websocket.DefaultDialer.Dial(u, nil)
	if err == nil || res == nil || res.StatusCode != 429 {
		t.Fatalf("4th: %v %v, want 429", err, res)
	}
	body, _ := io.ReadAll(res.Body)
	var e struct {
		Error     struct{ Code, Message string }
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "too_many_connections" || e.RequestID != "req-1" || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("4th: %s retry-after %q", body, res.Header.Get("Retry-After"))
	}
	if asked[0] != "org1/test/key1" {
		t.Fatalf("plan asked for %v", asked)
	}
	open[0].Close()
	// the slot comes back when the server sees the close
	waitfor.NoError(t, 5*time.Second, "a slot after a close", func() error {
		c, _, err := websocket.DefaultDialer.Dial(u, nil)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// TestConnectionCapBadRequestTakesNoSlot: a refused request holds no slot.
func TestConnectionCapBadRequestTakesNoSlot(t *testing.T) {
	plans := ws.PlanFunc(func(context.Context, string, string, string) (string, error) { return "starter", nil })
	f := newFixture(t, ws.Config{Plans: plans, KeyCaps: map[string]int{"starter": 1}}, hub.StreamInfo{ID: "s1"})
	for range 3 {
		_, res, _ := websocket.DefaultDialer.Dial(f.url+"?stream_id=nope", nil)
		if res == nil || res.StatusCode != 404 {
			t.Fatalf("unknown stream: %v", res)
		}
	}
	c, _, err := websocket.DefaultDialer.Dial(f.url+"?stream_id=s1", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestConnsRedisSentAgainCountsOnce: go-redis sends a command again when
// its reply comes after the read timeout, though Redis ran it; an acquire
// and a release sent again count the connection once, so the key's
// other connections are not refused and its slot is freed by the release.
func TestConnsRedisSentAgainCountsOnce(t *testing.T) {
	direct := testredis.Client(t)
	ctx := context.Background()
	key := fmt.Sprintf("resend-%d", time.Now().UnixNano())
	org := "org-" + key
	// the scripts in Redis's cache, so that the first command through the
	// proxy is the call itself
	warm := ws.NewRedisConns(direct, time.Minute, nil)
	defer warm.Close()
	r, err := warm.Acquire(ctx, org+"-warm", key+"-warm", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	r()
	slow := redisresend.New(t, direct.Options())
	c := ws.NewRedisConns(slow.Client, time.Minute, nil)
	defer c.Close()
	counters := []string{"fleethub:wsconns:key:" + key, "fleethub:wsconns:org:" + org}
	count := func() []int {
		var n []int
		for _, k := range counters {
			v, _ := direct.Get(ctx, k).Int()
			n = append(n, v)
		}
		return n
	}
	slow.Hold(t)
	release, err := c.Acquire(ctx, org, key, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n[0] != 1 || n[1] != 1 {
		t.Fatalf("one connection sent twice counts %v, want [1 1]", n)
	}
	other, err := warm.Acquire(ctx, org, key, 2, 2)
	if err != nil {
		t.Fatalf("the key's second connection of two: %v", err)
	}
	defer other()
	slow.Hold(t) // the connection the acquire's resend made
	release()
	if n := count(); n[0] != 1 || n[1] != 1 {
		t.Fatalf("after a release sent again the counters are %v, want [1 1] (the other connection)", n)
	}
}
