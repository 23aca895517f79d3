package webhook_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

func TestSignedDeliveries(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[info.ID] }
	d := f.start(testConfig())
	accept(t, d, info, entries(1, 20))
	waitFor(t, "20 deliveries", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 20 })
	hits := rc.all()
	if len(hits) != 20 {
		t.Fatalf("receiver got %d requests, want 20", len(hits))
	}
	offsets := map[int64]bool{}
	for _, h := range hits {
		if h.err != nil {
			t.Errorf("signature: %v", h.err)
		}
		if ct := h.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if !strings.HasPrefix(h.id, "msg_") {
			t.Errorf("webhook-id %q", h.id)
		}
		var w wrapped
		if err := json.Unmarshal(h.body, &w); err != nil {
			t.Fatalf("body %s: %v", h.body, err)
		}
		var m map[string]any
		if w.StreamID != info.ID || json.Unmarshal(w.Message, &m) != nil || m["n"] != float64(w.Offset) {
			t.Errorf("payload %s", h.body)
		}
		offsets[w.Offset] = true
	}
	if len(offsets) != 20 {
		t.Errorf("%d distinct offsets, want 20", len(offsets))
	}
	for _, x := range list(t, f.st, info, "") {
		if x.Attempts != 1 || x.LastStatusCode != 204 || x.DeliveredAt.IsZero() {
			t.Errorf("stored delivery %+v", x)
		}
	}
	waitFor(t, "counters", func() bool { return f.cnt.get(info.ID, "delivered") == 20 })
	if c := d.EndpointState(info.ID); c != webhook.CircuitClosed {
		t.Errorf("EndpointState = %s", c)
	}
}

func TestSecretRotationSignsWithBoth(t *testing.T) {
	st := openSQLite(t, t.TempDir())
	f := newFixture(t, st)
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL)
	old := f.secrt[info.ID]
	var clk clock
	cfg := testConfig()
	cfg.Now = clk.now
	d := f.start(cfg)
	accept(t, d, info, entries(1, 1))
	waitFor(t, "first delivery", func() bool { return len(rc.all()) == 1 })
	// rotate as hub/streams does: the old secret stays valid for a while
	rec, err := st.GetStream(context.Background(), store.Scope{Org: info.Org, Env: info.Env}, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newSecret(t)
	b, _ := json.Marshal(map[string]any{"current": fresh, "previous": old, "previous_until": time.Now().Add(time.Hour)})
	rec.Secret, rec.Version = string(b), rec.Version+1
	if err := st.UpdateStream(context.Background(), rec, rec.Version-1); err != nil {
		t.Fatal(err)
	}
	clk.advance(cfg.SecretTTL) // the cached secrets expire
	accept(t, d, info, entries(2, 1))
	waitFor(t, "second delivery", func() bool { return len(rc.all()) == 2 })
	h := rc.all()[1]
	if sigs := strings.Fields(h.header.Get("webhook-signature")); len(sigs) != 2 {
		t.Fatalf("webhook-signature %q: want two signatures during the overlap", h.header.Get("webhook-signature"))
	}
	if err := verify(fresh, h.header, h.body); err != nil {
		t.Errorf("new secret: %v", err)
	}
	if err := verify(old, h.header, h.body); err != nil {
		t.Errorf("old secret during overlap: %v", err)
	}
	if err := verify(old, rc.all()[0].header, rc.all()[0].body); err != nil {
		t.Errorf("first delivery with the old secret: %v", err)
	}
}

func TestReceiverFailsThenRecovers(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case n < 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("try later"))
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	info := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[info.ID] }
	d := f.start(testConfig())
	accept(t, d, info, entries(1, 1))
	waitFor(t, "delivery after failures", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 1 })
	hits := rc.all()
	if len(hits) != 3 {
		t.Fatalf("%d requests, want 3 (two 503s, then 200)", len(hits))
	}
	for _, h := range hits {
		if h.id != hits[0].id || h.err != nil {
			t.Errorf("attempt with id %s (first %s), signature %v", h.id, hits[0].id, h.err)
		}
	}
	x := list(t, f.st, info, "")[0]
	if x.Attempts != 3 || x.LastStatusCode != 200 || x.ID != hits[0].id {
		t.Errorf("stored %+v", x)
	}
	if got := f.cnt.get(info.ID, "failed_attempts"); got != 2 {
		t.Errorf("failed_attempts counter %d, want 2 (two 503s)", got)
	}
}

