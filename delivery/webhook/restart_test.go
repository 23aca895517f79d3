package webhook_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// tally counts received webhook-ids.
type tally struct {
	mu  sync.Mutex
	ids map[string]int
	n   int
}

func (c *tally) add(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]int{}
	}
	c.ids[id]++
	c.n++
	return c.n
}

func (c *tally) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.ids))
	for k, v := range c.ids {
		out[k] = v
	}
	return out
}

// checkAll fails unless every stored delivery of the streams was
// delivered and received under its own id, and nothing else was; it
// returns the number of re-sends.
func checkAll(t *testing.T, st store.Deliveries, got map[string]int, streams ...hub.StreamInfo) int {
	t.Helper()
	want := map[string]bool{}
	for _, s := range streams {
		for _, x := range list(t, st, s, "") {
			if x.Status != store.DeliveryDelivered {
				t.Errorf("%s is %s", x.ID, x.Status)
			}
			want[x.ID] = true
		}
	}
	resent := 0
	for id, n := range got {
		if !want[id] {
			t.Errorf("received unknown webhook-id %s", id)
		}
		resent += n - 1
	}
	for id := range want {
		if got[id] == 0 {
			t.Errorf("%s never received", id)
		}
	}
	return resent
}

func slowReceiver(t *testing.T, c *tally, delay time.Duration) *receiver {
	return newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay) // real time: the receiver's latency keeps requests in flight
		c.add(r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusOK)
	})
}

// holdingReceiver counts each request's webhook-id and answers the first
// n at once; it holds the later ones until release (or until the request
// is cut). held is closed when it holds the first.
type holdingReceiver struct {
	*receiver
	held    chan struct{}
	release func()
}

