package main

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/internal/faultproxy"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// faultProxy is a faultproxy in front of target, closed with the test.
func faultProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// proxied returns rawURL with its host replaced by p's address.
func proxied(t *testing.T, rawURL string, p *faultproxy.Proxy) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("%q is not a URL with a host: %v", rawURL, err)
	}
	u.Host = p.Addr()
	return u.String()
}

// eventuallyTrue polls cond for up to within.
func eventuallyTrue(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	waitfor.Until(t, within, what, cond)
}

func (n *node) dependency(key, name string) string {
	n.t.Helper()
	r := n.do("GET", "/v1/trips/health", key, nil)
	deps, _ := r.json(n.t)["dependencies"].(map[string]any)
	s, _ := deps[name].(string)
	return s
}

func (n *node) metricLine(prefix string) string {
	n.t.Helper()
	r := n.do("GET", "/metrics", "", nil)
	for _, l := range strings.Split(string(r.Body), "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// timed runs f and fails when it took longer than limit: a request that
// should fail fast must not hang (the limit is generous, not a benchmark).
func timed(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > limit {
		t.Fatalf("%s took %s, more than %s", what, d, limit)
	}
}

// Redis going away: limits and the rest fall back to this node's memory,
// every request still answers, health says degraded with no dial per
// request, and everything follows Redis's return.
func TestFaultRedisDown(t *testing.T) {
	p := faultProxy(t, hostOf(t, requireService(t, "FLEETHUB_TEST_REDIS_URL")))
	cfg := testConfig(t)
	cfg.RedisURL = proxied(t, requireService(t, "FLEETHUB_TEST_REDIS_URL"), p)
	n := startNode(t, cfg)
	k := n.key("org-faults", "live", []string{"all"}, 100000)
	if r := n.do("GET", "/v1/trips", k, nil); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	if got := n.dependency(k, "redis"); got != "healthy" {
		t.Fatalf("redis before the cut: %q", got)
	}
	if got := n.dependency(k, "cache"); got != "healthy" {
		t.Fatalf("cache before the cut: %q", got)
	}

	p.Cut(true)
	timed(t, 10*time.Second, "50 requests with Redis down", func() {
		for i := range 50 {
			if r := n.do("GET", "/v1/trips", k, nil); r.Status != 200 {
				t.Fatalf("request %d with Redis down: %d %s", i, r.Status, r.Body)
			}
		}
	})
	if got := n.dependency(k, "redis"); got != "degraded" {
		t.Fatalf("redis while down: %q", got)
	}
	if got := n.dependency(k, "cache"); got != "degraded" {
		t.Fatalf("cache while Redis is down (limits from this node's memory): %q", got)
	}
	if r := n.do("GET", "/readyz", "", nil); r.Status != 200 {
		t.Fatalf("/readyz with Redis down: %d (its users fall back to memory)", r.Status)
	}
	if l := n.metricLine(`fleethub_breaker_state{part="redis"}`); !strings.HasSuffix(l, " 1") {
		t.Fatalf("breaker metric while down: %q", l)
	}

	p.Cut(false)
	eventuallyTrue(t, 6*time.Second, "health follows Redis's return", func() bool {
		return n.dependency(k, "redis") == "healthy" && n.dependency(k, "cache") == "healthy"
	})
	if l := n.metricLine(`fleethub_breaker_state{part="redis"}`); !strings.HasSuffix(l, " 0") {
		t.Fatalf("breaker metric after: %q", l)
	}
	if l := n.metricLine(`fleethub_breaker_changes_total{part="redis",state="open"}`); !strings.HasSuffix(l, " 1") {
		t.Fatalf("one opening counted: %q", l)
	}
	if r := n.do("GET", "/v1/trips", k, nil); r.Status != 200 {
		t.Fatalf("after: %d %s", r.Status, r.Body)
	}
}

// PostgreSQL going away: whatever needs it answers 503
// service_unavailable with Retry-After, at once once the breaker is open;
// cached keys and the bus keep working; /readyz is 503; nothing answered
// 503 was written.
func TestFaultPostgresDown(t *testing.T) {
	base := requireService(t, "FLEETHUB_TEST_DATABASE_URL")
	p := faultProxy(t, hostOf(t, base))
	cfg := testConfig(t)
	cfg.DatabaseURL = proxied(t, crashSchema(t, base), p)
	n := startNode(t, cfg)
	k := n.key("org-faults", "live", []string{"all"}, 100000)
	if r := n.do("GET", "/v1/trips", k, nil); r.Status != 200 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"fleet_id": "f1",
		"event_filters": map[string]any{"categories": []string{"safety_events"}},
		"stream_config": map[string]any{"delivery_method": "websocket", "reliability": "at_least_once"}})
	if r.Status != 201 {
		t.Fatalf("stream start: %d %s", r.Status, r.Body)
	}
	stream := r.json(t)["stream_id"].(string)

	p.Cut(true)
	for i := range 5 {
		timed(t, 5*time.Second, "a read with PostgreSQL down", func() {
			r := n.do("GET", "/v1/trips", k, nil)
			if r.Status != 503 || r.errCode(t) != "service_unavailable" || r.Header.Get("Retry-After") == "" {
				t.Fatalf("read %d with PostgreSQL down: %d %v %s", i, r.Status, r.Header, r.Body)
			}
		})
	}
	r = n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-fault", "driver_id": "drv-fault"})
	if r.Status != 503 || r.errCode(t) != "service_unavailable" {
		t.Fatalf("a write with PostgreSQL down: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/readyz", "", nil); r.Status != 503 {
		t.Fatalf("/readyz with PostgreSQL down: %d", r.Status)
	}
	// the stream registry is served from memory
	if r := n.do("GET", "/api/v1/streaming/events/status/"+stream, k, nil); r.Status != 200 {
		t.Fatalf("stream status with PostgreSQL down: %d %s", r.Status, r.Body)
	}
	// the key is served from memory and the embedded bus takes telemetry
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("veh-fault", time.Second, 1, 0)}}); r.Status != 202 {
		t.Fatalf("telemetry with PostgreSQL down: %d %s", r.Status, r.Body)
	}

	p.Cut(false)
	eventuallyTrue(t, 6*time.Second, "reads follow PostgreSQL's return", func() bool { return n.do("GET", "/v1/trips", k, nil).Status == 200 })
	eventuallyTrue(t, 2*time.Second, "/readyz follows", func() bool { return n.do("GET", "/readyz", "", nil).Status == 200 })
	if r := n.do("GET", "/v1/trips", k, nil); strings.Contains(string(r.Body), "veh-fault") {
		t.Fatalf("a trip answered 503 was written: %s", r.Body)
	}
}