func TestReceiverTimesOut(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	release := make(chan struct{})
	var slow atomic.Bool
	slow.Store(true)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	defer close(release)
	info := f.stream(rc.URL)
	d := f.start(testConfig())
	accept(t, d, info, entries(1, 1))
	waitFor(t, "a timed-out attempt", func() bool {
		ds := list(t, f.st, info, store.DeliveryFailed)
		return len(ds) == 1 && strings.HasPrefix(ds[0].LastError, "timeout") && ds[0].LastStatusCode == 0
	})
	slow.Store(false)
	waitFor(t, "delivery once the receiver answers", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 1 })
	if x := list(t, f.st, info, "")[0]; x.Attempts < 2 || x.LastStatusCode != 202 {
		t.Errorf("stored %+v", x)
	}
}

// TestErrorAnswersForAWhileLoseNothing: a receiver that answers 401,
// 404 and 410 for a while (a deploy) gets every message once it answers
// 2xx again: each error answer is a failed attempt, retried.
func TestErrorAnswersForAWhileLoseNothing(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	var down atomic.Bool
	down.Store(true)
	codes := []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusGone}
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(codes[n%len(codes)])
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	info := f.stream(rc.URL)
	d := f.start(testConfig())
	accept(t, d, info, entries(1, 5))
	waitFor(t, "failed attempts retried", func() bool {
		return len(rc.all()) >= 10 && f.cnt.get(info.ID, "failed_attempts") >= 10
	})
	for _, x := range list(t, f.st, info, "") {
		if x.Status == store.DeliveryDeadLettered || x.Status == store.DeliveryDisabled {
			t.Fatalf("delivery %s is %s after error answers: %s", x.ID, x.Status, x.LastError)
		}
	}
	down.Store(false)
	waitFor(t, "every delivery once the receiver answers 2xx", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 5 })
	for _, x := range list(t, f.st, info, "") {
		if x.Attempts < 2 || x.LastStatusCode != 200 {
			t.Errorf("delivery %s: %d attempts, last status %d", x.ID, x.Attempts, x.LastStatusCode)
		}
	}
	if n := f.cnt.get(info.ID, "dead_lettered"); n != 0 {
		t.Errorf("dead_lettered counter %d, want 0", n)
	}
}

// TestAnEndpointDisabledBeforeIsEnabled: an endpoint the store holds
// disabled (an earlier version disabled one that answered 410) is
// enabled again; its deliveries are sent.
func TestAnEndpointDisabledBeforeIsEnabled(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL)
	cfg := testConfig()
	d := f.start(cfg)
	if _, err := f.st.DisableDeliveries(context.Background(), store.Scope{Org: info.Org, Env: info.Env}, info.ID, info.WebhookURL, "HTTP 410", time.Now()); err != nil {
		t.Fatal(err)
	}
	accept(t, d, info, entries(1, 3))
	waitFor(t, "the deliveries of an endpoint disabled before", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 3 })
	if n := countOf(t, f.st, info, store.DeliveryDisabled); n != 0 {
		t.Errorf("%d deliveries still disabled", n)
	}
}

func TestReceiverDownForAWhile(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	addr := rc.Listener.Addr().String()
	info := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[info.ID] }
	rc.Close() // down: connections are refused
	d := f.start(testConfig())
	accept(t, d, info, entries(1, 30))
	waitFor(t, "the circuit to open", func() bool {
		c := d.EndpointState(info.ID)
		return c == webhook.CircuitOpen
	})
	waitFor(t, "connection errors recorded", func() bool {
		got := list(t, f.st, info, store.DeliveryFailed)
		return len(got) > 0 && strings.HasPrefix(got[0].LastError, "connection error")
	})
	// back up on the same address
	newReceiverAt(t, addr, rc)
	waitFor(t, "every delivery after the outage", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 30 })
	seen := map[string]int{}
	for _, h := range rc.all() {
		if h.err != nil {
			t.Errorf("signature: %v", h.err)
		}
		seen[h.id]++
	}
	if len(seen) != 30 {
		t.Errorf("%d distinct deliveries received, want 30", len(seen))
	}
	if c := d.EndpointState(info.ID); c != webhook.CircuitClosed {
		t.Errorf("circuit %s after recovery, want closed", c)
	}
}