func newHoldingReceiver(t *testing.T, c *tally, n int) *holdingReceiver {
	held, gate := make(chan struct{}), make(chan struct{})
	var holding, releasing sync.Once
	h := &holdingReceiver{held: held, release: func() { releasing.Do(func() { close(gate) }) }}
	h.receiver = newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if c.add(r.Header.Get("webhook-id")) > n {
			holding.Do(func() { close(held) })
			select {
			case <-gate:
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	t.Cleanup(h.release) // before the receiver's Close, which waits for its requests
	return h
}

// waitHeld waits until rc holds a request.
func waitHeld(t *testing.T, rc *holdingReceiver) {
	t.Helper()
	select {
	case <-rc.held:
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for a request in flight")
	}
}

func openAt(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCloseMidStreamAndRestart: a dispatcher closed while requests are
// in flight (and cut at once), then a new one on the same SQLite
// directory: every message is delivered, re-sends carry the same
// webhook-id.
func TestCloseMidStreamAndRestart(t *testing.T) {
	dir := t.TempDir()
	st1 := openAt(t, dir)
	f := newFixture(t, st1)
	var c tally
	rc := newHoldingReceiver(t, &c, 60)
	info := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Node = "node-1"
	d1, err := webhook.New(cfg, st1, f.reg, st1, f.cnt, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d1.Run(context.Background()) }()
	for i := int64(0); i < 10; i++ {
		accept(t, d1, info, entries(1+i*30, 30))
	}
	waitHeld(t, rc) // after 60 answered
	cut, cancel := context.WithCancel(context.Background())
	cancel() // no grace: requests in flight are cut
	d1.Close(cut)
	<-done
	st1.Close()
	rc.release()

	st2 := openAt(t, dir)
	defer st2.Close()
	f.st = st2
	cfg.Node = "node-2"
	d2, err := webhook.New(cfg, st2, f.reg, st2, f.cnt, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() { done2 <- d2.Run(ctx) }()
	defer func() { stop(); <-done2 }()
	waitFor(t, "every delivery after the restart", func() bool { return countOf(t, st2, info, store.DeliveryDelivered) == 300 })
	resent := checkAll(t, st2, c.snapshot(), info)
	t.Logf("300 messages, %d re-sent with their webhook-id", resent)
}

var errCrashed = errors.New("process crashed")

// crashable is a store that stops answering, as if the process died:
// after the crash nothing reaches the database.
type crashable struct {
	backend
	dead atomic.Bool
}

func (c *crashable) check() error {
	if c.dead.Load() {
		return errCrashed
	}
	return nil
}

func (c *crashable) EnqueueDeliveries(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.backend.EnqueueDeliveries(ctx, ds)
}

func (c *crashable) ClaimDeliveries(ctx context.Context, q store.DeliveryClaim) ([]store.Delivery, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.backend.ClaimDeliveries(ctx, q)
}

func (c *crashable) RenewDeliveryLeases(ctx context.Context, owner string, ids []string, until time.Time) ([]string, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.backend.RenewDeliveryLeases(ctx, owner, ids, until)
}

func (c *crashable) ReleaseDeliveries(ctx context.Context, owner string, ids []string, next time.Time) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.backend.ReleaseDeliveries(ctx, owner, ids, next)
}

func (c *crashable) RecordDeliveries(ctx context.Context, owner string, rs []store.DeliveryResult) error {
	if err := c.check(); err != nil {
		return err
	}
	return c.backend.RecordDeliveries(ctx, owner, rs)
}

func (c *crashable) DeliveryStreams(ctx context.Context, now time.Time, full []string) ([]store.DeliveryStream, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	return c.backend.DeliveryStreams(ctx, now, full)
}

// TestCrashMidStreamAndRestart: the store stops taking writes mid-stream
// (outcomes, releases: nothing more is written, as in a kill -9), then a
// new dispatcher on the same directory takes over once the leases run
// out: nothing is lost.
func TestCrashMidStreamAndRestart(t *testing.T) {
	dir := t.TempDir()
	st1 := openAt(t, dir)
	crash := &crashable{backend: st1}
	f := newFixture(t, st1)
	var c tally
	rc := newHoldingReceiver(t, &c, 60)
	info := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Node, cfg.Lease, cfg.Drain = "node-1", 400*time.Millisecond, 10*time.Millisecond
	d1, err := webhook.New(cfg, crash, f.reg, st1, f.cnt, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d1.Run(ctx) }()
	for i := int64(0); i < 10; i++ {
		accept(t, d1, info, entries(1+i*30, 30))
	}
	waitHeld(t, rc) // after 60 answered
	crash.dead.Store(true)
	kill()
	<-done
	st1.Close()
	rc.release()

	st2 := openAt(t, dir)
	defer st2.Close()
	f.st = st2
	cfg.Node = "node-2"
	d2, err := webhook.New(cfg, st2, f.reg, st2, f.cnt, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	ctx2, stop := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() { done2 <- d2.Run(ctx2) }()
	defer func() { stop(); <-done2 }()
	waitFor(t, "every delivery after the crash", func() bool { return countOf(t, st2, info, store.DeliveryDelivered) == 300 })
	resent := checkAll(t, st2, c.snapshot(), info)
	t.Logf("300 messages, %d re-sent with their webhook-id after the crash", resent)
}

// databaseURL is the PostgreSQL server of the tests (as in
// internal/store/postgres): skipped without it, except in CI.
func databaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("FLEETHUB_TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETHUB_TEST_DATABASE_URL not set: PostgreSQL tests are required in CI")
		}
		t.Skip("FLEETHUB_TEST_DATABASE_URL not set: skipping PostgreSQL tests")
	}
	return u
}

// freshSchema creates a schema with a random name, dropped at cleanup,
// and returns a connection string whose search_path is that schema.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := databaseURL(t)
	b := make([]byte, 8)
	rand.Read(b)
	name := "fleethub_test_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	exec := func(ctx context.Context, sql string) {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(context.Background(), "CREATE SCHEMA "+ident)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec(ctx, "DROP SCHEMA "+ident+" CASCADE")
	})
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		return base + " search_path=" + name
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

