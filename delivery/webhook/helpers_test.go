package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// backend is what the tests need of a store.
type backend interface {
	store.Deliveries
	webhook.StreamStore
	CreateStream(ctx context.Context, s store.Stream) error
	UpdateStream(ctx context.Context, s store.Stream, prev int64) error
}

func openSQLite(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// registry is a hub.Streams over a map (the real registry lives in
// hub/streams, which delivery must not import).
type registry struct {
	mu sync.Mutex
	m  map[string]hub.StreamInfo
}

func (r *registry) Stream(org, env, id string) (hub.StreamInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.m[id]
	if !ok || s.Org != org || s.Env != env {
		return hub.StreamInfo{}, false
	}
	return s, true
}

func (r *registry) put(s hub.StreamInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]hub.StreamInfo{}
	}
	r.m[s.ID] = s
}

// counter is a hub.Counter.
type counter struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *counter) Count(id, name string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int64{}
	}
	c.m[id+"/"+name] += n
}

func (c *counter) Connected(string, int) {}

func (c *counter) get(id, name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id+"/"+name]
}

func newSecret(t testing.TB) string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// fixture is a store, a registry of streams with secrets, and a counter.
type fixture struct {
	t     testing.TB
	st    backend
	reg   *registry
	cnt   *counter
	n     int
	secrt map[string]string
}

func newFixture(t testing.TB, st backend) *fixture {
	return &fixture{t: t, st: st, reg: &registry{}, cnt: &counter{}, secrt: map[string]string{}}
}

// stream creates a webhook stream delivering to url.
func (f *fixture) stream(url string, mod ...func(*hub.StreamInfo)) hub.StreamInfo {
	f.t.Helper()
	f.n++
	info := hub.StreamInfo{ID: fmt.Sprintf("estr_test%03d_%d", f.n, time.Now().UnixNano()%1e6), Org: "org-a", Env: "test", Kind: hub.KindEvents,
		State: hub.StateActive, Delivery: "webhook", WebhookURL: url, BatchSize: 1, Version: 1}
	for _, m := range mod {
		m(&info)
	}
	secret := newSecret(f.t)
	b, _ := json.Marshal(map[string]any{"current": secret})
	now := time.Now().UTC()
	if err := f.st.CreateStream(context.Background(), store.Stream{ID: info.ID, Org: info.Org, Env: info.Env, Kind: info.Kind, State: info.State,
		Config: []byte(`{}`), Secret: string(b), Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		f.t.Fatalf("CreateStream: %v", err)
	}
	f.secrt[info.ID] = secret
	f.reg.put(info)
	return info
}

// testConfig is a fast schedule for tests: retries within milliseconds.
func testConfig() webhook.Config {
	return webhook.Config{
		AllowPrivate:     true,
		Concurrency:      4,
		Timeout:          300 * time.Millisecond,
		Lease:            3 * time.Second,
		PollEvery:        20 * time.Millisecond,
		Schedule:         []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond},
		RetryFor:         time.Minute,
		BreakerThreshold: 3,
		BreakerCooldown:  100 * time.Millisecond,
		SecretTTL:        50 * time.Millisecond,
		Drain:            time.Second,
	}
}

// clock is the wall clock plus an offset a test moves forward, as
// Config.Now: what the dispatcher times by it (a secret's TTL, a stall, a
// breaker's cooldown) sees the time pass at once.
type clock struct{ ahead atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *clock) advance(d time.Duration) { c.ahead.Add(int64(d)) }

func testLogger() *slog.Logger {
	if os.Getenv("FLEETHUB_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// start makes and runs a dispatcher; it is closed at cleanup.
func (f *fixture) start(cfg webhook.Config) *webhook.Dispatcher {
	f.t.Helper()
	d, err := webhook.New(cfg, f.st, f.reg, f.st, f.cnt, testLogger())
	if err != nil {
		f.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		d.Close(ctx)
		<-done
	})
	return d
}

// entries makes n log entries of a stream from offset from.
func entries(from int64, n int) []hub.Entry {
	out := make([]hub.Entry, n)
	for i := range out {
		off := from + int64(i)
		out[i] = hub.Entry{Offset: off, Time: time.Now(), Data: fmt.Appendf(nil, `{"event_id":"ev-%d","n":%d}`, off, off)}
	}
	return out
}

func accept(t testing.TB, d *webhook.Dispatcher, info hub.StreamInfo, es []hub.Entry) {
	t.Helper()
	if err := d.Accept(context.Background(), info, es); err != nil {
		t.Fatalf("Accept: %v", err)
	}
}

// verify checks a request's Standard Webhooks signature with secret, as
// a receiver would: webhook-id, webhook-timestamp (within five minutes)
// and at least one "v1,<base64 HMAC-SHA256 of id.timestamp.body>" in
// webhook-signature, keyed by the base64 after "whsec_".
func verify(secret string, h http.Header, body []byte) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("missing webhook headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook-timestamp %q: %v", ts, err)
	}
	if d := time.Since(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return fmt.Errorf("webhook-timestamp %s too far from now", ts)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no valid signature in %q", sigs)
}

// hit is one request a receiver got.
type hit struct {
	id     string
	header http.Header
	body   []byte
	err    error // verification
}

// receiver is a webhook receiver: answer decides each response (nil
// answers 204) and every request is recorded and verified.
type receiver struct {
	*httptest.Server
	secret func() string
	mu     sync.Mutex
	hits   []hit
	answer func(n int, w http.ResponseWriter, r *http.Request) // n counts requests from 0
	notify chan struct{}
}

func newReceiver(t testing.TB, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer, notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

// hungReceiver accepts requests and never answers them (until the test
// ends or the request is cut).
func hungReceiver(t testing.TB) *receiver {
	hang := make(chan struct{})
	rc := newReceiver(t, func(_ int, _ http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(hang) })
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h := hit{id: r.Header.Get("webhook-id"), header: r.Header.Clone(), body: body}
	if rc.secret != nil {
		h.err = verify(rc.secret(), r.Header, body)
	}
	rc.mu.Lock()
	n := len(rc.hits)
	rc.hits = append(rc.hits, h)
	rc.mu.Unlock()
	select {
	case rc.notify <- struct{}{}:
	default:
	}
	if rc.answer != nil {
		rc.answer(n, w, r)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) all() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitfor.Until(t, 30*time.Second, what, cond)
}

func list(t testing.TB, st store.Deliveries, info hub.StreamInfo, status string) []store.Delivery {
	t.Helper()
	var out []store.Delivery
	var cursor int64
	for {
		ds, next, err := st.ListDeliveries(context.Background(), store.Scope{Org: info.Org, Env: info.Env}, info.ID, store.DeliveryQuery{Status: status, Limit: 200, Before: cursor})
		if err != nil {
			t.Fatalf("ListDeliveries: %v", err)
		}
		out = append(out, ds...)
		if next == 0 {
			return out
		}
		cursor = next
	}
}

func countOf(t testing.TB, st store.Deliveries, info hub.StreamInfo, status string) int64 {
	t.Helper()
	c, err := st.CountDeliveries(context.Background(), store.Scope{Org: info.Org, Env: info.Env}, info.ID)
	if err != nil {
		t.Fatalf("CountDeliveries: %v", err)
	}
	return c[status]
}

// wrapped is a received single payload.
type wrapped struct {
	StreamID string          `json:"stream_id"`
	Offset   int64           `json:"offset"`
	Message  json.RawMessage `json:"message"`
}
