package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// An endpoint works from its env alone: these tests give it a key source
// and a recorder of their own, no Dispatcher.

type fixedKeys struct{ k signingKeys }

func (f *fixedKeys) get(context.Context, store.Scope, string) (*signingKeys, error) { return &f.k, nil }

type recorded struct {
	x store.Delivery
	o outcome
}

// chanRecorder hands each call on a channel.
type chanRecorder struct {
	records  chan recorded
	released chan []string
}

func newChanRecorder() *chanRecorder {
	return &chanRecorder{records: make(chan recorded, 16), released: make(chan []string, 16)}
}

func (r *chanRecorder) release(ids []string, _ time.Time)               { r.released <- ids }
func (r *chanRecorder) record(x store.Delivery, o outcome, _ time.Time) { r.records <- recorded{x, o} }
func (r *chanRecorder) hungry(*endpoint)                                {}

// testEndpoint makes an endpoint for a receiver that answers status; the
// test's cleanup stops it and waits for its workers.
func testEndpoint(t *testing.T, status int) (*endpoint, *chanRecorder, chan *http.Request) {
	t.Helper()
	return testEndpointWith(t, status, Config{AllowPrivate: true})
}

func testEndpointWith(t *testing.T, status int, cfg Config) (*endpoint, *chanRecorder, chan *http.Request) {
	t.Helper()
	got := make(chan *http.Request, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	cfg.defaults()
	rec := newChanRecorder()
	halt := make(chan struct{})
	var running sync.WaitGroup
	env := endpointEnv{cfg: cfg, log: slog.New(slog.DiscardHandler), keys: &fixedKeys{signingKeys{current: []byte("0123456789abcdef")}},
		rec: rec, sendCtx: context.Background(), halt: halt, running: &running}
	e := newEndpoint(env, hub.StreamInfo{ID: "estr_1", Org: "org-a", Env: "test", WebhookURL: srv.URL, Delivery: "webhook"})
	t.Cleanup(func() {
		e.stop()
		close(halt)
		running.Wait()
	})
	return e, rec, got
}

func delivery(id string) store.Delivery {
	return store.Delivery{ID: id, Org: "org-a", Env: "test", StreamID: "estr_1", Payload: []byte(`{"stream_id":"estr_1","offset":1,"message":{}}`)}
}

func TestEndpointSendsAndRecords(t *testing.T) {
	e, rec, got := testEndpoint(t, http.StatusNoContent)
	if refused := e.add([]store.Delivery{delivery("msg_1")}, false, time.Now()); refused != nil {
		t.Fatalf("refused %v", refused)
	}
	r := <-got
	if r.Header.Get("Webhook-Id") != "msg_1" || r.Header.Get("Webhook-Signature") == "" {
		t.Errorf("request headers %v", r.Header)
	}
	x := <-rec.records
	if x.x.ID != "msg_1" || x.o.kind != delivered || x.o.code != http.StatusNoContent {
		t.Errorf("recorded %+v", x)
	}
	if ids := e.heldIDs(nil); len(ids) != 0 {
		t.Errorf("still held after the outcome: %v", ids)
	}
}

// TestEndpointKeepsGoingAfterA410: a 410 Gone is a failed attempt to
// retry, as a 5xx is; the endpoint takes and sends what comes next.
func TestEndpointKeepsGoingAfterA410(t *testing.T) {
	e, rec, reqs := testEndpoint(t, http.StatusGone)
	e.add([]store.Delivery{delivery("msg_1")}, false, time.Now())
	x := <-rec.records
	if x.x.ID != "msg_1" || x.o.kind != retry || x.o.code != http.StatusGone {
		t.Fatalf("recorded %s: kind %v, code %d; want a retry of the 410", x.x.ID, x.o.kind, x.o.code)
	}
	if refused := e.add([]store.Delivery{delivery("msg_2")}, false, time.Now()); len(refused) != 0 {
		t.Fatalf("the endpoint refused %v after a 410", refused)
	}
	if x := <-rec.records; x.x.ID != "msg_2" || x.o.kind != retry {
		t.Errorf("recorded %s: kind %v; want msg_2 to be sent and retried", x.x.ID, x.o.kind)
	}
	if n := len(reqs); n != 2 {
		t.Errorf("the receiver got %d requests, want 2", n)
	}
}