// TestErrorAnswersRetryThenDeadLetter: 3xx (redirects are not
// followed), 4xx and 410 answers are retried as a 5xx is, for the retry
// window, then dead-lettered; no answer disables the endpoint.
func TestErrorAnswersRetryThenDeadLetter(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	target := newReceiver(t, nil)
	bad := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnprocessableEntity)
		w.Write([]byte(`{"error":"schema"}`))
	})
	redirect := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	})
	badReq := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	gone := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) })
	s422, s307, s400, s410 := f.stream(bad.URL), f.stream(redirect.URL), f.stream(badReq.URL), f.stream(gone.URL)
	cfg := testConfig()
	cfg.RetryFor = time.Second // room for a first attempt late on a loaded machine, then retries
	d := f.start(cfg)
	all := []hub.StreamInfo{s422, s307, s400, s410}
	for _, s := range all {
		accept(t, d, s, entries(1, 1))
	}
	waitFor(t, "dead letters once retries run out", func() bool {
		for _, s := range all {
			if countOf(t, f.st, s, store.DeliveryDeadLettered) != 1 {
				return false
			}
		}
		return true
	})
	for _, s := range all {
		x := list(t, f.st, s, "")[0]
		if x.Attempts < 2 || !strings.HasPrefix(x.LastError, "retries exhausted") {
			t.Errorf("%d attempts, last error %q: want retries, then exhaustion", x.Attempts, x.LastError)
		}
		if got := f.cnt.get(s.ID, "failed_attempts"); got != int64(x.Attempts) {
			t.Errorf("failed_attempts counter %d, want %d (one per attempt)", got, x.Attempts)
		}
		if got := f.cnt.get(s.ID, "dead_lettered"); got != 1 {
			t.Errorf("dead_lettered counter %d", got)
		}
	}
	if x := list(t, f.st, s422, "")[0]; x.LastStatusCode != 422 || !strings.Contains(x.LastError, "schema") {
		t.Errorf("422 delivery %+v", x)
	}
	if y := list(t, f.st, s307, "")[0]; y.LastStatusCode != 307 || !strings.Contains(y.LastError, "redirect") {
		t.Errorf("307 delivery %+v", y)
	}
	if z := list(t, f.st, s400, "")[0]; z.LastStatusCode != 400 {
		t.Errorf("400 delivery %+v", z)
	}
	if g := list(t, f.st, s410, "")[0]; g.LastStatusCode != 410 {
		t.Errorf("410 delivery %+v", g)
	}
	if n := len(gone.all()); n < 2 {
		t.Errorf("the 410 receiver got %d requests, want the retries too", n)
	}
	// the 410 endpoint still takes and sends what comes next
	accept(t, d, s410, entries(2, 1))
	waitFor(t, "a later message sent to the 410 receiver", func() bool { return countOf(t, f.st, s410, store.DeliveryDeadLettered) == 2 })
	if n := countOf(t, f.st, s410, store.DeliveryDisabled); n != 0 {
		t.Errorf("%d deliveries disabled", n)
	}
	if n := len(target.all()); n != 0 {
		t.Errorf("the redirect was followed: target got %d requests", n)
	}
}

func TestRetryAfterAndExhaustion(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	info := f.stream(rc.URL)
	d := f.start(testConfig())
	before := time.Now()
	accept(t, d, info, entries(1, 1))
	waitFor(t, "a 429", func() bool { return countOf(t, f.st, info, store.DeliveryFailed) == 1 })
	x := list(t, f.st, info, "")[0]
	if x.LastStatusCode != 429 || x.NextAttemptAt.Before(before.Add(29*time.Second)) {
		t.Errorf("after Retry-After: 30, next attempt %v (attempt at about %v)", x.NextAttemptAt, before)
	}

	// a receiver failing for longer than RetryFor dead-letters
	always := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	s2 := f.stream(always.URL)
	cfg := testConfig()
	cfg.RetryFor = time.Second // room for a first attempt late on a loaded machine, then retries
	cfg.BreakerThreshold = 1000
	d2 := f.start(cfg)
	accept(t, d2, s2, entries(1, 1))
	waitFor(t, "retries to run out", func() bool { return countOf(t, f.st, s2, store.DeliveryDeadLettered) == 1 })
	y := list(t, f.st, s2, "")[0]
	if y.Attempts < 2 || !strings.HasPrefix(y.LastError, "retries exhausted") || y.LastStatusCode != 500 {
		t.Errorf("exhausted delivery %+v", y)
	}
}