// Kafka going away: once the breaker is open ingest answers 503 with
// Retry-After at once and /readyz is 503; both follow the broker's return.
func TestFaultKafkaDown(t *testing.T) {
	var (
		mu  sync.Mutex
		cls []*faultproxy.Listener
	)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(4),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			if err != nil {
				return nil, err
			}
			cl := faultproxy.WrapListener(ln)
			mu.Lock()
			cls = append(cls, cl)
			mu.Unlock()
			return cl, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cut := func(v bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, cl := range cls {
			cl.Cut(v)
		}
	}
	cfg := testConfig(t)
	cfg.KafkaBrokers = strings.Join(cluster.ListenAddrs(), ",")
	n := startNode(t, cfg)
	k := n.key("org-faults", "live", []string{"all"}, 100000)
	ingest := func() resp {
		return n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{engineMsg("veh-kafka", time.Second, 1, 0)}})
	}
	if r := ingest(); r.Status != 202 {
		t.Fatalf("before: %d %s", r.Status, r.Body)
	}
	stream := startEventStream(t, n, k, "veh-kafka-ws")
	c := n.dial(t, k, "stream_id="+stream)
	expectSubscribed(t, c)
	n.ingestEvents(t, k, "veh-kafka-ws", 0, 5)
	readEvents(t, c, 5)

	cut(true)
	// a publish in flight when the broker goes is not left to the writer's
	// own retries (about 7 s): the bus's watch opens the breaker, which
	// cancels it, and it is refused
	timed(t, 5*time.Second, "the first ingest after the broker's loss", func() {
		if r := ingest(); r.Status != 503 || r.Header.Get("Retry-After") == "" {
			t.Fatalf("first ingest with Kafka down: %d %v %s", r.Status, r.Header, r.Body)
		}
	})
	cut(false)
	eventuallyTrue(t, 10*time.Second, "/readyz follows the broker's return", func() bool { return n.do("GET", "/readyz", "", nil).Status == 200 })
	eventuallyTrue(t, 10*time.Second, "ingest follows", func() bool { return ingest().Status == 202 })

	cut(true)
	// with no publish to find it, the watch alone opens the breaker:
	// /readyz turns 503, and ingest is refused at once
	eventuallyTrue(t, 10*time.Second, "/readyz follows the broker's loss with no ingest", func() bool { return n.do("GET", "/readyz", "", nil).Status == 503 })
	for i := range 5 {
		timed(t, 2*time.Second, "ingest with the breaker open", func() {
			r := ingest()
			if r.Status != 503 || r.errCode(t) != "service_unavailable" || r.Header.Get("Retry-After") == "" {
				t.Fatalf("ingest %d with Kafka down: %d %v %s", i, r.Status, r.Header, r.Body)
			}
		})
	}
	if r := n.do("GET", "/readyz", "", nil); r.Status != 503 {
		t.Fatalf("/readyz with Kafka down: %d", r.Status)
	}
	if got := n.dependency(k, "bus"); got != "unhealthy" {
		t.Fatalf("bus while down: %q", got)
	}
	// the websocket side keeps serving what its log holds
	again := readEventsWithin(t, n.dial(t, k, "stream_id="+stream+"&last_offset=0"), 5, 10*time.Second)
	if len(again) != 5 || again[0].Offset != 1 {
		t.Fatalf("replay with Kafka down: %d messages", len(again))
	}

	cut(false)
	eventuallyTrue(t, 6*time.Second, "/readyz follows the broker's return", func() bool { return n.do("GET", "/readyz", "", nil).Status == 200 })
	eventuallyTrue(t, 10*time.Second, "ingest follows", func() bool { return ingest().Status == 202 })
}

// hostOf is the host:port of a URL.
func hostOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("%q is not a URL with a host: %v", rawURL, err)
	}
	return u.Host
}