func openPostgres(t testing.TB, cs string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), postgres.Config{URL: cs, MaxConns: 8})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTwoNodesOnePostgres: two dispatchers, each with its own pool on
// one database, poll and accept concurrently: every delivery is sent
// exactly once.
func TestTwoNodesOnePostgres(t *testing.T) {
	cs := freshSchema(t)
	stA, stB := openPostgres(t, cs), openPostgres(t, cs)
	f := newFixture(t, stA)
	var c tally
	rc := slowReceiver(t, &c, time.Millisecond)
	var streams []hub.StreamInfo
	for range 3 {
		streams = append(streams, f.stream(rc.URL))
	}
	// left by a node that is gone: unleased, due, claimed by the pollers
	var orphans []store.Delivery
	now := time.Now()
	for i, s := range streams {
		for j := range 100 {
			orphans = append(orphans, store.Delivery{ID: fmt.Sprintf("msg_orphan_%d_%d", i, j), Org: s.Org, Env: s.Env, StreamID: s.ID, Offset: int64(1000 + j),
				Payload: fmt.Appendf(nil, `{"stream_id":%q,"offset":%d,"message":{}}`, s.ID, 1000+j), NextAttemptAt: now, QueuedAt: now, CreatedAt: now})
		}
	}
	if _, err := stA.EnqueueDeliveries(context.Background(), orphans); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.QueueLimit = 40 // several claims per stream, so the nodes interleave
	cfg.PollEvery = 5 * time.Millisecond
	var stops []func()
	start := func(node string, st *postgres.Store) *webhook.Dispatcher {
		cfg.Node = node
		d, err := webhook.New(cfg, st, f.reg, st, f.cnt, testLogger())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		var once sync.Once
		stop := func() { once.Do(func() { cancel(); <-done }) }
		t.Cleanup(stop)
		stops = append(stops, stop)
		return d
	}
	dA, dB := start("node-a", stA), start("node-b", stB)
	var wg sync.WaitGroup
	for i, s := range streams {
		wg.Go(func() {
			for k := int64(0); k < 10; k++ {
				d := dA
				if (int64(i)+k)%2 == 1 {
					d = dB
				}
				if err := d.Accept(context.Background(), s, entries(1+k*10, 10)); err != nil {
					t.Errorf("Accept: %v", err)
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "every delivery", func() bool {
		n := int64(0)
		for _, s := range streams {
			n += countOf(t, stA, s, store.DeliveryDelivered)
		}
		return n == 600
	})
	// stopped nodes send nothing more: a stray re-send has arrived by now
	for _, stop := range stops {
		stop()
	}
	got := c.snapshot()
	if resent := checkAll(t, stA, got, streams...); resent != 0 {
		t.Errorf("%d deliveries sent twice in normal running", resent)
	}
	if len(got) != 600 {
		t.Errorf("%d distinct deliveries received, want 600", len(got))
	}
}

// A shutdown with no grace cuts the requests in flight: the deliveries go
// back unattempted at once, rather than when the receiver answers or the
// request times out (a minute here, past the test's own patience).
func TestShutdownCutsRequestsInFlight(t *testing.T) {
	st := openAt(t, t.TempDir())
	defer st.Close()
	f := newFixture(t, st)
	var c tally
	rc := newHoldingReceiver(t, &c, 0)
	info := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Timeout = time.Minute
	d, err := webhook.New(cfg, st, f.reg, st, f.cnt, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	accept(t, d, info, entries(1, 3))
	waitHeld(t, rc)
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	closed := make(chan struct{})
	go func() { d.Close(cut); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for the receiver: the request in flight was not cut")
	}
	<-done
	for _, x := range list(t, st, info, "") {
		if x.Status != store.DeliveryPending || x.Attempts != 0 {
			t.Errorf("after the cut: %s %s, %d attempts (want pending, none)", x.ID, x.Status, x.Attempts)
		}
	}
}