func TestAcceptIsIdempotent(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL)
	d := f.start(testConfig())
	es := entries(1, 10)
	accept(t, d, info, es)
	accept(t, d, info, es)     // the same entries again (a retried hand-off)
	accept(t, d, info, es[:3]) // and part of them
	waitFor(t, "deliveries", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 10 })
	if n := len(list(t, f.st, info, "")); n != 10 {
		t.Errorf("%d deliveries stored, want 10", n)
	}
	// the same offset with another message (a log that restarted its
	// offsets) is a new delivery, not a duplicate
	other := []hub.Entry{{Offset: 1, Data: []byte(`{"event_id":"after-restart"}`)}}
	accept(t, d, info, other)
	waitFor(t, "the new message at an old offset", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 11 })
	// a duplicate of the first ten, sent before the eleventh, is counted
	if n := len(rc.all()); n != 11 {
		t.Errorf("%d requests, want 11", n)
	}
}

func TestBatches(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL, func(s *hub.StreamInfo) { s.BatchEvents, s.BatchSize, s.MaxWait = true, 5, 80*time.Millisecond })
	rc.secret = func() string { return f.secrt[info.ID] }
	cfg := testConfig()
	cfg.Concurrency = 1
	d := f.start(cfg)
	accept(t, d, info, entries(1, 12))
	waitFor(t, "12 messages", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 12 })
	var sizes []int
	offsets := map[int64]bool{}
	for _, h := range rc.all() {
		if h.err != nil {
			t.Errorf("signature: %v", h.err)
		}
		if !strings.HasPrefix(h.id, "msg_batch_") {
			t.Errorf("batch webhook-id %q", h.id)
		}
		var arr []wrapped
		if err := json.Unmarshal(h.body, &arr); err != nil {
			t.Fatalf("batch body %s: %v", h.body, err)
		}
		sizes = append(sizes, len(arr))
		for _, w := range arr {
			offsets[w.Offset] = true
		}
	}
	if !slices.Equal(sizes, []int{5, 5, 2}) || len(offsets) != 12 {
		t.Errorf("batch sizes %v with %d offsets, want [5 5 2] and 12 (the last one sent after max wait)", sizes, len(offsets))
	}
}

// A batching stream sends an array whatever the count: a lone message,
// and its retry, too, under a batch webhook-id.
func TestBatchOfOneIsAnArray(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError) // the lone one, first time
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	info := f.stream(rc.URL, func(s *hub.StreamInfo) { s.BatchEvents, s.BatchSize, s.MaxWait = true, 3, 50*time.Millisecond })
	rc.secret = func() string { return f.secrt[info.ID] }
	cfg := testConfig()
	cfg.Concurrency = 1
	d := f.start(cfg)
	accept(t, d, info, entries(1, 4))
	waitFor(t, "4 messages", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == 4 })
	hits := rc.all()
	var sizes []int
	for _, h := range hits {
		if h.err != nil {
			t.Errorf("signature: %v", h.err)
		}
		if !strings.HasPrefix(h.id, "msg_batch_") {
			t.Errorf("webhook-id %q of %s, want a batch id", h.id, h.body)
		}
		var arr []wrapped
		if err := json.Unmarshal(h.body, &arr); err != nil {
			t.Fatalf("body %s is not an array: %v", h.body, err)
		}
		sizes = append(sizes, len(arr))
	}
	if !slices.Equal(sizes, []int{3, 1, 1}) {
		t.Fatalf("batch sizes %v, want [3 1 1] (the lone message and its retry)", sizes)
	}
	if hits[1].id != hits[2].id {
		t.Errorf("retry webhook-id %q, first attempt %q", hits[2].id, hits[1].id)
	}
}

func TestPrivateAddressesRefused(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	byName := strings.Replace(rc.URL, "127.0.0.1", "localhost", 1) // resolved at connect time
	s1, s2 := f.stream(rc.URL), f.stream(byName)
	cfg := testConfig()
	cfg.AllowPrivate = false
	d := f.start(cfg)
	accept(t, d, s1, entries(1, 1))
	accept(t, d, s2, entries(1, 1))
	waitFor(t, "refusals", func() bool {
		return countOf(t, f.st, s1, store.DeliveryDeadLettered) == 1 && countOf(t, f.st, s2, store.DeliveryDeadLettered) == 1
	})
	for _, s := range []hub.StreamInfo{s1, s2} {
		if x := list(t, f.st, s, "")[0]; !strings.Contains(x.LastError, "address not allowed") {
			t.Errorf("%s: last_error %q", s.WebhookURL, x.LastError)
		}
	}
	if n := len(rc.all()); n != 0 {
		t.Errorf("the private receiver got %d requests", n)
	}
}

func TestAllowed(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want bool
	}{
		{"93.184.216.34", true}, {"8.8.8.8", true}, {"2606:4700:4700::1111", true}, {"100.63.255.255", true}, {"100.128.0.1", true},
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"::1", false}, {"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false},
		{"192.168.1.1", false}, {"169.254.169.254", false}, {"100.64.0.1", false}, {"100.100.100.200", false}, {"0.0.0.0", false},
		{"::", false}, {"fe80::1", false}, {"fc00::1", false}, {"fd00:ec2::254", false}, {"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false}, {"64:ff9b::a9fe:a9fe", false}, {"2002:7f00:1::", false}, {"224.0.0.1", false},
		{"255.255.255.255", false}, {"192.0.0.192", false}, {"198.18.0.1", false}, {"ff02::1", false},
	} {
		if got := webhook.Allowed(netip.MustParseAddr(c.ip)); got != c.want {
			t.Errorf("Allowed(%s) = %v, want %v", c.ip, got, c.want)
		}
	}
}

// TestDeadNeighbourDoesNotDelay: a receiver that never answers holds
// its own workers only; the healthy stream's deliveries all complete
// while the dead one's requests are still hanging.
func TestDeadNeighbourDoesNotDelay(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	hang := make(chan struct{})
	var hanging atomic.Int32
	dead := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		hanging.Add(1)
		defer hanging.Add(-1)
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	defer close(hang)
	healthy := newReceiver(t, nil)
	sDead, sOK := f.stream(dead.URL), f.stream(healthy.URL)
	cfg := testConfig()
	cfg.Timeout = time.Minute // the dead one holds its workers for the whole test
	d := f.start(cfg)
	accept(t, d, sDead, entries(1, 200))
	waitFor(t, "the dead receiver to hold every worker", func() bool { return hanging.Load() == int32(cfg.Concurrency) })
	for i := int64(0); i < 10; i++ {
		accept(t, d, sOK, entries(1+i*50, 50))
	}
	waitFor(t, "the healthy stream", func() bool { return countOf(t, f.st, sOK, store.DeliveryDelivered) == 500 })
	if hanging.Load() != int32(cfg.Concurrency) || countOf(t, f.st, sDead, store.DeliveryDelivered) != 0 {
		t.Errorf("dead receiver: %d hanging, %d delivered", hanging.Load(), countOf(t, f.st, sDead, store.DeliveryDelivered))
	}
}

func TestUnknownStreamDeadLetters(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	info := f.stream(rc.URL)
	// enqueued by a node that has gone, for a stream since deleted
	if _, err := f.st.EnqueueDeliveries(context.Background(), []store.Delivery{{ID: "msg_orphan", Org: info.Org, Env: info.Env, StreamID: "estr_gone",
		Offset: 1, Payload: []byte(`{}`), NextAttemptAt: time.Now(), QueuedAt: time.Now(), CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	f.start(testConfig())
	gone := hub.StreamInfo{ID: "estr_gone", Org: info.Org, Env: info.Env}
	waitFor(t, "the orphan dead-lettered", func() bool { return countOf(t, f.st, gone, store.DeliveryDeadLettered) == 1 })
	if n := len(rc.all()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

// newReceiverAt serves rc's handler again on addr (a receiver back up).
func newReceiverAt(t *testing.T, addr string, rc *receiver) *http.Server {
	t.Helper()
	var ln net.Listener
	waitFor(t, "listening again on "+addr, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	})
	srv := &http.Server{Handler: http.HandlerFunc(rc.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv
}

// FuzzAllowed: an IPv4 address and its IPv4-mapped IPv6 form are judged
// alike, and nothing in 127/8, 10/8 or 169.254/16 is allowed.
func FuzzAllowed(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{8, 8, 8, 8})
	f.Add([]byte{169, 254, 169, 254})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		mapped := netip.AddrFrom16(v4.As16())
		if webhook.Allowed(v4) != webhook.Allowed(mapped) {
			t.Fatalf("%s and %s judged differently", v4, mapped)
		}
		if (b[0] == 127 || b[0] == 10 || (b[0] == 169 && b[1] == 254)) && webhook.Allowed(v4) {
			t.Fatalf("%s allowed", v4)
		}
	})
}
